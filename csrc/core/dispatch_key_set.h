// A set of runtime dispatch keys as a 64-bit mask; the highest set bit is the key a call
// dispatches to, so choosing a kernel is a count-leading-zeros and a table index.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/dispatch_key.h"

namespace op {

[[noreturn]] void throw_not_runtime_key(DispatchKey k);

class DispatchKeySet {
 public:
  constexpr DispatchKeySet() = default;
  // Alias keys are not runtime keys; use runtime_keys_of(alias) to expand them.
  explicit DispatchKeySet(DispatchKey k) : bits_(bit(k)) {}
  static constexpr DispatchKeySet from_raw(uint64_t bits) { return DispatchKeySet(bits, 0); }

  constexpr uint64_t raw() const { return bits_; }
  constexpr bool empty() const { return bits_ == 0; }
  bool has(DispatchKey k) const { return (bits_ & bit(k)) != 0; }
  DispatchKeySet add(DispatchKey k) const { return from_raw(bits_ | bit(k)); }
  DispatchKeySet remove(DispatchKey k) const { return from_raw(bits_ & ~bit(k)); }

  constexpr DispatchKeySet operator|(DispatchKeySet o) const { return from_raw(bits_ | o.bits_); }
  constexpr DispatchKeySet operator&(DispatchKeySet o) const { return from_raw(bits_ & o.bits_); }
  constexpr DispatchKeySet operator-(DispatchKeySet o) const { return from_raw(bits_ & ~o.bits_); }
  constexpr bool operator==(DispatchKeySet o) const { return bits_ == o.bits_; }
  constexpr bool operator!=(DispatchKeySet o) const { return bits_ != o.bits_; }

  // The highest-priority key, or Undefined for the empty set.
  DispatchKey highest() const {
    return bits_ == 0 ? DispatchKey::Undefined : key_at(63 - __builtin_clzll(bits_));
  }
  // Keys strictly below k: what a kernel at k redispatches to.
  DispatchKeySet below(DispatchKey k) const { return from_raw(bits_ & ((uint64_t{1} << index_of(k)) - 1)); }
  DispatchKeySet at_or_below(DispatchKey k) const {
    return from_raw(bits_ & ((uint64_t{2} << index_of(k)) - 1));
  }
  DispatchKeySet without_highest() const { return below(highest()); }

  std::vector<DispatchKey> keys_high_to_low() const;
  std::string to_string() const;  // "{AutogradCPU, ADInplaceOrView, BackendSelect, CPU}", high to low

 private:
  constexpr DispatchKeySet(uint64_t bits, int) : bits_(bits) {}
  static uint64_t bit(DispatchKey k);
  uint64_t bits_ = 0;
};

inline uint64_t DispatchKeySet::bit(DispatchKey k) {
  // Undefined maps to the empty set; alias keys are a programming error.
  if (k == DispatchKey::Undefined) return 0;
  if (!is_runtime_key(k)) throw_not_runtime_key(k);
  return uint64_t{1} << index_of(k);
}

// Keys every call includes: BackendSelect, so factory functions (no tensor arguments)
// still reach a kernel that can pick their backend.
inline DispatchKeySet global_include_set() { return DispatchKeySet(DispatchKey::BackendSelect); }

// The runtime keys an alias key fills: Autograd -> the Autograd<Backend> keys,
// CompositeExplicitAutograd -> backends, CompositeImplicitAutograd -> backends + autograd keys,
// CompositeExplicitAutogradNonFunctional -> backends but XLA and Lazy (they functionalize).
// A runtime key maps to itself.
DispatchKeySet runtime_keys_of(DispatchKey k);

// Keys that pass through when nothing is registered for them (like PyTorch's built-in
// fallthrough fallbacks): the autograd keys, ADInplaceOrView and BackendSelect. Every other key with nothing
// registered is an error when a call reaches it.
DispatchKeySet default_fallthrough_keys();

}  // namespace op
