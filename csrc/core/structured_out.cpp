#include "core/structured_out.h"

#include "core/error.h"
#include "core/host_ops.h"
#include "core/type_promotion.h"
// Through the dispatcher, not host helpers: out= and functional variants run on every device.
#include "ops/clone_ops.h"
#include "ops/copy_ops.h"

namespace op::impl {

TensorBase create_out(IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options) {
  if (strides.empty()) return TensorBase::empty(sizes, options);
  return TensorBase::empty_strided(sizes, strides, options);
}

void check_inplace(const TensorBase& self, IntArrayRef sizes, const TensorOptions& options) {
  OP_CHECK(self.defined(), "in-place operation on an undefined tensor");
  OP_CHECK(self.sizes() == sizes, "output with shape ", str_list(self.sizes()), " doesn't match the broadcast shape ",
           str_list(sizes));
  if (options.dtype)
    OP_CHECK(can_cast(*options.dtype, self.dtype()), "result type ", to_string(*options.dtype),
             " can't be cast to the desired output type ", to_string(self.dtype()), " of the in-place operation");
  if (options.device)
    OP_CHECK(*options.device == self.device(), "in-place operation: the result is on device ", options.device->str(),
             " but the tensor written to is on ", self.device().str());
}

void resize_out(const TensorBase& out, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options) {
  OP_CHECK(out.defined(), "out= tensor is undefined");
  if (options.dtype)
    OP_CHECK(out.dtype() == *options.dtype, "Expected out tensor to have dtype ", to_string(*options.dtype),
             ", but got ", to_string(out.dtype()), " instead");
  if (options.device)
    OP_CHECK(out.device() == *options.device, "Expected out tensor to have device ", options.device->str(),
             ", but got ", out.device().str(), " instead");
  if (out.sizes() != sizes) host::resize_(out, sizes, strides);
}

TensorBase& copy_to_out(TensorBase& out, const TensorBase& result) {
  OP_CHECK(result.defined(), "copy_to_out: the functional kernel returned an undefined tensor");
  resize_out(out, result.sizes(), {}, TensorOptions(result.dtype()).with_device(result.device()));
  if (!out.is_meta()) ops::copy_::call(out, result, /*non_blocking=*/false);
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
