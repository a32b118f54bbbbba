// Visiting every element of a strided tensor, in row-major order, by element offset.
#pragma once

#include <cstdint>
#include <vector>

#include "core/array_ref.h"

namespace op {

inline int64_t numel_of(IntArrayRef sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

inline std::vector<int64_t> contiguous_strides(IntArrayRef sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * (sizes[d] > 1 ? sizes[d] : 1);
  return strides;
}

// Calls f(offset) for each element, offset in elements from the start of the storage.
template <class F>
void for_each_offset(IntArrayRef sizes, IntArrayRef strides, int64_t offset, F&& f) {
  const int64_t n = numel_of(sizes);
  if (n == 0) return;
  const size_t nd = sizes.size();
  std::vector<int64_t> index(nd, 0);
  for (int64_t i = 0; i < n; ++i) {
    f(offset);
    for (size_t d = nd; d-- > 0;) {  // odometer step, last dimension fastest
      if (++index[d] < sizes[d]) {
        offset += strides[d];
        break;
      }
      offset -= strides[d] * (sizes[d] - 1);
      index[d] = 0;
    }
  }
}

}  // namespace op
