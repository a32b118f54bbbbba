// Scalar overloads of pointwise operators (add.Scalar, eq.Scalar, where.ScalarOther, ...) wrap
// the number in a 0-d cpu tensor and call the Tensor overload. The wrapper's dtype makes it
// promote exactly like a Python number would (see wrapped_number_type), and a 0-d cpu tensor
// joins operands on any device.
#pragma once

#include "core/scalar.h"
#include "core/tensor.h"
#include "core/type_promotion.h"

namespace op::native {

// `number` as a 0-d tensor to combine with `partner`.
inline TensorBase wrapped_number(const Scalar& number, const TensorBase& partner) {
  return TensorBase::scalar_tensor(number, TensorOptions(wrapped_number_type(number, partner.dtype())));
}

}  // namespace op::native
