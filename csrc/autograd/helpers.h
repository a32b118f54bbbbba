// Helpers the backward formulas and the engine share, through the dispatcher's operators so they
// work on every device. The engine uses sum_to and is_expandable_to; the generated backward
// nodes call the formula helpers of derivatives.yaml's header as
// op::autograd::helpers::<name>(...), with the values a node saved (std::vector<int64_t> for
// int[], Scalar, std::optional<Scalar>, int64_t, bool, TensorGeometry, TensorOptions).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "autograd/saved_values.h"
#include "core/array_ref.h"
#include "core/scalar.h"
#include "core/scalar_type.h"
#include "core/tensor.h"
#include "core/tensor_options.h"

namespace op::autograd {

// Whether `shape` broadcasts to `desired` (numpy's rule, trailing dimensions aligned).
bool is_expandable_to(IntArrayRef shape, IntArrayRef desired);

// Reduces a gradient of a broadcast result to `shape` (the inverse of expanding to its sizes):
// sums the leading dimensions `shape` lacks and, keeping them, those where `shape` has 1. The
// tensor itself when the sizes already match. Throws op::Error when `shape` does not broadcast
// to t's sizes.
TensorBase sum_to(const TensorBase& t, IntArrayRef shape);

// The helpers derivatives.yaml's formulas may call (its header gives each one's meaning), with
// PyTorch's semantics for real dtypes (torch/csrc/autograd/FunctionsManual.cpp). A dim list is
// accepted as IntArrayRef (int[]), std::optional<IntArrayRef> (int[]?, None meaning all dims) or
// a saved std::vector<int64_t>.
namespace helpers {

using op::autograd::sum_to;

// t * s, or t itself when s is 1 (the integer 1, 1.0 or true, as PyTorch's maybe_multiply).
TensorBase maybe_multiply(const TensorBase& t, const Scalar& s);

// d(self^exponent)/dself for a Scalar exponent: grad * exponent * self^(exponent - 1); zeros
// like self when exponent is 0 (no 0 * inf at self == 0).
TensorBase pow_backward(const TensorBase& grad, const TensorBase& self, const Scalar& exponent);
// The same for a Tensor exponent (broadcast with self), 0 where exponent == 0.
TensorBase pow_backward_self(const TensorBase& grad, const TensorBase& self, const TensorBase& exponent);
// d(self^exponent)/dexponent: grad * result * log(self), 0 where self == 0 and exponent >= 0.
TensorBase pow_backward_exponent(const TensorBase& grad, const TensorBase& self, const TensorBase& exponent,
                                 const TensorBase& result);
TensorBase pow_backward_exponent(const TensorBase& grad, const Scalar& self, const TensorBase& exponent,
                                 const TensorBase& result);

// grad where min <= self <= max (a None bound is no bound; NaN in self gets 0), 0 elsewhere;
// grad itself when both bounds are None.
TensorBase clamp_backward(const TensorBase& grad, const TensorBase& self, const std::optional<Scalar>& min,
                          const std::optional<Scalar>& max);

// t (a reduction's output or gradient) with the dims the reduction over `dim` removed put back as
// size-1 dims; t itself when keepdim is true, dim is empty/None or t is 0-d (every dim reduced,
// or a 0-d input: a 0-d t broadcasts like the restored [1, ..., 1]). Negative dims count from
// the end of the restored shape.
TensorBase restore_reduced_dims(const TensorBase& t, IntArrayRef dim, bool keepdim);
TensorBase restore_reduced_dims(const TensorBase& t, std::optional<IntArrayRef> dim, bool keepdim);
TensorBase restore_reduced_dims(const TensorBase& t, const std::vector<int64_t>& dim, bool keepdim);

// (grad / mask.sum(dim, keepdim=true)) * mask, empty dim meaning all dims: amax/amin's gradient
// shared equally among the elements that tie for the extreme.
TensorBase scale_grad_by_count(const TensorBase& grad, const TensorBase& mask, IntArrayRef dim);
TensorBase scale_grad_by_count(const TensorBase& grad, const TensorBase& mask, std::optional<IntArrayRef> dim);
TensorBase scale_grad_by_count(const TensorBase& grad, const TensorBase& mask, const std::vector<int64_t>& dim);

// mean.dim's gradient: restore_reduced_dims(grad, dim, keepdim) expanded to `sizes` (the input's)
// and divided by the number of elements each output averaged (the product of the reduced sizes;
// `numel` when dim is None or empty).
TensorBase mean_backward(const TensorBase& grad, IntArrayRef sizes, std::optional<IntArrayRef> dim, int64_t numel,
                         bool keepdim);
TensorBase mean_backward(const TensorBase& grad, IntArrayRef sizes, IntArrayRef dim, int64_t numel, bool keepdim);
TensorBase mean_backward(const TensorBase& grad, IntArrayRef sizes, const std::vector<int64_t>& dim, int64_t numel,
                         bool keepdim);

// grad permuted by the inverse of the permutation `dims` (negative dims wrap).
TensorBase permute_backwards(const TensorBase& grad, IntArrayRef dims);

// as_strided's gradient for an input laid out as `input` (sizes, strides, storage offset): grad
// scattered with the view's size, stride and storage_offset (None: the input's) into zeros that
// cover the storage both address, summed where the view overlaps itself (a stride-0 dim, a
// sliding window), and read back with the input's geometry. Where the input itself may overlap
// (an expanded input), each storage element's gradient is split equally among the input
// elements that share it, as PyTorch does. Strides must be non-negative.
TensorBase as_strided_backward(const TensorBase& grad, const TensorGeometry& input, IntArrayRef size,
                               IntArrayRef stride, std::optional<int64_t> storage_offset);

// grad converted back to the input's dtype and device (options' unset fields: grad's own); grad
// itself when they already match.
TensorBase _to_copy_backward(const TensorBase& grad, const TensorOptions& options);

// Whether a tensor of this dtype can carry gradients: the floating-point dtypes.
constexpr bool isDifferentiableType(ScalarType dtype) { return is_floating(dtype); }

}  // namespace helpers

}  // namespace op::autograd
