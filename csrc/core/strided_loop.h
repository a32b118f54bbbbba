// Visiting every element of a strided tensor, in row-major order, by element offset.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/array_ref.h"

namespace op {

inline int64_t numel_of(IntArrayRef sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

// Bytes of storage a layout needs: elements up to the last one it addresses (from `offset`),
// times the item size. Returns false when that does not fit in int64 (e.g. sizes
// [1 << 40, 1 << 40]), which callers turn into an error instead of a wrapped-around allocation.
// Strides must be non-negative.
inline bool storage_bytes_for(IntArrayRef sizes, IntArrayRef strides, int64_t offset, size_t itemsize,
                              size_t& bytes) {
  int64_t n = 1;
  for (int64_t s : sizes)
    if (__builtin_mul_overflow(n, s, &n)) return false;
  if (n == 0) {
    bytes = 0;
    return true;
  }
  int64_t last = offset;  // the highest element offset the layout touches
  for (size_t d = 0; d < sizes.size(); ++d) {
    int64_t step = 0;
    if (__builtin_mul_overflow(sizes[d] - 1, strides[d], &step) || __builtin_add_overflow(last, step, &last))
      return false;
  }
  int64_t total = 0;
  if (__builtin_add_overflow(last, 1, &last) || __builtin_mul_overflow(last, static_cast<int64_t>(itemsize), &total))
    return false;
  bytes = static_cast<size_t>(total);
  return true;
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

// Walks several operands of the same sizes at once: calls f(offsets) for each element in
// row-major order, where offsets[k] is operand k's element offset (starting at start[k] and
// stepping by strides[k]). Broadcast inputs simply have stride 0. The innermost dimension
// runs as a plain loop.
template <size_t N, class F>
void for_each_offsets(IntArrayRef sizes, const std::array<IntArrayRef, N>& strides, std::array<int64_t, N> start,
                      F&& f) {
  const int64_t n = numel_of(sizes);
  if (n == 0) return;
  if (sizes.empty()) {
    f(start);
    return;
  }
  const size_t nd = sizes.size();
  const int64_t inner = sizes[nd - 1];
  std::array<int64_t, N> inner_stride;
  for (size_t k = 0; k < N; ++k) inner_stride[k] = strides[k][nd - 1];
  std::vector<int64_t> index(nd, 0);  // odometer over the outer dimensions
  for (int64_t row = 0; row < n / inner; ++row) {
    std::array<int64_t, N> o = start;
    for (int64_t i = 0; i < inner; ++i) {
      f(static_cast<const std::array<int64_t, N>&>(o));
      for (size_t k = 0; k < N; ++k) o[k] += inner_stride[k];
    }
    for (size_t d = nd - 1; d-- > 0;) {
      if (++index[d] < sizes[d]) {
        for (size_t k = 0; k < N; ++k) start[k] += strides[k][d];
        break;
      }
      for (size_t k = 0; k < N; ++k) start[k] -= strides[k][d] * (sizes[d] - 1);
      index[d] = 0;
    }
  }
}

}  // namespace op
