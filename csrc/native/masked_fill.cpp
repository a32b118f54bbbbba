// masked_fill: where(mask, value, self), written device-generically through the dispatcher, so
// CPU and CUDA share one kernel (one pass: ReLU's backward runs it on every step);
// masked_fill_ copies that result into self.
#include "ops/copy_ops.h"
#include "ops/masked_fill_native.h"
#include "ops/where.h"

namespace op {

TensorBase& native::masked_fill_(TensorBase& self, const TensorBase& mask, const Scalar& value) {
  OP_CHECK(mask.dtype() == ScalarType::Bool, "masked_fill_ only supports boolean masks, but got mask with dtype ",
           to_string(mask.dtype()));
  ops::copy_::call(self, native::masked_fill(self, mask, value), false);
  return self;
}

TensorBase native::masked_fill(const TensorBase& self, const TensorBase& mask, const Scalar& value) {
  OP_CHECK(mask.dtype() == ScalarType::Bool, "masked_fill only supports boolean masks, but got mask with dtype ",
           to_string(mask.dtype()));
  return op::where(mask, value, self);
}

}  // namespace op
