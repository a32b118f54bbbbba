#include "core/tensor.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace op {

namespace {

void check_sizes(IntArrayRef sizes, const char* what) {
  for (int64_t s : sizes) OP_CHECK(s >= 0, what, ": negative size ", s, " in sizes ", str_list(sizes));
}

}  // namespace

std::string str_list(IntArrayRef values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += str(i ? ", " : "", values[i]);
  return out + "]";
}

TensorImpl::TensorImpl(Storage storage_, std::vector<int64_t> sizes_, std::vector<int64_t> strides_,
                       int64_t storage_offset_, ScalarType dtype_)
    : storage(std::move(storage_)),
      sizes(std::move(sizes_)),
      strides(std::move(strides_)),
      storage_offset(storage_offset_),
      numel(numel_of(sizes)),
      dtype(dtype_),
      device(storage.device()),
      key_set(key_set_of(device.type())) {}

const TensorImpl& Tensor::impl() const {
  OP_CHECK(impl_ != nullptr, "operation on an undefined tensor");
  return *impl_;
}

int64_t Tensor::wrap_dim(int64_t dim) const {
  int64_t n = this->dim();
  OP_CHECK(dim >= -n && dim < n, "dimension ", dim, " out of range for a ", n, "-d tensor");
  return dim < 0 ? dim + n : dim;
}

Tensor Tensor::from_storage(Storage storage, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset,
                            ScalarType dtype) {
  OP_CHECK(storage.defined(), "from_storage: undefined storage");
  OP_CHECK(sizes.size() == strides.size(), "sizes ", str_list(sizes), " and strides ", str_list(strides),
           " differ in length");
  check_sizes(sizes, "from_storage");
  OP_CHECK(storage_offset >= 0, "negative storage offset ", storage_offset);
  int64_t last = storage_offset;  // highest element offset touched
  if (numel_of(sizes) > 0) {
    for (size_t d = 0; d < sizes.size(); ++d) {
      OP_CHECK(strides[d] >= 0, "negative stride ", strides[d], " is not supported");
      last += (sizes[d] - 1) * strides[d];
    }
    OP_CHECK(static_cast<size_t>(last + 1) * element_size(dtype) <= storage.nbytes(), "sizes ", str_list(sizes),
             " with strides ", str_list(strides), " and offset ", storage_offset, " need ",
             (last + 1) * static_cast<int64_t>(element_size(dtype)), " bytes but the storage has ", storage.nbytes());
  }
  return Tensor(std::make_shared<TensorImpl>(std::move(storage), sizes.vec(), strides.vec(), storage_offset, dtype));
}

Tensor Tensor::empty(IntArrayRef sizes, TensorOptions options) {
  return empty_strided(sizes, contiguous_strides(sizes), options);
}

Tensor Tensor::empty_strided(IntArrayRef sizes, IntArrayRef strides, TensorOptions options) {
  check_sizes(sizes, "empty");
  OP_CHECK(sizes.size() == strides.size(), "sizes and strides differ in length");
  ScalarType dtype = options.dtype_or_default();
  int64_t span = numel_of(sizes) == 0 ? 0 : 1;
  for (size_t d = 0; d < sizes.size() && span > 0; ++d) span += (sizes[d] - 1) * strides[d];
  Storage storage = Storage::allocate(static_cast<size_t>(span) * element_size(dtype), options.device_or_default());
  return from_storage(std::move(storage), sizes, strides, 0, dtype);
}

Tensor Tensor::full(IntArrayRef sizes, const Scalar& value, TensorOptions options) {
  Tensor t = empty(sizes, options);
  if (!t.is_meta()) t.fill_(value);
  return t;
}

Tensor Tensor::scalar_tensor(const Scalar& value, TensorOptions options) {
  if (!options.dtype) options.dtype = value.type();
  return full({}, value, options);
}

bool Tensor::is_contiguous() const {
  const TensorImpl& t = impl();
  int64_t expected = 1;
  for (size_t d = t.sizes.size(); d-- > 0;) {
    if (t.sizes[d] == 1) continue;  // the stride of a size-1 dim never matters
    if (t.strides[d] != expected) return t.numel == 0;
    expected *= t.sizes[d];
  }
  return true;
}

