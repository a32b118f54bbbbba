// CPU entry of copy_: the host copy, used for every pair of host-memory devices (cpu and the
// emulated external ones).
#include "core/host_ops.h"
#include "native/stubs.h"

namespace op::native {

namespace {

void copy_kernel(const TensorBase& dst, const TensorBase& src) { host::copy_(dst, src); }

}  // namespace

OP_REGISTER_STUB(copy_stub, CPU, &copy_kernel);

}  // namespace op::native
