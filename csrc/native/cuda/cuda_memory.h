// The CUDA caching allocator's figures and cache (native/cuda/cuda_allocator.cpp): no CUDA
// headers here, so the Python bindings use it without compiling against CUDA.
#pragma once

#include "core/caching_allocator.h"
#include "native/cuda/cuda_stream.h"

namespace op::cuda {

// Zeros until the first CUDA allocation; asking touches no CUDA runtime.
CachingAllocatorStats memory_stats();
// Starts the peak of allocated bytes over from what is allocated now.
void reset_peak_memory_stats();
// Gives every cached segment without a tensor in it back to the device, after synchronizing
// the device; no CUDA call at all when there is none.
void empty_cache();
// Tensor.record_stream: the block at `ptr` (a storage's data) is not reused after its free
// until the work queued on `stream` up to the free has finished. Does nothing for memory that
// is not the pool's, or with OPDISPATCH_CUDA_NO_CACHING set (each free then waits for the device).
void record_stream(void* ptr, StreamHandle stream);

}  // namespace op::cuda