bool Tensor::is_alias_of(const Tensor& other) const {
  return defined() && other.defined() && storage().is_alias_of(other.storage());
}

void Tensor::check_host_data(const char* what) const {
  const TensorImpl& t = impl();
  OP_CHECK(!t.device.is_meta(), what, ": meta tensors have no data (sizes ", str_list(t.sizes), ", dtype ",
           op::to_string(t.dtype), ")");
  OP_CHECK(t.device.type() != DeviceType::CUDA, what, ": CUDA memory is not readable from the host; copy to cpu");
  OP_CHECK(t.storage.has_data() || t.numel == 0, what, ": tensor on ", t.device.str(), " has no data");
}

void* Tensor::data_ptr() const {
  const TensorImpl& t = impl();
  OP_CHECK(!t.device.is_meta(), "data_ptr: meta tensors have no data");
  return static_cast<char*>(t.storage.data()) + t.storage_offset * static_cast<int64_t>(element_size(t.dtype));
}

Tensor Tensor::as_strided(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) const {
  return from_storage(storage(), sizes, strides, storage_offset, dtype());
}

Tensor Tensor::view(IntArrayRef sizes) const {
  std::vector<int64_t> shape = sizes.vec();
  int64_t known = 1, infer = -1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1) {
      OP_CHECK(infer < 0, "view: only one dimension can be -1 in ", str_list(sizes));
      infer = static_cast<int64_t>(d);
    } else {
      OP_CHECK(shape[d] >= 0, "view: invalid size ", shape[d]);
      known *= shape[d];
    }
  }
  if (infer >= 0) {
    OP_CHECK(known != 0 && numel() % known == 0, "view: shape ", str_list(sizes), " is invalid for ", numel(),
             " elements");
    shape[infer] = numel() / known;
  }
  OP_CHECK(numel_of(shape) == numel(), "view: shape ", str_list(sizes), " is invalid for ", numel(), " elements");
  OP_CHECK(is_contiguous(), "view: the tensor is not contiguous; call contiguous() first");
  return as_strided(shape, contiguous_strides(shape));
}

Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  dim0 = wrap_dim(dim0);
  dim1 = wrap_dim(dim1);
  std::vector<int64_t> sizes = this->sizes().vec(), strides = this->strides().vec();
  std::swap(sizes[dim0], sizes[dim1]);
  std::swap(strides[dim0], strides[dim1]);
  return as_strided(sizes, strides);
}

Tensor Tensor::permute(IntArrayRef dims) const {
  OP_CHECK(static_cast<int64_t>(dims.size()) == dim(), "permute: ", dims.size(), " dims given for a ", dim(),
           "-d tensor");
  std::vector<int64_t> sizes, strides;
  std::vector<bool> seen(dims.size(), false);
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d);
    OP_CHECK(!seen[w], "permute: dimension ", d, " repeats");
    seen[w] = true;
    sizes.push_back(size(w));
    strides.push_back(stride(w));
  }
  return as_strided(sizes, strides);
}

Tensor Tensor::select(int64_t dim, int64_t index) const {
  dim = wrap_dim(dim);
  int64_t n = size(dim);
  OP_CHECK(index >= -n && index < n, "select: index ", index, " out of range for dimension ", dim, " of size ", n);
  if (index < 0) index += n;
  std::vector<int64_t> sizes = this->sizes().vec(), strides = this->strides().vec();
  int64_t offset = storage_offset() + index * strides[dim];
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  return as_strided(sizes, strides, offset);
}

