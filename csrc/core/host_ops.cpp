#include "core/host_ops.h"

#include <algorithm>
#include <array>

#include "core/strided_loop.h"

namespace op::host {

// ----- views -----

TensorBase as_strided(const TensorBase& t, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) {
  return TensorBase::from_storage(t.storage(), sizes, strides, storage_offset, t.dtype());
}

TensorBase as_strided(const TensorBase& t, IntArrayRef sizes, IntArrayRef strides) {
  return as_strided(t, sizes, strides, t.storage_offset());
}

std::optional<std::vector<int64_t>> view_strides(IntArrayRef sizes, IntArrayRef strides, IntArrayRef new_sizes) {
  if (numel_of(sizes) == 0) return contiguous_strides(new_sizes);
  // Memory of a strided tensor falls into runs ("chunks") of dimensions that step through it
  // evenly, as one contiguous block scaled by the chunk's innermost stride. A new shape is a
  // view when its dimensions, read left to right, split every chunk exactly.
  struct Chunk {
    int64_t numel;
    int64_t inner_stride;
  };
  std::vector<Chunk> chunks;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;  // a size-1 dimension never moves through memory
    if (!chunks.empty() && chunks.back().inner_stride == strides[d] * sizes[d]) {
      chunks.back().numel *= sizes[d];
      chunks.back().inner_stride = strides[d];
    } else {
      chunks.push_back({sizes[d], strides[d]});
    }
  }
  std::vector<int64_t> out(new_sizes.size(), 1);
  size_t chunk = 0;
  int64_t remaining = chunks.empty() ? 1 : chunks[0].numel;  // elements of the chunk not yet covered
  for (size_t d = 0; d < new_sizes.size(); ++d) {
    const int64_t size = new_sizes[d];
    if (size == 1) {
      out[d] = chunk < chunks.size() ? chunks[chunk].inner_stride * remaining : 1;
      continue;
    }
    if (chunk >= chunks.size() || remaining % size != 0) return std::nullopt;
    remaining /= size;
    out[d] = chunks[chunk].inner_stride * remaining;
    if (remaining == 1 && ++chunk < chunks.size()) remaining = chunks[chunk].numel;
  }
  if (chunk < chunks.size()) return std::nullopt;
  return out;
}

std::vector<int64_t> infer_size(IntArrayRef sizes, int64_t numel, const char* what) {
  std::vector<int64_t> shape = sizes.vec();
  int64_t known = 1, infer = -1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1) {
      OP_CHECK(infer < 0, what, ": only one dimension can be -1 in ", str_list(sizes));
      infer = static_cast<int64_t>(d);
    } else {
      OP_CHECK(shape[d] >= 0, what, ": invalid size ", shape[d], " in ", str_list(sizes));
      known *= shape[d];
    }
  }
  if (infer >= 0) {
    OP_CHECK(known != 0 && numel % known == 0, what, ": shape ", str_list(sizes), " is invalid for ", numel,
             " elements");
    shape[infer] = numel / known;
  }
  OP_CHECK(numel_of(shape) == numel, what, ": shape ", str_list(sizes), " is invalid for ", numel, " elements");
  return shape;
}

TensorBase view(const TensorBase& t, IntArrayRef sizes) {
  const std::vector<int64_t> shape = infer_size(sizes, t.numel(), "view");
  std::optional<std::vector<int64_t>> strides = view_strides(t.sizes(), t.strides(), shape);
  OP_CHECK(strides.has_value(), "view: shape ", str_list(sizes), " does not fit the tensor's sizes ",
           str_list(t.sizes()), " and strides ", str_list(t.strides()),
           " (a new dimension would span memory that is not contiguous); call contiguous() first");
  return as_strided(t, shape, *strides);
}

TensorBase transpose(const TensorBase& t, int64_t dim0, int64_t dim1) {
  dim0 = t.wrap_dim(dim0);
  dim1 = t.wrap_dim(dim1);
  std::vector<int64_t> sizes = t.sizes().vec(), strides = t.strides().vec();
  std::swap(sizes[dim0], sizes[dim1]);
  std::swap(strides[dim0], strides[dim1]);
  return as_strided(t, sizes, strides);
}

