// empty.memory_format and empty_strided for CUDA: uninitialised device memory from the CUDA
// allocator (cuda_allocator.cpp). One device: cuda and cuda:0 name it.
#include "core/error.h"
#include "core/memory_format.h"
#include "native/cuda/cuda_context.h"
#include "native/memory_layout.h"
#include "ops/empty_native.h"
#include "ops/empty_strided_native.h"

namespace op {

namespace {

Device cuda_device(const std::optional<Device>& device, const std::optional<Layout>& layout, const char* what) {
  const Device where = device.value_or(Device(DeviceType::CUDA));
  OP_CHECK(where.type() == DeviceType::CUDA, what, " (CUDA kernel): cannot allocate on device ", where.str());
  OP_CHECK(!layout || *layout == Layout::Strided, what, ": only the strided layout is supported");
  cuda::require_device();
  OP_CHECK(where.index() <= 0, what, ": device ", where.str(), " is not supported; this runtime uses cuda:0 only (",
           cuda::device_count(), " device(s) present)");
  return where;
}

}  // namespace

TensorBase native::empty_cuda(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                          std::optional<Device> device, std::optional<bool> pin_memory,
                          std::optional<MemoryFormat> memory_format) {
  (void)pin_memory;  // pinning is for host memory; a device tensor ignores it
  return native::allocate_empty(size, dtype, memory_format, cuda_device(device, layout, "empty"));
}

TensorBase native::empty_strided_cuda(IntArrayRef size, IntArrayRef stride, std::optional<ScalarType> dtype,
                                  std::optional<Layout> layout, std::optional<Device> device,
                                  std::optional<bool> pin_memory) {
  (void)pin_memory;
  return native::allocate_empty_strided(size, stride, dtype, cuda_device(device, layout, "empty_strided"));
}

}  // namespace op
