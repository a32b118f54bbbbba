#include "autograd/guards.h"

namespace op::autograd {

DispatchKeySet autograd_dispatch_keyset() {
  static const DispatchKeySet keys = runtime_keys_of(DispatchKey::Autograd);
  return keys;
}

DispatchKeySet autograd_dispatch_keyset_with_ad_inplace_or_view() {
  static const DispatchKeySet keys = autograd_dispatch_keyset().add(DispatchKey::ADInplaceOrView);
  return keys;
}

namespace detail {

void append_next_edges(edge_list& edges, const TensorBase& t) { edges.push_back(t.defined() ? gradient_edge(t) : Edge()); }

void append_next_edges(edge_list& edges, const std::optional<TensorBase>& t) {
  edges.push_back(t.has_value() && t->defined() ? gradient_edge(*t) : Edge());
}

void append_next_edges(edge_list& edges, ArrayRef<TensorBase> list) {
  for (const TensorBase& t : list) append_next_edges(edges, t);
}

void append_next_edges(edge_list& edges, ArrayRef<std::optional<TensorBase>> list) {
  for (const std::optional<TensorBase>& t : list) append_next_edges(edges, t);
}

}  // namespace detail

}  // namespace op::autograd
