// Functionalization: the runtime under the generated Functionalize kernels (ops/<g>_Functionalize.cpp).
//
// A functional tensor wraps a plain inner tensor (its value) and carries the Functionalize key.
// Wrappers that alias each other (a base and its views) share one FunctionalStorage, which holds
// the base's value and the ordered updates not yet applied to it. A view wrapper remembers the
// chain of view steps (ViewMeta) from the base: each step's forward recomputes the view from its
// base through the `*_copy` operator, and its reverse writes a new value of the view back into
// the base (the `*_scatter` operators or a view's inverse). A mutation of any alias computes the
// functional result, replaces that alias's value and adds an update to the storage; every other
// alias sees the storage's newer generation and regenerates itself from the base when next
// used (sync). Nothing below the Functionalize key ever sees a view or a mutation.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "dispatch/local_dispatch_key_set.h"

namespace op {

struct ViewMeta {
  std::string name;  // the view operator, "aten::select.int"
  std::function<TensorBase(const TensorBase& base)> forward;
  std::function<TensorBase(const TensorBase& base, const TensorBase& mutated_view)> reverse;
};

class FunctionalStorage {
 public:
  explicit FunctionalStorage(TensorBase base);
  // The base's value with every update applied.
  const TensorBase& base();
  // A new value of the alias reached from the base through `metas` (empty: the base itself).
  void add_update(TensorBase value, std::vector<ViewMeta> metas);
  uint64_t generation() const { return generation_; }
  // Meta memory the wrappers of this storage share: their sizes, strides and offsets are the
  // eager aliases' (so reshape, contiguous and is_alias_of behave as in eager mode), while their
  // values are the plain tensors below.
  const Storage& alias_storage() const { return alias_storage_; }

 private:
  struct Update {
    TensorBase value;
    std::vector<ViewMeta> metas;
  };
  TensorBase base_;
  Storage alias_storage_;
  std::vector<Update> updates_;
  uint64_t generation_ = 0;
};

struct FunctionalTensorState {
  std::shared_ptr<FunctionalStorage> storage;
  TensorBase value;             // a plain tensor: what the layer below sees
  std::vector<ViewMeta> metas;  // view steps from the storage's base to this alias
  uint64_t generation = 0;      // the storage generation `value` reflects
};

namespace functionalization {

// Runs the layer below: the Functionalize key is excluded while it lives.
struct BelowGuard {
  BelowGuard() : guard(DispatchKey::Functionalize) {}
  ExcludeKeyGuard guard;
};

bool is_functional(const TensorBase& t);
// A new functional tensor with its own storage over `value` (a plain tensor).
TensorBase to_functional(const TensorBase& value);
// The synced value of a functional tensor; a plain tensor is returned as it is.
TensorBase from_functional(const TensorBase& t);
// Brings a functional tensor up to date with its storage (a no-op when it is).
void sync(const TensorBase& t);

// Argument unwrapping for generated kernels: synced values, plain tensors unchanged.
TensorBase unwrap(const TensorBase& t);
std::optional<TensorBase> unwrap(const std::optional<TensorBase>& t);
std::vector<TensorBase> unwrap(ArrayRef<TensorBase> ts);
std::vector<std::optional<TensorBase>> unwrap(ArrayRef<std::optional<TensorBase>> ts);
// Results: wrapped into new storages.
TensorBase wrap(const TensorBase& t);
std::vector<TensorBase> wrap(const std::vector<TensorBase>& ts);

bool enabled_on_thread();
// True when any of a kernel's arguments holds a functional tensor.
inline bool holds_functional(const TensorBase& t) { return t.is_functional(); }
inline bool holds_functional(const std::optional<TensorBase>& t) { return t && t->is_functional(); }
inline bool holds_functional(ArrayRef<TensorBase> ts) {
  for (const TensorBase& t : ts)
    if (t.is_functional()) return true;
  return false;
}
inline bool holds_functional(ArrayRef<std::optional<TensorBase>> ts) {
  for (const auto& t : ts)
    if (holds_functional(t)) return true;
  return false;
}
template <class T, std::enable_if_t<!std::is_convertible_v<const T&, ArrayRef<TensorBase>> &&
                                        !std::is_convertible_v<const T&, ArrayRef<std::optional<TensorBase>>> &&
                                        !std::is_convertible_v<const T&, const TensorBase&> &&
                                        !std::is_convertible_v<const T&, const std::optional<TensorBase>&>, int> = 0>
bool holds_functional(const T&) {
  return false;
}
template <class... Args>
bool any_functional(const Args&... args) {
  return (holds_functional(args) || ...);
}

// A meta tensor with functional t's eager metadata: the view kernels run on it to give a new
// view wrapper the sizes, strides and offset the eager view has.
TensorBase layout_of(const TensorBase& t);
// A view of functional `base` whose value is `value`, reached through `meta`; `layout` (the
// view of layout_of(base)) gives its metadata.
TensorBase make_view(const TensorBase& base, TensorBase value, ViewMeta meta, const TensorBase& layout);
// An in-place view of functional `self` (transpose_): its value becomes `value`, one more view
// step, and its metadata `layout`'s (the in-place view run on layout_of(self)).
void replace_view(const TensorBase& self, TensorBase value, ViewMeta meta, const TensorBase& layout);
// A mutation of `target` by operator `op`: its new value is `value`, committed to its storage
// so every alias sees it. Checks that target is functional, that the shape is unchanged for an
// in-place operator (resizable: out= may resize a tensor that is not a view), and casts the
// value to target's dtype.
void commit(const char* op, const TensorBase& target, TensorBase value, bool resizable);

// Calls the layer below issues while a trace is active (functionalization.trace in Python).
void record(const char* name, const char* overload);
void start_trace();
// Calls an operator handle below the key, recording it in the trace.
template <class Handle, class... Args>
decltype(auto) call(Args&&... args) {
  record(Handle::name, Handle::overload_name);
  return Handle::call(std::forward<Args>(args)...);
}
std::vector<std::string> stop_trace();

// The boxed fallback at Functionalize (registered by functionalization.cpp): functional
// operators are unwrapped, called below and their results wrapped; an operator that mutates or
// aliases without a kernel raises an error naming it.

}  // namespace functionalization

// Owned copies of view arguments for a ViewMeta's closures (IntArrayRef points at the caller's memory).
namespace functionalization {
template <class T>
T owned(const T& v) {
  return v;
}
inline std::vector<int64_t> owned(IntArrayRef v) { return v.vec(); }
}  // namespace functionalization

}  // namespace op
