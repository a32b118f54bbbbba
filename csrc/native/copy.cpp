// copy_: the composite in-place copy, broadcasting src into self and converting dtypes.
#include "core/broadcast.h"
#include "core/error.h"
#include "core/host_ops.h"
#include "ops/copy_native.h"

namespace op {

Tensor& native::copy_(Tensor& self, const Tensor& src, bool non_blocking) {
  (void)non_blocking;  // host copies are synchronous
  OP_CHECK(self.defined() && src.defined(), "copy_: undefined tensor");
  OP_CHECK(broadcasts_to(src.sizes(), self.sizes()), "copy_: src of shape ", str_list(src.sizes()),
           " cannot be broadcast to self's shape ", str_list(self.sizes()));
  if (self.is_meta()) return self;  // nothing to write; the shapes were all there was to check
  host::copy_(self, src);
  return self;
}

}  // namespace op
