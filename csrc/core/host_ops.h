// Host-side tensor helpers: views, copies and element access that never go through the
// dispatcher. They are free functions, not Tensor members, because the member names (view,
// copy_, to, ...) belong to the generated, dispatched operator methods. Views work on every
// device (they only touch sizes and strides); anything that reads or writes values needs
// host-readable memory (cpu or an emulated external device) and throws op::Error otherwise.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/array_ref.h"
#include "core/device.h"
#include "core/scalar.h"
#include "core/scalar_type.h"
#include "core/tensor.h"

namespace op::host {

// ----- views: share storage with t -----
Tensor as_strided(const Tensor& t, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);
Tensor as_strided(const Tensor& t, IntArrayRef sizes, IntArrayRef strides);  // keeps t's offset
// One size may be -1. Works whenever the new shape can be expressed with strides over t's
// memory (always for contiguous t); otherwise throws and suggests contiguous().
Tensor view(const Tensor& t, IntArrayRef sizes);
// `sizes` with its one -1 (if any) replaced so the shape holds `numel` elements; throws,
// naming `what`, when no such shape exists (view, reshape).
std::vector<int64_t> infer_size(IntArrayRef sizes, int64_t numel, const char* what);
Tensor transpose(const Tensor& t, int64_t dim0, int64_t dim1);
Tensor permute(const Tensor& t, IntArrayRef dims);
Tensor select(const Tensor& t, int64_t dim, int64_t index);
Tensor slice(const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Tensor unsqueeze(const Tensor& t, int64_t dim);
Tensor expand(const Tensor& t, IntArrayRef sizes);  // broadcast: size-1 dims get stride 0

// Strides that let a tensor with (sizes, strides) be viewed as new_sizes without copying,
// or nullopt when some new dimension would span memory that is not evenly strided.
std::optional<std::vector<int64_t>> view_strides(IntArrayRef sizes, IntArrayRef strides, IntArrayRef new_sizes);

// ----- copies: new storage (meta tensors get meta results without data) -----
Tensor contiguous(const Tensor& t);  // t itself when already contiguous
Tensor clone(const Tensor& t);       // always a contiguous copy
Tensor to(const Tensor& t, ScalarType dtype);  // t itself when the dtype matches
Tensor to(const Tensor& t, Device device);     // host-memory devices only (cpu, external)

// Grows or shrinks t in place: every handle to t sees the new sizes and strides (empty
// strides: contiguous). The storage is reallocated when too small, keeping its old bytes;
// views of the same storage see the new memory too.
void resize_(const Tensor& t, IntArrayRef sizes, IntArrayRef strides = {});

// ----- element access on host-memory tensors -----
Scalar item(const Tensor& t);  // exactly one element
template <class T>
T item(const Tensor& t) {
  return item(t).to<T>();
}
const Tensor& fill_(const Tensor& t, const Scalar& value);
// src broadcasts to dst's sizes; any dtypes; src may overlap dst.
const Tensor& copy_(const Tensor& dst, const Tensor& src);
bool equal(const Tensor& a, const Tensor& b);  // same sizes and values

}  // namespace op::host
