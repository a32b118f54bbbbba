// What a backward node keeps instead of a whole tensor when its formula needs only the tensor's
// metadata (PyTorch's TypeAndSize and TensorGeometry): `zeros_like(self)` saves self_info,
// `TensorGeometry(self)` saves self_geometry (derivatives.yaml's header). Plain values, so the
// node holds no storage alive.
#pragma once

#include <cstdint>
#include <vector>

#include "core/device.h"
#include "core/scalar_type.h"
#include "core/tensor.h"

namespace op::autograd {

// Shape, dtype and device of a tensor: enough to make its zeros.
struct TypeAndSize {
  TypeAndSize() = default;
  explicit TypeAndSize(const TensorBase& t);

  // Zeros of that shape, dtype and device (contiguous), made through the zeros operator.
  TensorBase zeros() const;

  std::vector<int64_t> sizes;
  ScalarType dtype = ScalarType::Float32;
  Device device;
};

// A tensor's layout in its storage: sizes, strides (in elements) and storage offset.
struct TensorGeometry {
  TensorGeometry() = default;
  explicit TensorGeometry(const TensorBase& t);

  int64_t dim() const { return static_cast<int64_t>(sizes.size()); }
  int64_t numel() const;

  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t storage_offset = 0;
};

}  // namespace op::autograd
