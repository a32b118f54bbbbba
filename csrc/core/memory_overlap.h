// Whether a tensor written to has elements that share a memory location (PyTorch's
// MemoryOverlap): an expanded view (stride 0 over a dimension of size > 1) does, and an in-place
// or out= kernel writing through it would write each location several times with results that
// depend on the order. Kernels that write call assert_no_internal_overlap on the host before
// their loop or launch; fill_ and zero_ do not (every write stores the same value).
#pragma once

#include <cstddef>

#include "core/error.h"
#include "core/tensor.h"

namespace op {

// Yes: a stride-0 dimension of size > 1. Other overlaps (as_strided windows) are too hard to
// tell from the strides cheaply and, as in PyTorch, pass.
enum class MemOverlap { No, Yes, TooHard };

inline MemOverlap has_internal_overlap(const TensorBase& t) {
  if (t.is_contiguous()) return MemOverlap::No;
  const IntArrayRef sizes = t.sizes();
  const IntArrayRef strides = t.strides();
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] > 1 && strides[d] == 0) return MemOverlap::Yes;
  return MemOverlap::TooHard;
}

inline void assert_no_internal_overlap(const TensorBase& t) {
  OP_CHECK(has_internal_overlap(t) != MemOverlap::Yes,
           "unsupported operation: more than one element of the written-to tensor refers to a single memory "
           "location. Please clone() the tensor before performing the operation.");
}

}  // namespace op
