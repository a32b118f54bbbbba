// copy_: the composite in-place copy, broadcasting src into self and converting dtypes. The
// loop is a dispatch stub: the CPU entry serves every pair of host-memory devices, the CUDA
// entry every copy with a CUDA side (to, from or within the GPU).
#include "core/broadcast.h"
#include "core/error.h"
#include "core/host_ops.h"
#include "core/memory_overlap.h"
#include "native/stubs.h"
#include "ops/copy_native.h"

namespace op {

namespace {

bool same_elements(const TensorBase& a, const TensorBase& b) {
  return a.is_alias_of(b) && a.storage_offset() == b.storage_offset() && a.sizes() == b.sizes() &&
         a.strides() == b.strides() && a.dtype() == b.dtype();
}

}  // namespace

TensorBase& native::copy_(TensorBase& self, const TensorBase& src, bool non_blocking) {
  (void)non_blocking;  // the copies here are synchronous
  OP_CHECK(self.defined() && src.defined(), "copy_: undefined tensor");
  OP_CHECK(broadcasts_to(src.sizes(), self.sizes()), "copy_: src of shape ", str_list(src.sizes()),
           " cannot be broadcast to self's shape ", str_list(self.sizes()));
  if (self.is_meta()) return self;  // nothing to write; the shapes were all there was to check
  OP_CHECK(!src.is_meta(), "copy_: cannot copy out of a meta tensor; it has no data");
  if (self.numel() == 0 || same_elements(self, src)) return self;
  assert_no_internal_overlap(self);  // before the stub: the CUDA copy would race on shared locations
  const TensorBase from = src.sizes() == self.sizes() ? src : host::expand(src, self.sizes());
  const bool on_cuda = self.device().type() == DeviceType::CUDA || src.device().type() == DeviceType::CUDA;
  copy_stub(on_cuda ? DeviceType::CUDA : DeviceType::CPU, self, from);
  return self;
}

}  // namespace op
