// view (the CPU and Meta kernel: a new TensorImpl over self's storage, no data touched) and
// the composite view_copy (the same shape as a fresh contiguous tensor).
#include "core/host_ops.h"
#include "ops/view_copy_native.h"
#include "ops/view_native.h"

namespace op {

Tensor native::view(const Tensor& self, IntArrayRef size) { return host::view(self, size); }

Tensor native::view_copy(const Tensor& self, IntArrayRef size) {
  // Copy first: a contiguous copy can take any shape with the same number of elements, so
  // view_copy also works where view would need incompatible strides.
  return host::view(host::clone(self), size);
}

}  // namespace op
