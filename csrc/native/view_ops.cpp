// Views: a new TensorImpl over self's storage with other sizes, strides or offset; no data is
// touched, so every device shares these kernels. reshape and contiguous copy only when the
// strides leave no choice.
#include <algorithm>
#include <limits>
#include <vector>

#include "core/error.h"
#include "core/host_ops.h"
#include "native/memory_layout.h"
#include "ops/as_strided_native.h"
#include "ops/clone.h"
#include "ops/contiguous_native.h"
#include "ops/expand_native.h"
#include "ops/permute_native.h"
#include "ops/reshape_native.h"
#include "ops/select_native.h"
#include "ops/slice_native.h"
#include "ops/squeeze_native.h"
#include "ops/t_native.h"
#include "ops/transpose_native.h"
#include "ops/unsqueeze_native.h"
#include "ops/view.h"
#include "ops/view_native.h"

namespace op {

namespace {

// dim in [-n, n) -> [0, n), or an error naming the operator. A 0-d tensor accepts 0 and -1,
// as if it were 1-d (squeeze(x, 0) and transpose(x, 0, -1) are no-ops on it).
int64_t wrap_dim(const TensorBase& self, int64_t dim, const char* what) {
  const int64_t n = std::max<int64_t>(self.dim(), 1);
  OP_CHECK(dim >= -n && dim < n, what, ": dimension ", dim, " is out of range for a ", self.dim(),
           "-d tensor (expected a dimension in [", -n, ", ", n - 1, "])");
  return dim < 0 ? dim + n : dim;
}

// A view with self's own metadata: what a no-op view returns (still a new tensor handle).
TensorBase alias(const TensorBase& self) { return host::as_strided(self, self.sizes(), self.strides()); }

TensorBase drop_dims(const TensorBase& self, const std::vector<bool>& drop) {
  std::vector<int64_t> sizes, strides;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (drop[d]) continue;
    sizes.push_back(self.size(d));
    strides.push_back(self.stride(d));
  }
  return host::as_strided(self, sizes, strides);
}

}  // namespace

TensorBase native::view(const TensorBase& self, IntArrayRef size) { return host::view(self, size); }

TensorBase native::as_strided(const TensorBase& self, IntArrayRef size, IntArrayRef stride,
                          std::optional<int64_t> storage_offset) {
  const int64_t offset = storage_offset.value_or(self.storage_offset());
  check_sizes_and_strides(size, stride, "as_strided");
  OP_CHECK(offset >= 0, "as_strided: negative storage offset ", offset);
  size_t bytes = 0;
  OP_CHECK(storage_bytes_for(size, stride, offset, self.itemsize(), bytes), "as_strided: size ", str_list(size),
           ", stride ", str_list(stride), " and storage offset ", offset, " address more than 2^63 bytes");
  const size_t capacity = self.storage().nbytes();
  OP_CHECK(bytes <= capacity, "as_strided: size ", str_list(size), ", stride ", str_list(stride),
           " and storage offset ", offset, " reach element ", bytes / self.itemsize() - 1, " but the storage holds ",
           capacity / self.itemsize(), " elements");
  return host::as_strided(self, size, stride, offset);
}

TensorBase native::transpose(const TensorBase& self, int64_t dim0, int64_t dim1) {
  dim0 = wrap_dim(self, dim0, "transpose");
  dim1 = wrap_dim(self, dim1, "transpose");
  if (self.dim() == 0) return alias(self);
  return host::transpose(self, dim0, dim1);
}

TensorBase native::t(const TensorBase& self) {
  OP_CHECK(self.dim() <= 2, "t: expects a tensor with at most 2 dimensions, got ", self.dim(),
           "-d; use transpose(dim0, dim1) or permute");
  return self.dim() < 2 ? alias(self) : host::transpose(self, 0, 1);
}

TensorBase native::permute(const TensorBase& self, IntArrayRef dims) {
  OP_CHECK(static_cast<int64_t>(dims.size()) == self.dim(), "permute: ", dims.size(), " dims ", str_list(dims),
           " given for a ", self.dim(), "-d tensor");
  std::vector<int64_t> sizes, strides;
  std::vector<bool> seen(dims.size(), false);
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(self, d, "permute");
    OP_CHECK(!seen[w], "permute: dimension ", w, " repeats in ", str_list(dims));
    seen[w] = true;
    sizes.push_back(self.size(w));
    strides.push_back(self.stride(w));
  }
  return host::as_strided(self, sizes, strides);
}

