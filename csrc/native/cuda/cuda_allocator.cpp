// Device memory for CUDA tensors: cudaMalloc / cudaFree on the current device, installed as
// the CUDA allocator when the library loads. Nothing touches the CUDA runtime until the
// first allocation, so a CUDA build loads (and runs CPU code) on machines without a GPU.
#include <cuda_runtime_api.h>

#include "core/allocator.h"
#include "core/error.h"
#include "native/cuda/cuda_check.h"
#include "native/cuda/cuda_context.h"

namespace op::cuda {

namespace {

class CudaAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    require_device();
    void* p = nullptr;
    // At least one byte: an empty tensor still gets a real (non-null) device address.
    const cudaError_t status = cudaMalloc(&p, nbytes == 0 ? 1 : nbytes);
    if (status != cudaSuccess) {
      cudaGetLastError();
      fail(str("CUDA: cannot allocate ", nbytes, " bytes of device memory (cudaMalloc: ", cudaGetErrorString(status),
               ")"));
    }
    // A destructor must not throw; at process exit the runtime may already be gone.
    return DataPtr(p, [](void* q) { cudaFree(q); });
  }

  void copy_data(void* dst, const void* src, size_t nbytes) const override {
    OP_CUDA_CHECK(cudaMemcpy(dst, src, nbytes, cudaMemcpyDeviceToDevice));
  }
};

const bool installed = [] {
  static CudaAllocator* allocator = new CudaAllocator();  // leaked: outlives static tensors
  set_allocator(DeviceType::CUDA, allocator);
  return true;
}();

}  // namespace

}  // namespace op::cuda
