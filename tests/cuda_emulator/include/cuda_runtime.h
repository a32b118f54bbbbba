// The CUDA runtime as the emulator (tests/cuda_emulator) offers it: the subset of the runtime
// API and of the device builtins that csrc/native/cuda uses, declared for a host C++ compiler.
// Kernels become ordinary functions that the emulator runs once per thread of each block on
// fibers of one host thread (runtime.cpp); the fake nvcc rewrites `kernel<<<cfg>>>(args)` into
// `::cuda_emulator::Launch(cfg).run(<a lambda calling kernel>, args)`. Device memory is host memory.
#pragma once

#include <math.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <tuple>
#include <utility>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
// One array per kernel instantiation shared by every thread: blocks run one after another.
#define __shared__ static

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

// The running thread's coordinates, set by the emulator before it resumes each fiber.
extern dim3 threadIdx, blockIdx, blockDim, gridDim;

typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;

enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorNoDevice = 100,
  cudaErrorNotReady = 600,
};
typedef cudaError_t cudaError;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16 };

#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventDisableTiming 0x02
#define cudaHostAllocDefault 0x00
#define cudaHostAllocMapped 0x02

extern "C" {
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char* cudaGetErrorString(cudaError_t error);
const char* cudaGetErrorName(cudaError_t error);
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaMalloc(void** pointer, size_t size);
cudaError_t cudaFree(void* pointer);
cudaError_t cudaHostAlloc(void** pointer, size_t size, unsigned flags);
cudaError_t cudaFreeHost(void* pointer);
cudaError_t cudaHostGetDevicePointer(void** device, void* host, unsigned flags);
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaMemset(void* dst, int value, size_t count);
cudaError_t cudaMemsetAsync(void* dst, int value, size_t count, cudaStream_t stream);
cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventDestroy(cudaEvent_t event);
}

namespace cuda_emulator {

// A barrier for the threads of the running block.
void syncthreads();
// Thread t sends `size` bytes from `value` and receives those of thread t ^ lane_mask of its warp.
// Every thread of the block must call it at the same point, as the CUDA loops do.
void exchange_in_warp(const void* value, void* received, size_t size, int lane_mask);
// Runs body() once per thread of each block of `grid` (checked like a real launch: a bad
// configuration becomes cudaGetLastError()'s cudaErrorInvalidConfiguration).
void launch(dim3 grid, dim3 block, void (*body)(void*), void* context);

// kernel<<<grid, block, shared_bytes, stream>>>(args...) as the fake nvcc spells it.
class Launch {
 public:
  Launch(dim3 grid, dim3 block, size_t shared_bytes = 0, cudaStream_t stream = nullptr)
      : grid_(grid), block_(block) {
    (void)shared_bytes;
    (void)stream;  // every launch runs to completion at once, so stream order holds trivially
  }

  // `kernel` calls the kernel with its arguments; each thread's call gets its own copies of
  // the launch's arguments, copied once here as the runtime does.
  template <class Kernel, class... Args>
  void run(Kernel kernel, Args&&... args) {
    auto call = [kernel, params = std::make_tuple(std::decay_t<Args>(std::forward<Args>(args))...)]() {
      std::apply(kernel, params);
    };
    launch(grid_, block_, [](void* context) { (*static_cast<decltype(call)*>(context))(); }, &call);
  }

 private:
  dim3 grid_, block_;
};

}  // namespace cuda_emulator

inline void __syncthreads() { ::cuda_emulator::syncthreads(); }

template <class T>
T __shfl_xor_sync(unsigned mask, T value, int lane_mask, int width = 32) {
  (void)mask;
  (void)width;
  T received;
  ::cuda_emulator::exchange_in_warp(&value, &received, sizeof(T), lane_mask);
  return received;
}

inline unsigned __umulhi(unsigned a, unsigned b) { return static_cast<unsigned>((uint64_t(a) * b) >> 32); }