TensorBase native::expand(const TensorBase& self, IntArrayRef size, bool implicit) {
  (void)implicit;  // only autograd cares whether the expansion was implicit
  const size_t lead = size.size() >= static_cast<size_t>(self.dim()) ? size.size() - self.dim() : 0;
  for (size_t d = 0; d < lead; ++d)
    OP_CHECK(size[d] >= 0, "expand: size ", size[d], " is not allowed for the new leading dimension ", d, " of ",
             str_list(size));
  return host::expand(self, size);
}

TensorBase native::squeeze(const TensorBase& self) {
  std::vector<bool> drop(self.dim());
  for (int64_t d = 0; d < self.dim(); ++d) drop[d] = self.size(d) == 1;
  return drop_dims(self, drop);
}

TensorBase native::squeeze_dim(const TensorBase& self, int64_t dim) {
  const int64_t d = wrap_dim(self, dim, "squeeze");
  std::vector<bool> drop(self.dim(), false);
  if (self.dim() > 0) drop[d] = self.size(d) == 1;
  return drop_dims(self, drop);
}

TensorBase native::squeeze_dims(const TensorBase& self, IntArrayRef dim) {
  std::vector<bool> drop(self.dim(), false), seen(std::max<int64_t>(self.dim(), 1), false);
  for (int64_t d : dim) {
    const int64_t w = wrap_dim(self, d, "squeeze");
    OP_CHECK(!seen[w], "squeeze: dimension ", w, " appears more than once in ", str_list(dim));
    seen[w] = true;
    if (self.dim() > 0) drop[w] = self.size(w) == 1;
  }
  return drop_dims(self, drop);
}

TensorBase native::unsqueeze(const TensorBase& self, int64_t dim) {
  const int64_t n = self.dim() + 1;
  OP_CHECK(dim >= -n && dim < n, "unsqueeze: dimension ", dim, " is out of range for a ", self.dim(),
           "-d tensor (expected a dimension in [", -n, ", ", n - 1, "])");
  return host::unsqueeze(self, dim);
}

// In-place views: self itself takes the view's sizes and strides (every handle to it sees them).
namespace {
TensorBase& restride(TensorBase& self, const TensorBase& view) {
  self.unsafe_impl()->set_sizes_and_strides(view.sizes().vec(), view.strides().vec());
  self.unsafe_impl()->storage_offset = view.storage_offset();
  return self;
}
}  // namespace

TensorBase& native::transpose_(TensorBase& self, int64_t dim0, int64_t dim1) {
  return restride(self, native::transpose(self, dim0, dim1));
}

TensorBase& native::unsqueeze_(TensorBase& self, int64_t dim) { return restride(self, native::unsqueeze(self, dim)); }

TensorBase native::select(const TensorBase& self, int64_t dim, int64_t index) {
  OP_CHECK(self.dim() > 0, "select: cannot select from a 0-d tensor");
  const int64_t d = wrap_dim(self, dim, "select");
  const int64_t n = self.size(d);
  OP_CHECK(index >= -n && index < n, "select: index ", index, " is out of range for dimension ", dim, " of size ",
           n);
  return host::select(self, d, index);
}

TensorBase native::slice(const TensorBase& self, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
                     int64_t step) {
  OP_CHECK(self.dim() > 0, "slice: cannot slice a 0-d tensor");
  const int64_t d = wrap_dim(self, dim, "slice");
  OP_CHECK(step > 0, "slice: step must be positive, got ", step);
  return host::slice(self, d, start.value_or(0), end.value_or(std::numeric_limits<int64_t>::max()), step);
}

TensorBase native::reshape(const TensorBase& self, IntArrayRef shape) {
  const std::vector<int64_t> sizes = host::infer_size(shape, self.numel(), "reshape");
  if (host::view_strides(self.sizes(), self.strides(), sizes)) return ops::view::call(self, sizes);
  return ops::view::call(op::clone(self, MemoryFormat::Contiguous), sizes);
}

TensorBase native::contiguous(const TensorBase& self, MemoryFormat memory_format) {
  OP_CHECK(memory_format != MemoryFormat::Preserve,
           "contiguous: memory format preserve_format is not supported; pass contiguous_format or channels_last");
  if (is_contiguous_as(self, memory_format)) return self;
  return op::clone(self, memory_format);
}

}  // namespace op
