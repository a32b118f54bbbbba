// The dtype of an operation's result from its operands, PyTorch style: tensors with
// dimensions decide; zero-dim tensors and plain numbers only matter when they belong to a
// higher category (bool < integral < floating). int32 tensor + 2.5 -> float32,
// int32 tensor + 2 -> int32, float32 tensor + float64 zero-dim tensor -> float32.
#pragma once

#include "core/array_ref.h"
#include "core/scalar.h"
#include "core/tensor.h"

namespace op {

ScalarType result_type(ArrayRef<TensorBase> tensors, ArrayRef<Scalar> scalars = {});

// Whether a result of type `from` may be written into a tensor of type `to` (in-place ops):
// never down a category (float -> int, int -> bool); widths within a category are fine.
constexpr bool can_cast(ScalarType from, ScalarType to) { return category(from) <= category(to); }

// The dtype to wrap a Python-style number in (a 0-d tensor) so that, operating with a tensor of
// `tensor_dtype`, it promotes exactly like the number: the tensor's own dtype when the number's
// category is not higher (int32 tensor + 2 stays int32, even when the tensor is 0-d), otherwise
// the default type of the number's category (int32 tensor + 2.5 -> float32).
inline ScalarType wrapped_number_type(const Scalar& number, ScalarType tensor_dtype) {
  const TypeCategory c = category(number.type());
  return c <= category(tensor_dtype) ? tensor_dtype : default_type_for(c);
}

}  // namespace op
