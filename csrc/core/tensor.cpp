#include "core/tensor.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/host_ops.h"
#include "core/strided_loop.h"

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

void TensorImpl::set_sizes_and_strides(std::vector<int64_t> new_sizes, std::vector<int64_t> new_strides) {
  OP_CHECK(new_sizes.size() == new_strides.size(), "sizes ", str_list(new_sizes), " and strides ",
           str_list(new_strides), " differ in length");
  numel = numel_of(new_sizes);
  sizes = std::move(new_sizes);
  strides = std::move(new_strides);
}

const TensorImpl& TensorBase::impl() const {
  OP_CHECK(impl_ != nullptr, "operation on an undefined tensor");
  return *impl_;
}

int64_t TensorBase::wrap_dim(int64_t dim) const {
  int64_t n = this->dim();
  OP_CHECK(dim >= -n && dim < n, "dimension ", dim, " out of range for a ", n, "-d tensor");
  return dim < 0 ? dim + n : dim;
}

TensorBase TensorBase::from_storage(Storage storage, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset,
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
  return TensorBase(std::make_shared<TensorImpl>(std::move(storage), sizes.vec(), strides.vec(), storage_offset, dtype));
}

TensorBase TensorBase::empty(IntArrayRef sizes, TensorOptions options) {
  return empty_strided(sizes, contiguous_strides(sizes), options);
}

TensorBase TensorBase::empty_strided(IntArrayRef sizes, IntArrayRef strides, TensorOptions options) {
  check_sizes(sizes, "empty");
  OP_CHECK(sizes.size() == strides.size(), "sizes and strides differ in length");
  ScalarType dtype = options.dtype_or_default();
  for (int64_t s : strides) OP_CHECK(s >= 0, "empty: negative stride ", s, " in strides ", str_list(strides));
  size_t bytes = 0;
  OP_CHECK(storage_bytes_for(sizes, strides, 0, element_size(dtype), bytes), "empty: a tensor of sizes ",
           str_list(sizes), " and dtype ", ::op::to_string(dtype), " is too large to address (more than 2^63 bytes)");
  Storage storage = Storage::allocate(bytes, options.device_or_default());
  return from_storage(std::move(storage), sizes, strides, 0, dtype);
}

TensorBase TensorBase::full(IntArrayRef sizes, const Scalar& value, TensorOptions options) {
  TensorBase t = empty(sizes, options);
  if (!t.is_meta()) host::fill_(t, value);
  return t;
}

TensorBase TensorBase::scalar_tensor(const Scalar& value, TensorOptions options) {
  if (!options.dtype) options.dtype = value.type();
  return full({}, value, options);
}

bool TensorBase::is_contiguous() const {
  const TensorImpl& t = impl();
  int64_t expected = 1;
  for (size_t d = t.sizes.size(); d-- > 0;) {
    if (t.sizes[d] == 1) continue;  // the stride of a size-1 dim never matters
    if (t.strides[d] != expected) return t.numel == 0;
    expected *= t.sizes[d];
  }
  return true;
}

bool TensorBase::is_alias_of(const TensorBase& other) const {
  return defined() && other.defined() && storage().is_alias_of(other.storage());
}

void TensorBase::check_host_data(const char* what) const {
  const TensorImpl& t = impl();
  OP_CHECK(!t.device.is_meta(), what, ": meta tensors have no data (sizes ", str_list(t.sizes), ", dtype ",
           op::to_string(t.dtype), ")");
  OP_CHECK(t.device.type() != DeviceType::CUDA, what, ": CUDA memory is not readable from the host; copy to cpu");
  OP_CHECK(t.storage.has_data() || t.numel == 0, what, ": tensor on ", t.device.str(), " has no data");
}

void* TensorBase::data_ptr() const {
  const TensorImpl& t = impl();
  OP_CHECK(!t.device.is_meta(), "data_ptr: meta tensors have no data");
  return static_cast<char*>(t.storage.data()) + t.storage_offset * static_cast<int64_t>(element_size(t.dtype));
}

int64_t TensorBase::offset_of(IntArrayRef index) const {
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

Scalar TensorBase::get(IntArrayRef index) const {
  check_host_data("get");
  int64_t offset = offset_of(index);
  Scalar result;
  OP_DISPATCH_ALL_TYPES(dtype(), "get", { result = Scalar(static_cast<const scalar_t*>(storage().data())[offset]); });
  return result;
}

void TensorBase::set(IntArrayRef index, const Scalar& value) const {
  check_host_data("set");
  int64_t offset = offset_of(index);
  OP_DISPATCH_ALL_TYPES(dtype(), "set", { static_cast<scalar_t*>(storage().data())[offset] = value.to<scalar_t>(); });
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

void format_dim(const TensorBase& t, std::vector<int64_t>& index, std::string& out) {
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

std::string TensorBase::to_string() const {
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
