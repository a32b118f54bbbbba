// The CUDA entry of copy_stub: every copy with a CUDA side. dst and src have one shape (src
// already broadcast); dtypes may differ.
//   device -> device: one elementwise kernel converts and follows both layouts (a plain
//                     cudaMemcpy when both are contiguous with one dtype).
//   host -> device:   src made contiguous on the host, cudaMemcpy'd as is, then converted and
//                     laid out on the device.
//   device -> host:   converted to dst's dtype and made contiguous on the device, cudaMemcpy'd
//                     to the host, then laid out there by host::copy_.
// "Host" is any device whose memory the host reads: cpu and the emulated external devices.
#include "core/host_ops.h"
#include "native/cuda/loops.cuh"
#include "native/stubs.h"

namespace op::native {

namespace {

struct Identity {
  template <class T>
  __device__ T operator()(T x) const { return x; }
};

bool is_cuda(const TensorBase& t) { return t.device().type() == DeviceType::CUDA; }

size_t nbytes_of(const TensorBase& t) { return static_cast<size_t>(t.numel()) * t.itemsize(); }

// Contiguous with one dtype: the bytes can move as they are.
bool same_bytes(const TensorBase& dst, const TensorBase& src) {
  return dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous();
}

void device_to_device(const TensorBase& dst, const TensorBase& src) {
  if (dst.data_ptr() == src.data_ptr() && dst.dtype() == src.dtype() && dst.strides() == src.strides()) return;
  // cudaMemcpy must not see overlapping ranges; the kernel buffers those.
  if (same_bytes(dst, src) && !dst.is_alias_of(src)) {
    OP_CUDA_CHECK(cudaMemcpy(dst.data_ptr(), src.data_ptr(), nbytes_of(dst), cudaMemcpyDeviceToDevice));
    return;
  }
  OP_DISPATCH_ALL_TYPES(dst.dtype(), "copy_", {
    cuda::elementwise<scalar_t>(dst.sizes(), dst, std::array<TensorBase, 1>{src}, Identity{});
  });
}

void host_to_device(const TensorBase& dst, const TensorBase& src) {
  src.check_host_data("copy_");
  const TensorBase staged = host::contiguous(src);
  if (same_bytes(dst, staged)) {
    OP_CUDA_CHECK(cudaMemcpy(dst.data_ptr(), staged.data_ptr(), nbytes_of(dst), cudaMemcpyHostToDevice));
    return;
  }
  const TensorBase buffer = TensorBase::empty(src.sizes(), TensorOptions(src.dtype()).with_device(dst.device()));
  OP_CUDA_CHECK(cudaMemcpy(buffer.data_ptr(), staged.data_ptr(), nbytes_of(buffer), cudaMemcpyHostToDevice));
  device_to_device(dst, buffer);
}

void device_to_host(const TensorBase& dst, const TensorBase& src) {
  dst.check_host_data("copy_");
  TensorBase staged = src;
  if (!(src.dtype() == dst.dtype() && src.is_contiguous())) {
    staged = TensorBase::empty(src.sizes(), TensorOptions(dst.dtype()).with_device(src.device()));
    device_to_device(staged, src);
  }
  if (dst.is_contiguous()) {
    OP_CUDA_CHECK(cudaMemcpy(dst.data_ptr(), staged.data_ptr(), nbytes_of(dst), cudaMemcpyDeviceToHost));
    return;
  }
  const TensorBase landing = TensorBase::empty(src.sizes(), TensorOptions(dst.dtype()));
  OP_CUDA_CHECK(cudaMemcpy(landing.data_ptr(), staged.data_ptr(), nbytes_of(landing), cudaMemcpyDeviceToHost));
  host::copy_(dst, landing);
}

void copy_kernel_cuda(const TensorBase& dst, const TensorBase& src) {
  OP_CHECK(dst.sizes() == src.sizes(), "copy_: src of shape ", str_list(src.sizes()), " was not broadcast to dst's shape ",
           str_list(dst.sizes()));
  OP_CHECK(!dst.is_meta() && !src.is_meta(), "copy_: cannot copy between ", src.device().str(), " and ",
           dst.device().str(), " (meta tensors have no data)");
  if (dst.numel() == 0) return;
  if (is_cuda(dst) && is_cuda(src))
    device_to_device(dst, src);
  else if (is_cuda(dst))
    host_to_device(dst, src);
  else if (is_cuda(src))
    device_to_host(dst, src);
  else
    host::copy_(dst, src);  // not a CUDA copy after all: both sides are host memory
}

}  // namespace

OP_REGISTER_STUB(copy_stub, CUDA, &copy_kernel_cuda);

}  // namespace op::native
