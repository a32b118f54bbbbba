// The lazy backend's IR, as the generated code uses it (build/gen/backends/Lazy/ops/<g>_ir.h
// and <g>_Lazy.cpp): the shared IR core (backends/support/lazy_ir.h: nodes, values, shapes, op
// kinds) and, in op::lazy, the helpers a generated kernel calls to turn its arguments into IR
// and its node into a lazy tensor.
//
// Lazy tensors hold a Value (pending) or data (lazy_tensor.h); mark_step() lowers the pending
// graph (graph.h).
#pragma once

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "backends/support/lazy_ir.h"
#include "core/tensor.h"

namespace op::lazy {

// ----- what a generated kernel does with its arguments and results -----

// The lazy device of the tensor operands (0-d cpu tensors, wrapped numbers, may join them);
// op::Error when a tensor is elsewhere.
Device common_device(ArrayRef<TensorBase> tensors);
Device default_device();
// The IR value of an operand: a lazy tensor's pending value, or a data node over its data
// (or over a 0-d cpu tensor).
Value ir_value(const TensorBase& t);
std::optional<Value> ir_value(const std::optional<TensorBase>& t);
std::vector<Value> ir_value(ArrayRef<TensorBase> ts);
// A Scalar or SymInt operand: a constant node (non-native `scalar`, of the value's own dtype),
// never reused, whose value is not part of the graph's structure, so one graph serves every
// value (a learning rate, a step count).
Value scalar_operand(const ::op::Scalar& value);
std::optional<Value> scalar_operand(const std::optional<::op::Scalar>& value);
Value symint_operand(int64_t value);
std::optional<Value> symint_operand(std::optional<int64_t> value);
// A lazy tensor over `value` (not yet wrapped by functionalization: kernels run below it).
TensorBase make_tensor(Value value, Device device);

// ----- node reuse -----
// A node made again with the same operands and attributes since the last mark_step() is the
// node made before, so a program that computes one thing twice records it once.

// Called by mark_step(): nodes made before it are not reused after it.
void forget_reusable_nodes();

namespace detail {
uint64_t reuse_key(const char* op, const std::vector<Value>& operands);
std::shared_ptr<Node> find_reusable(uint64_t key);
void remember(uint64_t key, const std::shared_ptr<Node>& node);
void count_reused();
void count_created();

template <class NodeT, class Tuple, size_t... I>
bool reusable(const NodeT& node, const Tuple& args, std::index_sequence<I...>) {
  return node.can_be_reused(std::get<I>(args)...);
}

template <class NodeT, class... Args>
std::shared_ptr<NodeT> reuse_or_make_owned(Args&&... args) {
  auto tuple = std::forward_as_tuple(args...);
  const uint64_t key = std::apply([](const auto&... a) { return reuse_key(NodeT::kOp, operands_of(a...)); }, tuple);
  if (std::shared_ptr<Node> found = find_reusable(key)) {
    if (auto same = std::dynamic_pointer_cast<NodeT>(found);
        same && reusable(*same, tuple, std::make_index_sequence<sizeof...(Args) - 1>())) {
      count_reused();
      return same;
    }
  }
  auto node = std::make_shared<NodeT>(std::forward<Args>(args)...);
  count_created();
  remember(key, node);
  return node;
}
}  // namespace detail

// NodeT(args...) unless an equal node is still remembered; the last argument is the shapes.
template <class NodeT, class... Args>
std::shared_ptr<NodeT> reuse_or_make(Args&&... args) {
  static_assert(sizeof...(Args) >= 1, "reuse_or_make: the node's arguments end with its shapes");
  return detail::reuse_or_make_owned<NodeT>(detail::owned(std::forward<Args>(args))...);
}

}  // namespace op::lazy
