#include "core/structured_out.h"

#include "core/error.h"
#include "core/host_ops.h"
#include "core/type_promotion.h"

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

}  // namespace op::impl
