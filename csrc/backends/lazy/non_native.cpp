#include "backends/lazy/non_native.h"

#include "backends/Lazy/LazyNonNativeIr.h"
#include "backends/Lazy/ops/expand_copy_ir.h"
#include "backends/lazy/metrics.h"
#include "ops/_to_copy_ops.h"
#include "ops/full_ops.h"

namespace op::lazy {

Value expanded_scalar(const ::op::Scalar& value, ScalarType dtype, IntArrayRef sizes) {
  // Never reused: equal values in one step and different ones in the next must give one structure.
  Value constant{std::make_shared<lazy::Scalar>(value, dtype, std::vector<Shape>{Shape{dtype, {}}}), 0};
  count(Counter::IrNodesCreated);
  if (sizes.empty()) return constant;
  return Value{reuse_or_make<ExpandCopy>(constant, sizes.vec(), false, std::vector<Shape>{Shape{dtype, sizes.vec()}}), 0};
}

Value cast(const Value& value, ScalarType dtype) {
  if (value.shape().dtype == dtype) return value;
  return Value{reuse_or_make<Cast>(value, dtype, std::vector<Shape>{Shape{dtype, value.shape().sizes}}), 0};
}

// Lowering: the value as a 0-d cpu tensor of the node's dtype.
std::vector<TensorBase> Scalar::lower(const std::vector<TensorBase>& /*data*/) const {
  return {ops::full::call(IntArrayRef(), value_, type_, std::nullopt, Device(DeviceType::CPU), std::nullopt)};
}

// Lowering: the cpu conversion _to_copy does eagerly.
std::vector<TensorBase> Cast::lower(const std::vector<TensorBase>& data) const {
  return {ops::_to_copy::call(data.at(0), dtype_, std::nullopt, std::nullopt, std::nullopt, false, std::nullopt)};
}

}  // namespace op::lazy