Tensor Tensor::slice(int64_t dim, int64_t start, int64_t end, int64_t step) const {
  dim = wrap_dim(dim);
  OP_CHECK(step > 0, "slice: step must be positive, got ", step);
  int64_t n = size(dim);
  auto clamp = [n](int64_t i) { return std::min(std::max(i < 0 ? i + n : i, int64_t{0}), n); };
  start = clamp(start);
  end = std::max(clamp(end), start);
  std::vector<int64_t> sizes = this->sizes().vec(), strides = this->strides().vec();
  int64_t offset = storage_offset() + (sizes[dim] > 0 ? start * strides[dim] : 0);
  sizes[dim] = (end - start + step - 1) / step;
  strides[dim] *= step;
  return as_strided(sizes, strides, offset);
}

Tensor Tensor::unsqueeze(int64_t dim) const {
  int64_t n = this->dim() + 1;
  OP_CHECK(dim >= -n && dim < n, "unsqueeze: dimension ", dim, " out of range");
  if (dim < 0) dim += n;
  std::vector<int64_t> sizes = this->sizes().vec(), strides = this->strides().vec();
  int64_t stride = dim < this->dim() ? strides[dim] * sizes[dim] : 1;
  sizes.insert(sizes.begin() + dim, 1);
  strides.insert(strides.begin() + dim, stride);
  return as_strided(sizes, strides);
}

Tensor Tensor::expand(IntArrayRef sizes) const {
  OP_CHECK(static_cast<int64_t>(sizes.size()) >= dim(), "expand: cannot expand a ", dim(), "-d tensor to ",
           str_list(sizes));
  size_t lead = sizes.size() - static_cast<size_t>(dim());
  std::vector<int64_t> out_sizes(sizes.size()), out_strides(sizes.size(), 0);
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (d < lead) {
      OP_CHECK(sizes[d] >= 0, "expand: invalid size ", sizes[d]);
      out_sizes[d] = sizes[d];
      continue;
    }
    int64_t own = size(static_cast<int64_t>(d - lead));
    int64_t want = sizes[d] == -1 ? own : sizes[d];
    OP_CHECK(own == want || own == 1, "expand: size ", own, " of dimension ", d - lead, " cannot become ", want);
    out_sizes[d] = want;
    out_strides[d] = own == want ? stride(static_cast<int64_t>(d - lead)) : 0;
  }
  return as_strided(out_sizes, out_strides);
}

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : clone(); }

Tensor Tensor::clone() const {
  Tensor out = empty(sizes(), TensorOptions(dtype()).with_device(device()));
  if (!is_meta()) out.copy_(*this);
  return out;
}

Tensor Tensor::to(ScalarType dtype) const {
  if (dtype == this->dtype()) return *this;
  Tensor out = empty(sizes(), TensorOptions(dtype).with_device(device()));
  if (!is_meta()) out.copy_(*this);
  return out;
}

Tensor Tensor::to(Device device) const {
  if (device == this->device()) return *this;
  Tensor out = empty(sizes(), TensorOptions(dtype()).with_device(device));
  if (!out.is_meta()) out.copy_(*this);
  return out;
}

int64_t Tensor::offset_of(IntArrayRef index) const {
  OP_CHECK(static_cast<int64_t>(index.size()) == dim(), "index ", str_list(index), " has ", index.size(),
           " entries for a ", dim(), "-d tensor");
  int64_t offset = storage_offset();
  for (size_t d = 0; d < index.size(); ++d) {
    int64_t i = index[d], n = sizes()[d];
    OP_CHECK(i >= -n && i < n, "index ", i, " out of range for dimension ", d, " of size ", n);
    offset += (i < 0 ? i + n : i) * strides()[d];
  }
  return offset;
}

Scalar Tensor::get(IntArrayRef index) const {
  check_host_data("get");
  int64_t offset = offset_of(index);
  Scalar result;
  OP_DISPATCH_ALL_TYPES(dtype(), "get", { result = Scalar(static_cast<const scalar_t*>(storage().data())[offset]); });
  return result;
}

void Tensor::set(IntArrayRef index, const Scalar& value) const {
  check_host_data("set");
  int64_t offset = offset_of(index);
  OP_DISPATCH_ALL_TYPES(dtype(), "set", { static_cast<scalar_t*>(storage().data())[offset] = value.to<scalar_t>(); });
}