TensorBase permute(const TensorBase& t, IntArrayRef dims) {
  OP_CHECK(static_cast<int64_t>(dims.size()) == t.dim(), "permute: ", dims.size(), " dims given for a ", t.dim(),
           "-d tensor");
  std::vector<int64_t> sizes, strides;
  std::vector<bool> seen(dims.size(), false);
  for (int64_t d : dims) {
    int64_t w = t.wrap_dim(d);
    OP_CHECK(!seen[w], "permute: dimension ", d, " repeats");
    seen[w] = true;
    sizes.push_back(t.size(w));
    strides.push_back(t.stride(w));
  }
  return as_strided(t, sizes, strides);
}

TensorBase select(const TensorBase& t, int64_t dim, int64_t index) {
  dim = t.wrap_dim(dim);
  int64_t n = t.size(dim);
  OP_CHECK(index >= -n && index < n, "select: index ", index, " out of range for dimension ", dim, " of size ", n);
  if (index < 0) index += n;
  std::vector<int64_t> sizes = t.sizes().vec(), strides = t.strides().vec();
  int64_t offset = t.storage_offset() + index * strides[dim];
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  return as_strided(t, sizes, strides, offset);
}

TensorBase slice(const TensorBase& t, int64_t dim, int64_t start, int64_t end, int64_t step) {
  dim = t.wrap_dim(dim);
  OP_CHECK(step > 0, "slice: step must be positive, got ", step);
  int64_t n = t.size(dim);
  auto clamp = [n](int64_t i) { return std::min(std::max(i < 0 ? i + n : i, int64_t{0}), n); };
  start = clamp(start);
  end = std::max(clamp(end), start);
  std::vector<int64_t> sizes = t.sizes().vec(), strides = t.strides().vec();
  int64_t offset = t.storage_offset() + (sizes[dim] > 0 ? start * strides[dim] : 0);
  sizes[dim] = (end - start + step - 1) / step;
  strides[dim] *= step;
  return as_strided(t, sizes, strides, offset);
}

TensorBase unsqueeze(const TensorBase& t, int64_t dim) {
  int64_t n = t.dim() + 1;
  OP_CHECK(dim >= -n && dim < n, "unsqueeze: dimension ", dim, " out of range for a ", t.dim(), "-d tensor");
  if (dim < 0) dim += n;
  std::vector<int64_t> sizes = t.sizes().vec(), strides = t.strides().vec();
  int64_t stride = dim < t.dim() ? strides[dim] * sizes[dim] : 1;
  sizes.insert(sizes.begin() + dim, 1);
  strides.insert(strides.begin() + dim, stride);
  return as_strided(t, sizes, strides);
}

TensorBase expand(const TensorBase& t, IntArrayRef sizes) {
  OP_CHECK(static_cast<int64_t>(sizes.size()) >= t.dim(), "expand: cannot expand a ", t.dim(), "-d tensor to ",
           str_list(sizes));
  size_t lead = sizes.size() - static_cast<size_t>(t.dim());
  std::vector<int64_t> out_sizes(sizes.size()), out_strides(sizes.size(), 0);
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (d < lead) {
      OP_CHECK(sizes[d] >= 0, "expand: invalid size ", sizes[d], " in ", str_list(sizes));
      out_sizes[d] = sizes[d];
      continue;
    }
    int64_t own = t.size(static_cast<int64_t>(d - lead));
    int64_t want = sizes[d] == -1 ? own : sizes[d];
    OP_CHECK(own == want || own == 1, "expand: size ", own, " of dimension ", d - lead, " cannot become ", want,
             " (expanding ", str_list(t.sizes()), " to ", str_list(sizes), ")");
    out_sizes[d] = want;
    out_strides[d] = own == want ? t.stride(static_cast<int64_t>(d - lead)) : 0;
  }
  return as_strided(t, out_sizes, out_strides);
}

// ----- copies -----

TensorBase contiguous(const TensorBase& t) { return t.is_contiguous() ? t : clone(t); }

TensorBase clone(const TensorBase& t) {
  TensorBase out = TensorBase::empty(t.sizes(), TensorOptions(t.dtype()).with_device(t.device()));
  if (!t.is_meta()) copy_(out, t);
  return out;
}

