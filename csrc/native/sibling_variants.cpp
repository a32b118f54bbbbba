#include "native/sibling_variants.h"

#include "core/error.h"
#include "core/structured_out.h"
// Through the dispatcher, not host helpers: out= and functional variants run on every device.
#include "ops/clone_ops.h"
#include "ops/copy_ops.h"

namespace op::impl {

TensorBase& copy_to_out(TensorBase& out, const TensorBase& result) {
  OP_CHECK(result.defined(), "copy_to_out: the functional kernel returned an undefined tensor");
  resize_out(out, result.sizes(), {}, TensorOptions(result.dtype()).with_device(result.device()));
  if (!out.is_meta()) ops::copy_::call(out, result, /*non_blocking=*/false);
  return out;
}

const TensorBase& copy_to_out(const TensorBase& out, const TensorBase& result) {
  TensorBase same = out;  // another handle on the same tensor
  copy_to_out(same, result);
  return out;
}

TensorBase& copy_to_self(TensorBase& self, const TensorBase& result) {
  OP_CHECK(result.defined(), "copy_to_self: the functional kernel returned an undefined tensor");
  check_inplace(self, result.sizes(), TensorOptions(result.dtype()).with_device(result.device()));
  if (!self.is_meta()) ops::copy_::call(self, result, /*non_blocking=*/false);
  return self;
}

TensorBase clone_for_functional(const TensorBase& self) { return ops::clone::call(self, std::nullopt); }

}  // namespace op::impl
