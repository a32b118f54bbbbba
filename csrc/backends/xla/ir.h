// The XLA sample backend's IR runtime: what its generated full_codegen kernels
// (build/gen/backends/XLA/ops/<g>_XLA.cpp) call to turn arguments into IR and a node into an
// xla tensor, over the shared IR core (backends/support/lazy_ir.h). The sample runs eagerly: its
// tensors always hold data, so a kernel's node has only data and constant operands and is
// lowered as soon as it is made, through the backend's hand-written lowering
// (lower_<kernel>, ir_lowerings.cpp) on cpu views of the operands' bytes. pytorch/xla would
// record the node instead and lower it to XLA HLO later; the generated code is the same.
#pragma once

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "backends/support/lazy_ir.h"
#include "core/tensor.h"

namespace op::xla {

// The xla device of the tensor operands (a 0-d cpu tensor, a wrapped number, may join them).
Device common_device(ArrayRef<TensorBase> tensors);
Device default_device();
// An operand's IR value: a data node over a cpu view of its bytes.
lazy::Value ir_value(const TensorBase& t);
std::optional<lazy::Value> ir_value(const std::optional<TensorBase>& t);
std::vector<lazy::Value> ir_value(ArrayRef<TensorBase> ts);
// Scalar and SymInt operands: constant nodes (op kind prim::Constant) of the value's own dtype.
lazy::Value scalar_operand(const Scalar& value);
std::optional<lazy::Value> scalar_operand(const std::optional<Scalar>& value);
lazy::Value symint_operand(int64_t value);
std::optional<lazy::Value> symint_operand(std::optional<int64_t> value);
// The node made from the kernel's arguments, owned (nothing is reused: each node runs at once).
template <class NodeT, class... Args>
std::shared_ptr<NodeT> reuse_or_make(Args&&... args) {
  return std::make_shared<NodeT>(lazy::detail::owned(std::forward<Args>(args))...);
}
// Lowers the value's node now (counted as an XLA kernel call of its op) and returns its result
// as an xla tensor on `device`.
TensorBase make_tensor(lazy::Value value, Device device);

}  // namespace op::xla
