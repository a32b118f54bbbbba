// Device memory for CUDA tensors: the caching allocator (core/caching_allocator.h) over
// cudaMalloc / cudaFree, installed as the CUDA allocator when the library loads. A tensor's
// memory comes from the pool of the calling thread's current stream and goes back to it when
// the tensor dies; cudaFree (which synchronizes the device) runs only when the cache is emptied,
// by empty_cache() or when memory runs out. Nothing touches the CUDA runtime until the first
// allocation, so a CUDA build loads (and runs CPU code) on machines without a GPU.
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "core/allocator.h"
#include "core/caching_allocator.h"
#include "core/error.h"
#include "native/cuda/cuda_check.h"
#include "native/cuda/cuda_context.h"
#include "native/cuda/cuda_memory.h"
#include "native/cuda/cuda_stream.h"

namespace op::cuda {

namespace {

class CudaDeviceMemory final : public DeviceMemoryBackend {
 public:
  void* raw_alloc(size_t nbytes) override {
    void* p = nullptr;
    const cudaError_t status = cudaMalloc(&p, nbytes);
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // not sticky: the allocator empties its cache and tries again
      return nullptr;
    }
    if (status != cudaSuccess) fail_call(status, "cudaMalloc");
    return p;
  }

  void raw_free(void* ptr) noexcept override {
    // At process exit the runtime may already be gone; there is no one to tell then.
    if (cudaFree(ptr) != cudaSuccess) cudaGetLastError();
  }

  // Kernels queued on any stream may still read or write the segments about to go.
  void before_release() override { OP_CUDA_CHECK(cudaDeviceSynchronize()); }

  // record_stream's events only order work: no timing, which makes them cheaper.
  void* record_event(const void* stream) override {
    cudaEvent_t event = nullptr;
    OP_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    const cudaError_t status = cudaEventRecord(event, static_cast<cudaStream_t>(const_cast<void*>(stream)));
    if (status != cudaSuccess) {
      cudaEventDestroy(event);
      fail_call(status, "cudaEventRecord");
    }
    return event;
  }

  bool event_done(void* event) override {
    const cudaError_t status = cudaEventQuery(static_cast<cudaEvent_t>(event));
    if (status == cudaErrorNotReady) {
      cudaGetLastError();  // not an error: the work is still running
      return false;
    }
    OP_CUDA_CHECK(status);
    return true;
  }

  void wait_event(void* event) override { OP_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event))); }

  void destroy_event(void* event) noexcept override {
    if (cudaEventDestroy(static_cast<cudaEvent_t>(event)) != cudaSuccess) cudaGetLastError();
  }
};

// Leaked: tensors in static storage die after any static destructor would have run. Making it
// calls no CUDA function.
CachingAllocator& pool() {
  static CachingAllocator* allocator = new CachingAllocator(std::make_unique<CudaDeviceMemory>(), "CUDA");
  return *allocator;
}

// A deleter: never throws, and calls no CUDA function (the block stays cached) unless
// record_stream marked the block: then it records an event on each marked stream.
void free_block(void* ptr) { pool().free(ptr); }

// OPDISPATCH_CUDA_NO_CACHING=1: every tensor is a cudaMalloc of exactly its bytes, freed when the
// tensor dies, as PyTorch's PYTORCH_NO_CUDA_MEMORY_CACHING does. Slow, but compute-sanitizer then
// sees each tensor's bounds, which a block carved from a cached segment hides. The memory
// figures stay 0 in that mode.
bool caching_disabled() {
  static const bool disabled = [] {
    const char* value = std::getenv("OPDISPATCH_CUDA_NO_CACHING");
    return value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
  }();
  return disabled;
}

void* uncached_alloc(size_t nbytes) {
  void* p = nullptr;
  const cudaError_t status = cudaMalloc(&p, nbytes == 0 ? 1 : nbytes);
  if (status != cudaSuccess) {
    cudaGetLastError();
    fail(str("CUDA out of memory: tried to allocate ", caching::format_bytes(nbytes),
             " (cudaMalloc: ", cudaGetErrorString(status), "; OPDISPATCH_CUDA_NO_CACHING is set)"));
  }
  return p;
}

// A deleter: never throws; at process exit the runtime may already be gone.
void uncached_free(void* ptr) {
  if (cudaFree(ptr) != cudaSuccess) cudaGetLastError();
}

class CudaAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    require_device();  // "no CUDA device is available (...)" rather than a failing cudaMalloc
    if (caching_disabled()) return DataPtr(uncached_alloc(nbytes), &uncached_free);
    return DataPtr(pool().allocate(nbytes, current_stream()), &free_block);
  }

  // Ordered after the kernels that wrote `src` on the current stream; the host does not wait.
  void copy_data(void* dst, const void* src, size_t nbytes) const override {
    OP_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice,
                                  static_cast<cudaStream_t>(current_stream())));
  }
};

const bool installed = [] {
  static CudaAllocator* allocator = new CudaAllocator();  // leaked: outlives static tensors
  set_allocator(DeviceType::CUDA, allocator);
  return true;
}();

}  // namespace

CachingAllocatorStats memory_stats() { return pool().stats(); }

void reset_peak_memory_stats() { pool().reset_peak(); }

void empty_cache() { pool().empty_cache(); }

void record_stream(void* ptr, StreamHandle stream) {
  // Uncached, a tensor's cudaFree waits for the whole device: no later tensor can meet work
  // still queued on `stream`.
  if (caching_disabled()) return;
  // Memory not from the pool (from_blob-like storage) is not the allocator's to hold back.
  pool().record_stream(ptr, stream);
}

}  // namespace op::cuda
