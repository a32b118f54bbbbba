// CPU loop of fill_: one value (already checked to fit the dtype) into every element.
#include <algorithm>

#include "core/strided_loop.h"
#include "native/stubs.h"

namespace op::native {

namespace {

void fill_kernel(const TensorBase& self, const Scalar& value) {
  self.check_host_data("fill_");
  OP_DISPATCH_ALL_TYPES(self.dtype(), "fill_", {
    const scalar_t v = value.to<scalar_t>();
    scalar_t* base = static_cast<scalar_t*>(self.storage().data());
    if (self.is_contiguous()) {
      std::fill_n(base + self.storage_offset(), self.numel(), v);
    } else {
      for_each_offset(self.sizes(), self.strides(), self.storage_offset(), [&](int64_t o) { base[o] = v; });
    }
  });
}

}  // namespace

OP_REGISTER_STUB(fill_stub, CPU, &fill_kernel);

}  // namespace op::native
