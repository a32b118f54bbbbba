// What a generated Autograd or ADInplaceOrView kernel (ops/<g>_Autograd.cpp,
// ops/<g>_ADInplaceOrView.cpp) needs around its redispatch: the guards that hide the layers
// above the one it calls, whether to record history (compute_requires_grad) and the next edges
// of its node (collect_next_edges over the differentiable arguments, lists flattened in order).
//
// The tensor-like arguments both accept: TensorBase, std::optional<TensorBase>,
// ArrayRef<TensorBase> / std::vector<TensorBase> (Tensor[]) and ArrayRef<std::optional<TensorBase>>
// (Tensor?[]).
#pragma once

#include <optional>
#include <vector>

#include "autograd/autograd_meta.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "core/array_ref.h"
#include "core/dispatch_key_set.h"
#include "core/tensor.h"
#include "dispatch/local_dispatch_key_set.h"

namespace op::autograd {

// The Autograd<Backend> runtime keys (AutogradCPU, AutogradCUDA, AutogradXLA, AutogradLazy,
// AutogradPrivateUse1), and the same with ADInplaceOrView.
DispatchKeySet autograd_dispatch_keyset();
DispatchKeySet autograd_dispatch_keyset_with_ad_inplace_or_view();

// Excludes every autograd key while it lives: an Autograd kernel redispatches under it, so the
// call goes on to ADInplaceOrView (PyTorch's AutoDispatchBelowAutograd).
struct BelowAutograd {
  BelowAutograd() : guard_(autograd_dispatch_keyset()) {}

 private:
  ExcludeKeyGuard guard_;
};

// Excludes the autograd keys and ADInplaceOrView while it lives: an ADInplaceOrView kernel
// redispatches under it, straight to the layers that compute (PyTorch's
// AutoDispatchBelowADInplaceOrView).
struct BelowADInplaceOrView {
  BelowADInplaceOrView() : guard_(autograd_dispatch_keyset_with_ad_inplace_or_view()) {}

 private:
  ExcludeKeyGuard guard_;
};

namespace detail {

inline bool any_requires_grad(const TensorBase& t) { return t.defined() && requires_grad(t); }
inline bool any_requires_grad(const std::optional<TensorBase>& t) { return t.has_value() && any_requires_grad(*t); }
inline bool any_requires_grad(ArrayRef<TensorBase> list) {
  for (const TensorBase& t : list)
    if (any_requires_grad(t)) return true;
  return false;
}
inline bool any_requires_grad(const std::vector<TensorBase>& list) { return any_requires_grad(ArrayRef<TensorBase>(list)); }
inline bool any_requires_grad(ArrayRef<std::optional<TensorBase>> list) {
  for (const std::optional<TensorBase>& t : list)
    if (any_requires_grad(t)) return true;
  return false;
}

// One edge per tensor (an invalid one for an undefined or absent tensor), lists element by element.
void append_next_edges(edge_list& edges, const TensorBase& t);
void append_next_edges(edge_list& edges, const std::optional<TensorBase>& t);
void append_next_edges(edge_list& edges, ArrayRef<TensorBase> list);
inline void append_next_edges(edge_list& edges, const std::vector<TensorBase>& list) {
  append_next_edges(edges, ArrayRef<TensorBase>(list));
}
void append_next_edges(edge_list& edges, ArrayRef<std::optional<TensorBase>> list);

}  // namespace detail

// Whether the kernel records history: grad mode is on and one of the (differentiable) arguments
// requires grad.
template <class... Ts>
bool compute_requires_grad(const Ts&... args) {
  if (!GradMode::is_enabled()) return false;
  return (detail::any_requires_grad(args) || ...);
}

// The next edges of a node over its differentiable arguments, in order: one per tensor, a list
// one per element, an undefined tensor or nullopt an invalid edge. (A braced list
// `collect_next_edges({a, b})` takes node.h's overload, with the same result.)
template <class... Ts>
edge_list collect_next_edges(const Ts&... args) {
  edge_list edges;
  (detail::append_next_edges(edges, args), ...);
  return edges;
}

}  // namespace op::autograd
