// opgen: backward only (opgen/selection/sources.py: an inference-only selection keeps no operator it calls)
#include "autograd/helpers.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "ops/_to_copy.h"
#include "ops/div.h"
#include "ops/eq.h"
#include "ops/expand_ops.h"
#include "ops/ge.h"
#include "ops/le.h"
#include "ops/log.h"
#include "ops/mul.h"
#include "ops/permute.h"
#include "ops/pow.h"
#include "ops/reshape.h"
#include "ops/sub.h"
#include "ops/sum.h"
#include "ops/where.h"
#include "ops/zeros_like.h"

namespace op::autograd {

bool is_expandable_to(IntArrayRef shape, IntArrayRef desired) {
  if (shape.size() > desired.size()) return false;
  size_t offset = desired.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != desired[offset + i] && shape[i] != 1) return false;
  return true;
}

TensorBase sum_to(const TensorBase& t, IntArrayRef shape) {
  IntArrayRef sizes = t.sizes();
  if (sizes == shape) return t;
  OP_CHECK(is_expandable_to(shape, sizes), "sum_to: size ", str_list(shape), " is not expandable to size ",
           str_list(sizes));
  size_t leading = sizes.size() - shape.size();
  std::vector<int64_t> dims;
  for (size_t d = 0; d < leading; ++d) dims.push_back(static_cast<int64_t>(d));
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == 1 && sizes[leading + i] != 1) dims.push_back(static_cast<int64_t>(leading + i));
  TensorBase reduced = dims.empty() ? t : op::sum(t, std::optional<IntArrayRef>(dims), /*keepdim=*/true);
  return leading > 0 ? op::reshape(reduced, shape) : reduced;
}

namespace helpers {

namespace {

// d in [-n, n) -> [0, n); a 0-d shape takes 0 and -1 as if it were 1-d (as the reductions do).
int64_t wrap(int64_t d, int64_t n, const char* what) {
  const int64_t m = std::max<int64_t>(n, 1);
  OP_CHECK(d >= -m && d < m, what, ": dimension ", d, " is out of range for a ", n,
           "-d tensor (expected a dimension in [", -m, ", ", m - 1, "])");
  return d < 0 ? d + m : d;
}

bool is_one(const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Bool: return s.to<bool>();
    case Scalar::Kind::Int: return s.to<int64_t>() == 1;
    case Scalar::Kind::Double: return s.to<double>() == 1.0;
  }
  return false;
}

Scalar minus_one(const Scalar& s) {
  return s.is_floating_point() ? Scalar(s.to<double>() - 1.0) : Scalar(s.to<int64_t>() - 1);
}

}  // namespace

TensorBase maybe_multiply(const TensorBase& t, const Scalar& s) { return is_one(s) ? t : op::mul(t, s); }

// ----- pow -----

TensorBase pow_backward(const TensorBase& grad, const TensorBase& self, const Scalar& exponent) {
  if (exponent.to<double>() == 0.0) return op::zeros_like(self);
  return op::mul(grad, op::mul(op::pow(self, minus_one(exponent)), exponent));
}

TensorBase pow_backward_self(const TensorBase& grad, const TensorBase& self, const TensorBase& exponent) {
  TensorBase d = op::mul(grad, op::mul(exponent, op::pow(self, op::sub(exponent, 1))));
  return op::where(op::eq(exponent, 0), Scalar(0), d);
}

TensorBase pow_backward_exponent(const TensorBase& grad, const TensorBase& self, const TensorBase& exponent,
                                 const TensorBase& result) {
  TensorBase d = op::mul(result, op::log(self));
  // 0^e for e >= 0 is flat in e at the limit PyTorch takes (0 * -inf would be NaN).
  d = op::where(op::ge(exponent, 0), op::where(op::eq(self, 0), Scalar(0), d), d);
  return op::mul(grad, d);
}

TensorBase pow_backward_exponent(const TensorBase& grad, const Scalar& self, const TensorBase& exponent,
                                 const TensorBase& result) {
  const double base = self.to<double>();
  TensorBase d = op::mul(result, Scalar(std::log(base)));
  if (base == 0.0) d = op::where(op::ge(exponent, 0), Scalar(0), d);
  return op::mul(grad, d);
}

// ----- clamp -----

TensorBase clamp_backward(const TensorBase& grad, const TensorBase& self, const std::optional<Scalar>& min,
                          const std::optional<Scalar>& max) {
  TensorBase out = grad;
  if (min) out = op::where(op::ge(self, *min), out, Scalar(0));
  if (max) out = op::where(op::le(self, *max), out, Scalar(0));
  return out;
}

