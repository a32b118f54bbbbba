// Strided tensors: sizes, strides and an offset into a shared Storage. Views (host_ops.h:
// transpose, slice, select, view, as_strided, expand) build a new TensorImpl over the same
// storage. TensorBase has no operator methods (see api/tensor.h for op::Tensor, which does).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/array_ref.h"
#include "core/device.h"
#include "core/dispatch_key_set.h"
#include "core/generator.h"  // Generator appears in generated operator signatures
#include "core/layout.h"  // Layout and MemoryFormat appear in generated operator signatures
#include "core/scalar.h"
#include "core/scalar_type.h"
#include "core/storage.h"
#include "core/strided_loop.h"
#include "core/tensor_options.h"

namespace op {

// "[2, 3]": sizes and indices in error messages.
std::string str_list(IntArrayRef values);

// What a functional tensor wrapper (the Functionalize key) holds besides its mirrored
// metadata: defined in functionalization/functionalization.h.
struct FunctionalTensorState;

// What an external backend keeps per tensor besides the metadata (lazy tensors: the IR value or
// the data they stand for). The backend derives from it; the library never looks inside.
struct BackendTensorState {
  virtual ~BackendTensorState() = default;
};

// What autograd keeps per tensor (requires_grad, grad, grad_fn, output number): defined in
// autograd/autograd_meta.h. Null on tensors that never required grad, so they pay one pointer.
struct AutogradMetaInterface {
  virtual ~AutogradMetaInterface() = default;
};

struct TensorImpl {
  TensorImpl(Storage storage, std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t storage_offset,
             ScalarType dtype);

  Storage storage;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t storage_offset;
  int64_t numel;
  ScalarType dtype;
  Device device;
  DispatchKeySet key_set;  // derived from the device once: the dispatcher reads it on every call
  // Set only on functional tensor wrappers (key_set then has Functionalize): the wrapped value,
  // its aliases' shared storage and its view steps.
  std::shared_ptr<FunctionalTensorState> functional;
  // Set by a backend whose tensors have no storage of their own (lazy tensors).
  std::shared_ptr<BackendTensorState> backend_state;
  // Set by autograd (autograd/autograd_meta.h) once the tensor requires grad or gets history.
  std::shared_ptr<AutogradMetaInterface> autograd_meta;

  // Resizing in place (host::resize_): the caller makes sure the storage is large enough.
  void set_sizes_and_strides(std::vector<int64_t> new_sizes, std::vector<int64_t> new_strides);
};

class TensorBase {
 public:
  TensorBase() = default;  // undefined: no storage, empty key set
  explicit TensorBase(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // Factories (host-side helpers; the dispatched factory operators come from codegen).
  static TensorBase empty(IntArrayRef sizes, TensorOptions options = {});
  static TensorBase empty_strided(IntArrayRef sizes, IntArrayRef strides, TensorOptions options = {});
  static TensorBase full(IntArrayRef sizes, const Scalar& value, TensorOptions options = {});
  static TensorBase zeros(IntArrayRef sizes, TensorOptions options = {}) { return full(sizes, 0, options); }
  static TensorBase scalar_tensor(const Scalar& value, TensorOptions options = {});
  static TensorBase from_storage(Storage storage, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset,
                             ScalarType dtype);
  // A tensor holding `values` (dtype from T) with the given sizes (default: 1-d; use
  // scalar_tensor for 0-d).
  template <class T>
  static TensorBase from_vector(const std::vector<T>& values, std::vector<int64_t> sizes = {}, Device device = {});

  bool defined() const { return impl_ != nullptr; }
  DispatchKeySet key_set() const { return impl_ ? impl_->key_set : DispatchKeySet(); }
  IntArrayRef sizes() const { return impl().sizes; }
  IntArrayRef strides() const { return impl().strides; }
  int64_t size(int64_t dim) const { return impl().sizes[wrap_dim(dim)]; }
  int64_t stride(int64_t dim) const { return impl().strides[wrap_dim(dim)]; }
  int64_t dim() const { return static_cast<int64_t>(impl().sizes.size()); }
  int64_t numel() const { return impl().numel; }
  int64_t storage_offset() const { return impl().storage_offset; }
  ScalarType dtype() const { return impl().dtype; }
  Device device() const { return impl().device; }
  const Storage& storage() const { return impl().storage; }
  size_t itemsize() const { return element_size(dtype()); }
  bool is_meta() const { return device().is_meta(); }
  bool is_functional() const { return impl_ != nullptr && impl_->functional != nullptr; }
  bool is_contiguous() const;
  bool is_alias_of(const TensorBase& other) const;
  long use_count() const { return impl_.use_count(); }
  TensorImpl* unsafe_impl() const { return impl_.get(); }
  // 0 <-> dim-1; negative dims count from the end. Throws op::Error when out of range.
  int64_t wrap_dim(int64_t dim) const;

  // Address of element 0 (the storage offset applied). Throws for meta/undefined tensors;
  // the typed form also checks the dtype.
  void* data_ptr() const;
  template <class T>
  T* data_ptr() const;

  // Views, copies, item(), fill_, copy_ and equal are free functions in core/host_ops.h
  // (op::host::view(t, sizes), ...): the member names belong to the dispatched operators.

  // Element access on host-memory tensors; values convert to and from Scalar.
  Scalar get(IntArrayRef index) const;
  void set(IntArrayRef index, const Scalar& value) const;
  template <class T>
  std::vector<T> to_vector() const;  // row-major, converted to T
  // Throws op::Error naming `what` unless the values are readable from the host (not meta,
  // not CUDA, storage present): kernels that read host memory call it first.
  void check_host_data(const char* what) const;
  std::string to_string() const;

  // No operator methods here: TensorBase is what the runtime, every kernel and all generated
  // code see, so an edit to an operator never recompiles them. Call operators through
  // ops/<group>.h (op::add(a, b)); code that wants t.add(u) uses op::Tensor (api/tensor.h).

 private:
  const TensorImpl& impl() const;
  int64_t offset_of(IntArrayRef index) const;
  std::shared_ptr<TensorImpl> impl_;
};

// ----- template definitions -----

template <class T>
T* TensorBase::data_ptr() const {
  OP_CHECK(dtype() == scalar_type_of<T>, "data_ptr<", op::to_string(scalar_type_of<T>), ">() called on a tensor of dtype ",
           op::to_string(dtype()));
  return static_cast<T*>(data_ptr());
}

template <class T>
TensorBase TensorBase::from_vector(const std::vector<T>& values, std::vector<int64_t> sizes, Device device) {
  if (sizes.empty()) sizes = {static_cast<int64_t>(values.size())};
  TensorBase t = empty(sizes, TensorOptions(scalar_type_of<T>).with_device(device));
  OP_CHECK(static_cast<int64_t>(values.size()) == t.numel(), "from_vector: ", values.size(),
           " values do not fill a tensor of ", t.numel(), " elements");
  T* out = t.data_ptr<T>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return t;
}

template <class T>
std::vector<T> TensorBase::to_vector() const {
  check_host_data("to_vector");
  std::vector<T> out;
  out.reserve(numel());
  OP_DISPATCH_ALL_TYPES(dtype(), "to_vector", {
    const scalar_t* base = static_cast<const scalar_t*>(storage().data());
    for_each_offset(sizes(), strides(), storage_offset(),
                    [&](int64_t offset) { out.push_back(static_cast<T>(base[offset])); });
  });
  return out;
}

}  // namespace op
