// Dispatch keys: the layers a call passes through, in priority order.
#pragma once

#include <cstdint>
#include <string>

namespace op {

// Runtime keys are numbered from lowest to highest priority; the number is the key's bit
// in a DispatchKeySet, so "highest priority" is "highest set bit". Autograd sits above
// BackendSelect (a factory function's autograd layer, if any, runs before the backend is
// chosen) and BackendSelect above the backends, as in PyTorch. Among backends Meta ranks
// highest, so a call mixing meta and real tensors computes shapes instead of touching data.
// Functionalize sits between BackendSelect and the autograd keys, as in PyTorch: autograd (and
// CompositeImplicitAutograd decompositions) run above it, and the backends see only what the
// functionalization layer hands them. ADInplaceOrView sits just below the autograd keys, as in
// PyTorch: the generated kernels there record views (as_view) and bump the version counter of
// in-place outputs, below Autograd's history and above everything that computes.
enum class DispatchKey : uint8_t {
  Undefined = 0,
  // backends
  CPU,
  CUDA,
  XLA,
  Lazy,
  PrivateUse1,
  Meta,
  // functionality
  BackendSelect,
  Functionalize,
  ADInplaceOrView,
  AutogradCPU,
  AutogradCUDA,
  AutogradXLA,
  AutogradLazy,
  AutogradPrivateUse1,
  // alias keys: registration-time names for groups of runtime keys, never in a key set
  Autograd,
  CompositeExplicitAutograd,
  CompositeImplicitAutograd,
  // Backends except those running under functionalization (XLA, Lazy): decompositions that
  // mutate or alias, and the default-backend wrappers of structured operators.
  CompositeExplicitAutogradNonFunctional,
};

constexpr int kFirstRuntimeKey = static_cast<int>(DispatchKey::CPU);
constexpr int kLastRuntimeKey = static_cast<int>(DispatchKey::AutogradPrivateUse1);
constexpr int kFirstAliasKey = static_cast<int>(DispatchKey::Autograd);
constexpr int kNumDispatchKeys = static_cast<int>(DispatchKey::CompositeExplicitAutogradNonFunctional) + 1;
// Table slots: one per runtime key plus slot 0 (Undefined) for "no key at all".
constexpr int kDispatchTableSize = kLastRuntimeKey + 1;

constexpr int index_of(DispatchKey k) { return static_cast<int>(k); }
constexpr DispatchKey key_at(int i) { return static_cast<DispatchKey>(i); }

constexpr bool is_runtime_key(DispatchKey k) {
  return index_of(k) >= kFirstRuntimeKey && index_of(k) <= kLastRuntimeKey;
}
constexpr bool is_alias_key(DispatchKey k) {
  return index_of(k) >= kFirstAliasKey && index_of(k) < kNumDispatchKeys;
}
constexpr bool is_backend_key(DispatchKey k) {
  return index_of(k) >= index_of(DispatchKey::CPU) && index_of(k) <= index_of(DispatchKey::Meta);
}
constexpr bool is_autograd_key(DispatchKey k) {
  return index_of(k) >= index_of(DispatchKey::AutogradCPU) &&
         index_of(k) <= index_of(DispatchKey::AutogradPrivateUse1);
}

// AutogradCPU for CPU, ...; Undefined for backends without an autograd layer (Meta).
DispatchKey autograd_key_for(DispatchKey backend);
// CPU for AutogradCPU, ...; Undefined otherwise.
DispatchKey backend_key_for(DispatchKey autograd);

const char* to_string(DispatchKey k);
// Parses a key name ("CPU", "CompositeImplicitAutograd"); throws op::Error listing valid names.
DispatchKey parse_dispatch_key(const std::string& name);

}  // namespace op
