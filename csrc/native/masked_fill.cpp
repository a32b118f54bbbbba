// masked_fill_: self[mask] = value, written device-generically through the dispatcher
// (keep = mask == 0; self = where(keep, self, value)), so CPU and CUDA share one kernel;
// masked_fill is the in-place op on a clone of self broadcast with mask (PyTorch's
// expand_outplace: masked_fill(x, mask) has the shape of x + mask, masked_fill_ self's).
#include <vector>

#include "core/broadcast.h"
#include "ops/clone.h"
#include "ops/copy_ops.h"
#include "ops/eq.h"
#include "ops/expand_ops.h"
#include "ops/masked_fill_native.h"
#include "ops/where.h"

namespace op {

TensorBase& native::masked_fill_(TensorBase& self, const TensorBase& mask, const Scalar& value) {
  OP_CHECK(mask.dtype() == ScalarType::Bool, "masked_fill_ only supports boolean masks, but got mask with dtype ",
           to_string(mask.dtype()));
  TensorBase filled = op::where(op::eq(mask, Scalar(int64_t{0})), self, value);
  ops::copy_::call(self, filled, false);
  return self;
}

TensorBase native::masked_fill(const TensorBase& self, const TensorBase& mask, const Scalar& value) {
  const std::vector<int64_t> shape = broadcast_shapes(self.sizes(), mask.sizes());
  TensorBase result = self.sizes() == IntArrayRef(shape)
                          ? op::clone(self, std::nullopt)
                          : op::clone(ops::expand::call(self, shape, false), MemoryFormat::Contiguous);
  return native::masked_fill_(result, mask, value);
}

}  // namespace op
