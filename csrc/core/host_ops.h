// Host-side tensor helpers: views, copies and element access that never go through the
// dispatcher. They are free functions, not TensorBase members, because the member names (view,
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
TensorBase as_strided(const TensorBase& t, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);
TensorBase as_strided(const TensorBase& t, IntArrayRef sizes, IntArrayRef strides);  // keeps t's offset
// One size may be -1. Works whenever the new shape can be expressed with strides over t's
// memory (always for contiguous t); otherwise throws and suggests contiguous().
TensorBase view(const TensorBase& t, IntArrayRef sizes);
// `sizes` with its one -1 (if any) replaced so the shape holds `numel` elements; throws,
// naming `what`, when no such shape exists (view, reshape).
std::vector<int64_t> infer_size(IntArrayRef sizes, int64_t numel, const char* what);
TensorBase transpose(const TensorBase& t, int64_t dim0, int64_t dim1);
TensorBase permute(const TensorBase& t, IntArrayRef dims);
TensorBase select(const TensorBase& t, int64_t dim, int64_t index);
TensorBase slice(const TensorBase& t, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
TensorBase unsqueeze(const TensorBase& t, int64_t dim);
TensorBase expand(const TensorBase& t, IntArrayRef sizes);  // broadcast: size-1 dims get stride 0

// Strides that let a tensor with (sizes, strides) be viewed as new_sizes without copying,
// or nullopt when some new dimension would span memory that is not evenly strided.
std::optional<std::vector<int64_t>> view_strides(IntArrayRef sizes, IntArrayRef strides, IntArrayRef new_sizes);

// ----- copies: new storage (meta tensors get meta results without data) -----
TensorBase contiguous(const TensorBase& t);  // t itself when already contiguous
TensorBase clone(const TensorBase& t);       // always a contiguous copy
TensorBase to(const TensorBase& t, ScalarType dtype);  // t itself when the dtype matches
TensorBase to(const TensorBase& t, Device device);     // host-memory devices only (cpu, external)

// Grows or shrinks t in place: every handle to t sees the new sizes and strides (empty
// strides: contiguous). The storage is reallocated when too small, keeping its old bytes;
// views of the same storage see the new memory too.
void resize_(const TensorBase& t, IntArrayRef sizes, IntArrayRef strides = {});

// ----- element access on host-memory tensors -----
Scalar item(const TensorBase& t);  // exactly one element
template <class T>
T item(const TensorBase& t) {
  return item(t).to<T>();
}
const TensorBase& fill_(const TensorBase& t, const Scalar& value);
// src broadcasts to dst's sizes; any dtypes; src may overlap dst.
const TensorBase& copy_(const TensorBase& dst, const TensorBase& src);
bool equal(const TensorBase& a, const TensorBase& b);  // same sizes and values

}  // namespace op::host
