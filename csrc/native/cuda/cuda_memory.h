// The CUDA caching allocator's figures and cache (native/cuda/cuda_allocator.cpp): no CUDA
// headers here, so the Python bindings use it without compiling against CUDA.
#pragma once

#include "core/caching_allocator.h"

namespace op::cuda {

// Zeros until the first CUDA allocation; asking touches no CUDA runtime.
CachingAllocatorStats memory_stats();
// Starts the peak of allocated bytes over from what is allocated now.
void reset_peak_memory_stats();
// Gives every cached segment without a tensor in it back to the device, after synchronizing
// the device; no CUDA call at all when there is none.
void empty_cache();

}  // namespace op::cuda