Scalar Tensor::item() const {
  OP_CHECK(numel() == 1, "item: the tensor has ", numel(), " elements, not 1");
  check_host_data("item");
  Scalar result;
  OP_DISPATCH_ALL_TYPES(dtype(), "item", {
    const scalar_t* base = static_cast<const scalar_t*>(storage().data());
    for_each_offset(sizes(), strides(), storage_offset(), [&](int64_t o) { result = Scalar(base[o]); });
  });
  return result;
}

const Tensor& Tensor::fill_(const Scalar& value) const {
  check_host_data("fill_");
  OP_DISPATCH_ALL_TYPES(dtype(), "fill_", {
    scalar_t* base = static_cast<scalar_t*>(storage().data());
    const scalar_t v = value.to<scalar_t>();
    for_each_offset(sizes(), strides(), storage_offset(), [&](int64_t o) { base[o] = v; });
  });
  return *this;
}

const Tensor& Tensor::copy_(const Tensor& src) const {
  check_host_data("copy_");
  src.check_host_data("copy_");
  Tensor from = src.sizes() == sizes() ? src : src.expand(sizes());
  // Read everything first: src may overlap *this (e.g. a transposed view of it).
  std::vector<double> values = from.to_vector<double>();
  std::vector<int64_t> ints;
  bool exact_ints = is_integral(dtype(), true) && is_integral(from.dtype(), true);
  if (exact_ints) ints = from.to_vector<int64_t>();  // int64 does not round-trip through double
  size_t i = 0;
  OP_DISPATCH_ALL_TYPES(dtype(), "copy_", {
    scalar_t* base = static_cast<scalar_t*>(storage().data());
    for_each_offset(sizes(), strides(), storage_offset(), [&](int64_t o) {
      base[o] = exact_ints ? static_cast<scalar_t>(ints[i]) : static_cast<scalar_t>(values[i]);
      ++i;
    });
  });
  return *this;
}

bool Tensor::equal(const Tensor& other) const {
  if (!defined() || !other.defined()) return defined() == other.defined();
  if (sizes() != other.sizes()) return false;
  if (is_integral(dtype(), true) && is_integral(other.dtype(), true))
    return to_vector<int64_t>() == other.to_vector<int64_t>();
  return to_vector<double>() == other.to_vector<double>();
}

namespace {

std::string format_element(const Scalar& v) {
  if (v.is_floating_point()) {
    double d = v.to<double>();
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
    std::ostringstream out;
    out.precision(6);
    out << d;
    std::string s = out.str();
    if (s.find_first_of(".e") == std::string::npos) s += ".";
    return s;
  }
  return v.to_string();
}

void format_dim(const Tensor& t, std::vector<int64_t>& index, std::string& out) {
  size_t d = index.size();
  if (static_cast<int64_t>(d) == t.dim()) {
    out += format_element(t.get(index));
    return;
  }
  out += "[";
  for (int64_t i = 0; i < t.size(static_cast<int64_t>(d)); ++i) {
    if (i) out += ", ";
    index.push_back(i);
    format_dim(t, index, out);
    index.pop_back();
  }
  out += "]";
}

}  // namespace

std::string Tensor::to_string() const {
  if (!defined()) return "tensor(undefined)";
  std::string out = "tensor(";
  bool show_size = false;
  if (is_meta() || device().type() == DeviceType::CUDA || numel() > 1000) {
    out += "...";
    show_size = true;
  } else {
    std::vector<int64_t> index;
    format_dim(*this, index, out);
  }
  if (show_size) {
    out += ", size=(";
    for (int64_t d = 0; d < dim(); ++d) out += str(d ? ", " : "", size(d));
    out += dim() == 1 ? ",)" : ")";
  }
  if (!device().is_cpu()) out += str(", device='", device().str(), "'");
  ScalarType natural = dtype() == ScalarType::Bool ? ScalarType::Bool : is_floating(dtype()) ? ScalarType::Float32 : ScalarType::Int64;
  if (dtype() != natural) out += str(", dtype=", op::to_string(dtype()));
  return out + ")";
}

}  // namespace op
