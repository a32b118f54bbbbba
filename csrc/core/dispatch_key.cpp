#include "core/dispatch_key.h"

#include "core/dispatch_key_set.h"
#include "core/error.h"

namespace op {

namespace {
const char* const kNames[kNumDispatchKeys] = {
    "Undefined",   "CPU",         "CUDA",         "XLA",          "Lazy",
    "PrivateUse1", "Meta",        "BackendSelect", "Functionalize", "ADInplaceOrView", "AutogradCPU", "AutogradCUDA",
    "AutogradXLA", "AutogradLazy", "AutogradPrivateUse1", "Autograd", "CompositeExplicitAutograd",
    "CompositeImplicitAutograd", "CompositeExplicitAutogradNonFunctional",
};
}  // namespace

const char* to_string(DispatchKey k) {
  int i = index_of(k);
  return i >= 0 && i < kNumDispatchKeys ? kNames[i] : "<invalid dispatch key>";
}

DispatchKey parse_dispatch_key(const std::string& name) {
  for (int i = 1; i < kNumDispatchKeys; ++i)
    if (name == kNames[i]) return key_at(i);
  std::string valid;
  for (int i = 1; i < kNumDispatchKeys; ++i) valid += str(i > 1 ? ", " : "", kNames[i]);
  fail(str("unknown dispatch key '", name, "'; valid keys: ", valid));
}

DispatchKey autograd_key_for(DispatchKey backend) {
  switch (backend) {
    case DispatchKey::CPU: return DispatchKey::AutogradCPU;
    case DispatchKey::CUDA: return DispatchKey::AutogradCUDA;
    case DispatchKey::XLA: return DispatchKey::AutogradXLA;
    case DispatchKey::Lazy: return DispatchKey::AutogradLazy;
    case DispatchKey::PrivateUse1: return DispatchKey::AutogradPrivateUse1;
    default: return DispatchKey::Undefined;
  }
}

DispatchKey backend_key_for(DispatchKey autograd) {
  for (int i = kFirstRuntimeKey; i <= kLastRuntimeKey; ++i)
    if (is_backend_key(key_at(i)) && autograd_key_for(key_at(i)) == autograd) return key_at(i);
  return DispatchKey::Undefined;
}

void throw_not_runtime_key(DispatchKey k) {
  fail(str("dispatch key ", to_string(k), " is not a runtime key and cannot be in a DispatchKeySet"));
}

std::vector<DispatchKey> DispatchKeySet::keys_high_to_low() const {
  std::vector<DispatchKey> keys;
  for (int i = kLastRuntimeKey; i >= kFirstRuntimeKey; --i)
    if (bits_ & (uint64_t{1} << i)) keys.push_back(key_at(i));
  return keys;
}

std::string DispatchKeySet::to_string() const {
  std::string out = "{";
  for (DispatchKey k : keys_high_to_low()) out += str(out.size() > 1 ? ", " : "", op::to_string(k));
  return out + "}";
}

namespace {
DispatchKeySet range(DispatchKey lo, DispatchKey hi) {
  DispatchKeySet s;
  for (int i = index_of(lo); i <= index_of(hi); ++i) s = s.add(key_at(i));
  return s;
}
}  // namespace

DispatchKeySet runtime_keys_of(DispatchKey k) {
  const DispatchKeySet backends = range(DispatchKey::CPU, DispatchKey::Meta);
  const DispatchKeySet autograd = range(DispatchKey::AutogradCPU, DispatchKey::AutogradPrivateUse1);
  switch (k) {
    case DispatchKey::Autograd: return autograd;
    case DispatchKey::CompositeExplicitAutograd: return backends;
    // Functionalize too: a decomposition runs above the functionalization layer, so its views
    // and mutations reach the layer's kernels one by one.
    case DispatchKey::CompositeImplicitAutograd: return backends | autograd | DispatchKeySet(DispatchKey::Functionalize);
    // Backends that functionalize never see a kernel that mutates or aliases behind its back.
    case DispatchKey::CompositeExplicitAutogradNonFunctional:
      return backends - DispatchKeySet(DispatchKey::XLA) - DispatchKeySet(DispatchKey::Lazy);
    default: return is_runtime_key(k) ? DispatchKeySet(k) : DispatchKeySet();
  }
}

DispatchKeySet default_fallthrough_keys() {
  return runtime_keys_of(DispatchKey::Autograd).add(DispatchKey::ADInplaceOrView).add(DispatchKey::BackendSelect);
}

}  // namespace op
