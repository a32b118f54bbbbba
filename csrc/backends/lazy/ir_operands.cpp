// The helpers generated kernels call on their arguments and results (declared in ir.h).
#include "backends/Lazy/LazyNonNativeIr.h"
#include "backends/lazy/data_node.h"
#include "backends/lazy/ir.h"
#include "backends/lazy/lazy_tensor.h"
#include "backends/lazy/metrics.h"
#include "core/error.h"

namespace op::lazy {

namespace {

bool is_cpu_scalar(const TensorBase& t) { return t.dim() == 0 && t.device().is_cpu() && !t.is_functional(); }

}  // namespace

Device default_device() { return lazy_device(); }

Device common_device(ArrayRef<TensorBase> tensors) {
  std::optional<Device> device;
  for (const TensorBase& t : tensors) {
    if (!t.defined() || is_cpu_scalar(t)) continue;
    OP_CHECK(t.device().type() == lazy_device_type(), "lazy: expected all tensors on the lazy device, but found one on ",
             t.device().str());
    if (!device) device = t.device();
    OP_CHECK(t.device() == *device, "lazy: expected all tensors on the same device, but found tensors on ",
             device->str(), " and on ", t.device().str());
  }
  return device.value_or(default_device());
}

Value ir_value(const TensorBase& t) {
  OP_CHECK(t.defined(), "lazy: an undefined tensor cannot be an IR operand");
  if (is_cpu_scalar(t)) return Value{std::make_shared<DeviceData>(t), 0};
  LazyTensorState& state = state_of(t, "lazy IR operand");
  if (state.ir.defined()) return state.ir;
  if (!state.data_leaf.defined()) state.data_leaf = Value{std::make_shared<DeviceData>(state.data), 0};
  return state.data_leaf;
}

std::optional<Value> ir_value(const std::optional<TensorBase>& t) {
  if (!t || !t->defined()) return std::nullopt;
  return ir_value(*t);
}

Value scalar_operand(const ::op::Scalar& value) {
  const ScalarType dtype = value.type();
  count(Counter::IrNodesCreated);
  return Value{std::make_shared<lazy::Scalar>(value, dtype, std::vector<Shape>{Shape{dtype, {}}}), 0};
}

std::optional<Value> scalar_operand(const std::optional<::op::Scalar>& value) {
  if (!value) return std::nullopt;
  return scalar_operand(*value);
}

Value symint_operand(int64_t value) { return scalar_operand(::op::Scalar(value)); }

std::optional<Value> symint_operand(std::optional<int64_t> value) {
  if (!value) return std::nullopt;
  return symint_operand(*value);
}

std::vector<Value> ir_value(ArrayRef<TensorBase> ts) {
  std::vector<Value> out;
  out.reserve(ts.size());
  for (const TensorBase& t : ts) out.push_back(ir_value(t));
  return out;
}

}  // namespace op::lazy
