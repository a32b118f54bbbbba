#include "autograd/saved_values.h"

#include "core/strided_loop.h"
#include "ops/zeros.h"

namespace op::autograd {

TypeAndSize::TypeAndSize(const TensorBase& t) : sizes(t.sizes().vec()), dtype(t.dtype()), device(t.device()) {}

TensorBase TypeAndSize::zeros() const { return op::zeros(sizes, dtype, std::nullopt, device); }

TensorGeometry::TensorGeometry(const TensorBase& t)
    : sizes(t.sizes().vec()), strides(t.strides().vec()), storage_offset(t.storage_offset()) {}

int64_t TensorGeometry::numel() const { return numel_of(sizes); }

}  // namespace op::autograd