// ----- reductions -----

TensorBase restore_reduced_dims(const TensorBase& t, IntArrayRef dim, bool keepdim) {
  // A 0-d t broadcasts like the restored [1, ..., 1], and may come from a 0-d input (sum(x, 0)
  // of a 0-d x), whose gradient has no dim to put back.
  if (keepdim || dim.empty() || t.dim() == 0) return t;
  const int64_t total = t.dim() + static_cast<int64_t>(dim.size());
  std::vector<bool> reduced(static_cast<size_t>(total), false);
  for (int64_t d : dim) {
    OP_CHECK(d >= -total && d < total, "restore_reduced_dims: dimension ", d, " is out of range for a ", total,
             "-d input (", t.dim(), "-d output reduced over ", str_list(dim), ")");
    const int64_t w = d < 0 ? d + total : d;
    OP_CHECK(!reduced[w], "restore_reduced_dims: dimension ", d, " appears more than once in ", str_list(dim));
    reduced[w] = true;
  }
  std::vector<int64_t> shape;
  IntArrayRef sizes = t.sizes();
  size_t next = 0;
  for (int64_t i = 0; i < total; ++i) shape.push_back(reduced[i] ? 1 : sizes[next++]);
  return op::reshape(t, shape);
}

TensorBase restore_reduced_dims(const TensorBase& t, std::optional<IntArrayRef> dim, bool keepdim) {
  return restore_reduced_dims(t, dim.value_or(IntArrayRef()), keepdim);
}

TensorBase restore_reduced_dims(const TensorBase& t, const std::vector<int64_t>& dim, bool keepdim) {
  return restore_reduced_dims(t, IntArrayRef(dim), keepdim);
}

TensorBase scale_grad_by_count(const TensorBase& grad, const TensorBase& mask, IntArrayRef dim) {
  TensorBase count = op::sum(mask, std::optional<IntArrayRef>(dim), /*keepdim=*/true);
  return op::mul(op::div(grad, count), mask);
}

TensorBase scale_grad_by_count(const TensorBase& grad, const TensorBase& mask, std::optional<IntArrayRef> dim) {
  return scale_grad_by_count(grad, mask, dim.value_or(IntArrayRef()));
}

TensorBase scale_grad_by_count(const TensorBase& grad, const TensorBase& mask, const std::vector<int64_t>& dim) {
  return scale_grad_by_count(grad, mask, IntArrayRef(dim));
}

TensorBase mean_backward(const TensorBase& grad, IntArrayRef sizes, std::optional<IntArrayRef> dim, int64_t numel,
                         bool keepdim) {
  const bool all = !dim || dim->empty();
  int64_t count = numel;
  if (!all) {
    count = 1;
    const int64_t n = static_cast<int64_t>(sizes.size());
    for (int64_t d : *dim) count *= n == 0 ? 1 : sizes[wrap(d, n, "mean_backward")];
  }
  return op::div(op::ops::expand::call(restore_reduced_dims(grad, dim, keepdim), sizes, false), count);
}

TensorBase mean_backward(const TensorBase& grad, IntArrayRef sizes, IntArrayRef dim, int64_t numel, bool keepdim) {
  return mean_backward(grad, sizes, std::optional<IntArrayRef>(dim), numel, keepdim);
}

TensorBase mean_backward(const TensorBase& grad, IntArrayRef sizes, const std::vector<int64_t>& dim, int64_t numel,
                         bool keepdim) {
  return mean_backward(grad, sizes, std::optional<IntArrayRef>(IntArrayRef(dim)), numel, keepdim);
}

// ----- views and copies -----

TensorBase permute_backwards(const TensorBase& grad, IntArrayRef dims) {
  const int64_t n = static_cast<int64_t>(dims.size());
  std::vector<int64_t> inverse(dims.size(), -1);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t d = wrap(dims[i], n, "permute_backwards");
    OP_CHECK(inverse[d] == -1, "permute_backwards: dimension ", dims[i], " appears more than once in ",
             str_list(dims));
    inverse[d] = i;
  }
  return op::permute(grad, inverse);
}

TensorBase _to_copy_backward(const TensorBase& grad, const TensorOptions& options) {
  const bool same_dtype = !options.dtype || *options.dtype == grad.dtype();
  const bool same_device = !options.device || (options.device->type() == grad.device().type() &&
                                               (!options.device->has_index() || *options.device == grad.device()));
  if (same_dtype && same_device) return grad;
  return op::_to_copy(grad, options.dtype, std::nullopt, options.device);
}

}  // namespace helpers

}  // namespace op::autograd