TensorBase to(const TensorBase& t, ScalarType dtype) {
  if (dtype == t.dtype()) return t;
  TensorBase out = TensorBase::empty(t.sizes(), TensorOptions(dtype).with_device(t.device()));
  if (!t.is_meta()) copy_(out, t);
  return out;
}

TensorBase to(const TensorBase& t, Device device) {
  if (device == t.device()) return t;
  TensorBase out = TensorBase::empty(t.sizes(), TensorOptions(t.dtype()).with_device(device));
  if (!out.is_meta()) copy_(out, t);
  return out;
}

void resize_(const TensorBase& t, IntArrayRef sizes, IntArrayRef strides) {
  for (int64_t s : sizes) OP_CHECK(s >= 0, "resize: negative size ", s, " in ", str_list(sizes));
  std::vector<int64_t> new_strides = strides.empty() ? contiguous_strides(sizes) : strides.vec();
  OP_CHECK(new_strides.size() == sizes.size(), "resize: sizes ", str_list(sizes), " and strides ",
           str_list(strides), " differ in length");
  for (int64_t s : new_strides) OP_CHECK(s >= 0, "resize: negative stride ", s, " is not supported");
  size_t bytes = 0;
  OP_CHECK(storage_bytes_for(sizes, new_strides, t.storage_offset(), t.itemsize(), bytes), "resize: sizes ",
           str_list(sizes), " are too large to address (more than 2^63 bytes)");
  if (bytes > 0) t.storage().grow(bytes);
  t.unsafe_impl()->set_sizes_and_strides(sizes.vec(), std::move(new_strides));
}

// ----- element access -----

Scalar item(const TensorBase& t) {
  OP_CHECK(t.numel() == 1, "item: the tensor has ", t.numel(), " elements, not 1");
  t.check_host_data("item");
  Scalar result;
  OP_DISPATCH_ALL_TYPES(t.dtype(), "item", {
    const scalar_t* base = static_cast<const scalar_t*>(t.storage().data());
    for_each_offset(t.sizes(), t.strides(), t.storage_offset(), [&](int64_t o) { result = Scalar(base[o]); });
  });
  return result;
}

const TensorBase& fill_(const TensorBase& t, const Scalar& value) {
  t.check_host_data("fill_");
  OP_DISPATCH_ALL_TYPES(t.dtype(), "fill_", {
    scalar_t* base = static_cast<scalar_t*>(t.storage().data());
    const scalar_t v = value.to<scalar_t>();
    for_each_offset(t.sizes(), t.strides(), t.storage_offset(), [&](int64_t o) { base[o] = v; });
  });
  return t;
}

namespace {

// Element-by-element conversion from S to D over tensors of one shape.
template <class D, class S>
void copy_converting(const TensorBase& dst, const TensorBase& src) {
  D* out = static_cast<D*>(dst.storage().data());
  const S* in = static_cast<const S*>(src.storage().data());
  for_each_offsets<2>(dst.sizes(), {dst.strides(), src.strides()}, {dst.storage_offset(), src.storage_offset()},
                      [&](const std::array<int64_t, 2>& o) { out[o[0]] = static_cast<D>(in[o[1]]); });
}

}  // namespace

const TensorBase& copy_(const TensorBase& dst, const TensorBase& src) {
  dst.check_host_data("copy_");
  src.check_host_data("copy_");
  TensorBase from = src.sizes() == dst.sizes() ? src : expand(src, dst.sizes());
  // src may overlap dst (e.g. a transposed view of it): read it all before writing.
  if (from.storage().is_alias_of(dst.storage()) && dst.numel() > 0) from = clone(from);
  OP_DISPATCH_ALL_TYPES(dst.dtype(), "copy_", {
    using dst_t = scalar_t;
    OP_DISPATCH_ALL_TYPES(from.dtype(), "copy_", { copy_converting<dst_t, scalar_t>(dst, from); });
  });
  return dst;
}

bool equal(const TensorBase& a, const TensorBase& b) {
  if (!a.defined() || !b.defined()) return a.defined() == b.defined();
  if (a.sizes() != b.sizes()) return false;
  if (is_integral(a.dtype(), true) && is_integral(b.dtype(), true))
    return a.to_vector<int64_t>() == b.to_vector<int64_t>();
  return a.to_vector<double>() == b.to_vector<double>();
}

}  // namespace op::host
