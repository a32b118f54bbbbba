// The helpers backward formulas call (autograd/helpers.h) and the values nodes save instead of
// tensors (autograd/saved_values.h), against hand-computed gradients; as_strided_backward also
// against a reference that walks the geometries element by element.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "autograd/helpers.h"
#include "autograd/saved_values.h"
#include "harness.h"
#include "ops/amax.h"
#include "ops/eq.h"
#include "ops/permute.h"
#include "ops/pow.h"
#include "ops/reshape.h"
#include "ops/slice.h"
#include "ops/transpose.h"

using namespace op;
namespace helpers = op::autograd::helpers;
using op::autograd::TensorGeometry;
using op::autograd::TypeAndSize;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TensorBase floats(std::vector<float> values, std::vector<int64_t> sizes = {}) {
  return TensorBase::from_vector<float>(values, sizes);
}

// A 0-d tensor (from_vector takes empty sizes as "one dim of all the values").
TensorBase scalar0(float value) { return op::reshape(floats({value}), std::vector<int64_t>{}); }

std::vector<int64_t> shape(const TensorBase& t) { return t.sizes().vec(); }

// Equal within a relative 1e-6 (float32 arithmetic on double expectations); inf and NaN match
// themselves.
bool close(const std::vector<double>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return false;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i]) ? !std::isnan(got[i]) : std::isinf(want[i]) ? got[i] != want[i]
                                                                         : std::fabs(got[i] - want[i]) >
                                                                               1e-6 * (1 + std::fabs(want[i])))
      return false;
  }
  return true;
}

#define CHECK_VALUES(t, ...)                                                                             \
  do {                                                                                                   \
    const std::vector<double> optest_got = (t).to_vector<double>();                                      \
    const std::vector<double> optest_want = __VA_ARGS__;                                                 \
    if (!close(optest_got, optest_want))                                                                 \
      ::optest::fail(__FILE__, __LINE__, "values of " #t "\n    got:  " + ::optest::show(optest_got) +   \
                                             "\n    want: " + ::optest::show(optest_want));              \
  } while (0)

}  // namespace

// ----- maybe_multiply, isDifferentiableType -----

TEST(helpers_maybe_multiply) {
  TensorBase t = floats({1, -2, 3});
  CHECK(helpers::maybe_multiply(t, 1).unsafe_impl() == t.unsafe_impl());  // the default alpha: no multiplication
  CHECK(helpers::maybe_multiply(t, 1.0).unsafe_impl() == t.unsafe_impl());
  CHECK(helpers::maybe_multiply(t, true).unsafe_impl() == t.unsafe_impl());
  CHECK_VALUES(helpers::maybe_multiply(t, 2), {2, -4, 6});
  CHECK_VALUES(helpers::maybe_multiply(t, -0.5), {-0.5, 1, -1.5});
  CHECK_VALUES(helpers::maybe_multiply(t, 0), {0, 0, 0});
  CHECK_EQ(helpers::maybe_multiply(t, 2).dtype(), ScalarType::Float32);
}

TEST(helpers_is_differentiable_type) {
  static_assert(helpers::isDifferentiableType(ScalarType::Float32));
  CHECK(helpers::isDifferentiableType(ScalarType::Float32));
  CHECK(helpers::isDifferentiableType(ScalarType::Float64));
  CHECK(!helpers::isDifferentiableType(ScalarType::Int32));
  CHECK(!helpers::isDifferentiableType(ScalarType::Int64));
  CHECK(!helpers::isDifferentiableType(ScalarType::Bool));
}

// ----- pow -----

TEST(helpers_pow_backward_scalar_exponent) {
  TensorBase self = floats({1, 2, 3}), grad = floats({1, 1, 2});
  CHECK_VALUES(helpers::pow_backward(grad, self, 3), {3, 12, 54});        // grad * 3 x^2
  CHECK_VALUES(helpers::pow_backward(grad, self, 0.5), {0.5, 0.5 / std::sqrt(2.0), 1 / std::sqrt(3.0)});
  CHECK_VALUES(helpers::pow_backward(grad, self, 1), {1, 1, 2});          // x^0 = 1
  CHECK_VALUES(helpers::pow_backward(grad, self, -1), {-1, -0.25, -2.0 / 9});
  // exponent 0: zeros, even at self == 0 where 0 * 0^-1 would be NaN.
  TensorBase with_zero = floats({0, 2, -3});
  TensorBase z = helpers::pow_backward(grad, with_zero, 0);
  CHECK_VALUES(z, {0, 0, 0});
  CHECK_EQ(shape(z), (std::vector<int64_t>{3}));
  CHECK_VALUES(helpers::pow_backward(grad, with_zero, 0.0), {0, 0, 0});
  CHECK_VALUES(helpers::pow_backward(grad, with_zero, 2), {0, 4, -12});
}

TEST(helpers_pow_backward_self_tensor_exponent) {
  TensorBase self = floats({2, 0, 3, 4}), exponent = floats({3, 0, -1, 0.5}), grad = floats({1, 1, 2, 1});
  // 3 * 2^2; 0 where exponent == 0 (0 * 0^-1 would be NaN); 2 * -1 * 3^-2; 0.5 / sqrt(4).
  CHECK_VALUES(helpers::pow_backward_self(grad, self, exponent), {12, 0, -2.0 / 9, 0.25});
  // A broadcast exponent gives the broadcast shape (the engine sums it back to self's).
  TensorBase rows = floats({1, 2, 3, 4}, {2, 2});
  TensorBase e = floats({2, 0}, {2});
  TensorBase g = helpers::pow_backward_self(floats({1, 1, 1, 1}, {2, 2}), rows, e);
  CHECK_EQ(shape(g), (std::vector<int64_t>{2, 2}));
  CHECK_VALUES(g, {2, 0, 6, 0});
}

TEST(helpers_pow_backward_exponent) {
  TensorBase self = floats({2, 0, 0, 3}), exponent = floats({3, 2, -1, 0});
  TensorBase result = op::pow(self, exponent);  // {8, 0, inf, 1}
  TensorBase grad = floats({1, 1, 1, 2});
  // result * log(self); 0 at self == 0 with exponent >= 0; inf * log(0) = -inf at 0^-1.
  CHECK_VALUES(helpers::pow_backward_exponent(grad, self, exponent, result),
               {8 * std::log(2.0), 0, -kInf, 2 * std::log(3.0)});
  // A Scalar base (pow.Scalar): result * log(base).
  TensorBase e = floats({1, 3}), r = op::pow(Scalar(2), e);
  CHECK_VALUES(helpers::pow_backward_exponent(floats({1, 0.5}), Scalar(2), e, r),
               {2 * std::log(2.0), 4 * std::log(2.0)});
  CHECK_VALUES(helpers::pow_backward_exponent(floats({1, 1}), Scalar(2.5), e, op::pow(Scalar(2.5), e)),
               {2.5 * std::log(2.5), 2.5 * 2.5 * 2.5 * std::log(2.5)});
  // Base 0: 0 where exponent >= 0, -inf where 0^exponent is inf.
  TensorBase e0 = floats({0, 2, -1});
  CHECK_VALUES(helpers::pow_backward_exponent(floats({1, 1, 1}), Scalar(0), e0, op::pow(Scalar(0), e0)),
               {0, 0, -kInf});
}

// ----- clamp -----

TEST(helpers_clamp_backward) {
  TensorBase self = floats({-2, -1, 0, 1, 2, static_cast<float>(kNaN)});
  TensorBase grad = floats({1, 2, 3, 4, 5, 6});
  // Both bounds: the bounds themselves pass (min <= self <= max); NaN gets 0, as PyTorch.
  CHECK_VALUES(helpers::clamp_backward(grad, self, Scalar(-1), Scalar(1)), {0, 2, 3, 4, 0, 0});
  // A None bound is no bound.
  CHECK_VALUES(helpers::clamp_backward(grad, self, std::nullopt, Scalar(1)), {1, 2, 3, 4, 0, 0});
  CHECK_VALUES(helpers::clamp_backward(grad, self, Scalar(-1), std::nullopt), {0, 2, 3, 4, 5, 0});
  CHECK(helpers::clamp_backward(grad, self, std::nullopt, std::nullopt).unsafe_impl() == grad.unsafe_impl());
  // Integer and float bounds alike; min > max lets nothing through (clamp gives max everywhere).
  CHECK_VALUES(helpers::clamp_backward(grad, self, Scalar(0.5), Scalar(2.0)), {0, 0, 0, 4, 5, 0});
  CHECK_VALUES(helpers::clamp_backward(grad, self, Scalar(1), Scalar(0)), {0, 0, 0, 0, 0, 0});
  // What the generated code passes: the node's saved std::optional<Scalar> values.
  const std::optional<Scalar> min = Scalar(0), max;
  CHECK_VALUES(helpers::clamp_backward(grad, self, min, max), {0, 0, 3, 4, 5, 0});
}

// ----- sum_to -----

TEST(helpers_sum_to_broadcast) {
  TensorBase g = floats({1, 2, 3, 4, 5, 6}, {2, 3});
  const std::vector<int64_t> row{3}, column{2, 1}, one{1, 3}, scalar{}, same{2, 3};
  CHECK_EQ(shape(helpers::sum_to(g, row)), row);  // a leading dim summed away
  CHECK_VALUES(helpers::sum_to(g, row), {5, 7, 9});
  CHECK_EQ(shape(helpers::sum_to(g, column)), column);  // a size-1 dim summed, kept
  CHECK_VALUES(helpers::sum_to(g, column), {6, 15});
  CHECK_EQ(shape(helpers::sum_to(g, one)), one);
  CHECK_VALUES(helpers::sum_to(g, one), {5, 7, 9});
  CHECK_EQ(shape(helpers::sum_to(g, scalar)), scalar);
  CHECK_VALUES(helpers::sum_to(g, scalar), {21});
  CHECK(helpers::sum_to(g, same).unsafe_impl() == g.unsafe_impl());
  TensorBase g3 = floats(std::vector<float>(24, 1), {2, 3, 4});
  const std::vector<int64_t> mid{3, 1};
  CHECK_EQ(shape(helpers::sum_to(g3, mid)), mid);
  CHECK_VALUES(helpers::sum_to(g3, mid), {8, 8, 8});
  const std::vector<int64_t> wrong{2};
  CHECK_THROWS(helpers::sum_to(g, wrong), "is not expandable to size");
}

// ----- restore_reduced_dims -----

TEST(helpers_restore_reduced_dims) {
  TensorBase t = floats({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4});  // a [2, 3, 4] input reduced over dim 1
  const std::vector<int64_t> dim1{1};
  TensorBase r = helpers::restore_reduced_dims(t, dim1, false);
  CHECK_EQ(shape(r), (std::vector<int64_t>{2, 1, 4}));
  CHECK_VALUES(r, {1, 2, 3, 4, 5, 6, 7, 8});
  const std::vector<int64_t> minus2{-2};  // counted from the end of the restored [2, 1, 4]
  CHECK_EQ(shape(helpers::restore_reduced_dims(t, minus2, false)), (std::vector<int64_t>{2, 1, 4}));
  const std::vector<int64_t> last{2};
  CHECK_EQ(shape(helpers::restore_reduced_dims(t, last, false)), (std::vector<int64_t>{2, 4, 1}));
  // Several dims, out of order: [4] from a [1, 4, 1] reduction over (2, 0).
  TensorBase v = floats({1, 2, 3, 4});
  const std::vector<int64_t> outer{2, 0};
  CHECK_EQ(shape(helpers::restore_reduced_dims(v, outer, false)), (std::vector<int64_t>{1, 4, 1}));
  // keepdim: unchanged. dim empty or None (all dims): unchanged, a 0-d t broadcasts.
  CHECK(helpers::restore_reduced_dims(t, dim1, true).unsafe_impl() == t.unsafe_impl());
  const std::vector<int64_t> none{};
  CHECK(helpers::restore_reduced_dims(t, none, false).unsafe_impl() == t.unsafe_impl());
  CHECK(helpers::restore_reduced_dims(t, std::optional<IntArrayRef>(), false).unsafe_impl() == t.unsafe_impl());
  CHECK(helpers::restore_reduced_dims(t, std::nullopt, true).unsafe_impl() == t.unsafe_impl());
  // A 0-d t (all dims reduced, or a 0-d input's sum over dim 0): unchanged, it broadcasts.
  const std::vector<int64_t> d0{0}, d01{0, 1};
  TensorBase s0 = scalar0(3);
  CHECK(helpers::restore_reduced_dims(s0, d0, false).unsafe_impl() == s0.unsafe_impl());
  CHECK(helpers::restore_reduced_dims(s0, d01, false).unsafe_impl() == s0.unsafe_impl());
  // std::optional<IntArrayRef> with a value (sum.dim_IntList's int[1]? dim).
  const std::optional<IntArrayRef> some = IntArrayRef(last);
  CHECK_EQ(shape(helpers::restore_reduced_dims(t, some, false)), (std::vector<int64_t>{2, 4, 1}));
  const std::vector<int64_t> too_far{3};
  CHECK_THROWS(helpers::restore_reduced_dims(t, too_far, false), "dimension 3 is out of range for a 3-d input");
  const std::vector<int64_t> twice{0, -4};  // -4 is 0 of the restored 4-d shape
  CHECK_THROWS(helpers::restore_reduced_dims(t, twice, false), "appears more than once");
}

// ----- scale_grad_by_count (amax/amin's formula) -----

TEST(helpers_scale_grad_by_count_ties) {
  TensorBase x = floats({1, 3, 3, 2, 2, 1}, {2, 3});
  const std::vector<int64_t> dim{1};
  TensorBase result = op::amax(x, dim, false);  // {3, 2}
  TensorBase grad = floats({6, 4});
  // The formula: scale_grad_by_count(restore(grad), restore(result) == self, dim).
  TensorBase mask = op::eq(helpers::restore_reduced_dims(result, dim, false), x);
  TensorBase g = helpers::scale_grad_by_count(helpers::restore_reduced_dims(grad, dim, false), mask, dim);
  CHECK_EQ(shape(g), (std::vector<int64_t>{2, 3}));
  CHECK_VALUES(g, {0, 3, 3, 2, 2, 0});  // each row's grad split between its two maxima
  // keepdim=true: the same, from [2, 1] gradients.
  TensorBase kept = op::amax(x, dim, true);
  TensorBase g_kept = helpers::scale_grad_by_count(helpers::restore_reduced_dims(floats({6, 4}, {2, 1}), dim, true),
                                                   op::eq(helpers::restore_reduced_dims(kept, dim, true), x), dim);
  CHECK_VALUES(g_kept, {0, 3, 3, 2, 2, 0});
  // dim=[] (all dims): a 0-d gradient over every tie of the whole tensor.
  TensorBase y = floats({1, 3, 3, 2}, {2, 2});
  const std::vector<int64_t> all{};
  TensorBase m = op::amax(y, all, false);
  CHECK_EQ(shape(m), (std::vector<int64_t>{}));
  TensorBase g_all = helpers::scale_grad_by_count(helpers::restore_reduced_dims(scalar0(6), all, false),
                                                  op::eq(helpers::restore_reduced_dims(m, all, false), y), all);
  CHECK_EQ(shape(g_all), (std::vector<int64_t>{2, 2}));
  CHECK_VALUES(g_all, {0, 3, 3, 0});
  // No tie: the whole gradient to the one maximum; the optional overload.
  TensorBase z = floats({5, 1, 2}, {3});
  const std::vector<int64_t> d0{0};
  CHECK_VALUES(helpers::scale_grad_by_count(floats({7}, {1}), op::eq(z, Scalar(5)), std::optional<IntArrayRef>(d0)),
               {7, 0, 0});
}

// ----- mean_backward -----

TEST(helpers_mean_backward) {
  const std::vector<int64_t> sizes{2, 3};
  const std::vector<int64_t> dim1{1};
  // Over dim 1, keepdim false: grad [2] -> each row's value / 3.
  TensorBase g = helpers::mean_backward(floats({3, 6}), sizes, std::optional<IntArrayRef>(dim1), 6, false);
  CHECK_EQ(shape(g), sizes);
  CHECK_VALUES(g, {1, 1, 1, 2, 2, 2});
  // keepdim true: grad [2, 1]; a plain vector dim.
  CHECK_VALUES(helpers::mean_backward(floats({3, 6}, {2, 1}), sizes, dim1, 6, true), {1, 1, 1, 2, 2, 2});
  // Over dim 0 (negative): / 2.
  const std::vector<int64_t> minus2{-2};
  CHECK_VALUES(helpers::mean_backward(floats({2, 4, 6}), sizes, minus2, 6, false), {1, 2, 3, 1, 2, 3});
  // dim None and dim [] (all dims): a 0-d grad / numel, keepdim either way.
  CHECK_VALUES(helpers::mean_backward(scalar0(12), sizes, std::nullopt, 6, false), {2, 2, 2, 2, 2, 2});
  const std::vector<int64_t> none{};
  CHECK_VALUES(helpers::mean_backward(scalar0(12), sizes, IntArrayRef(none), 6, false), {2, 2, 2, 2, 2, 2});
  CHECK_VALUES(helpers::mean_backward(floats({12}, {1, 1}), sizes, std::nullopt, 6, true), {2, 2, 2, 2, 2, 2});
  // Both dims listed: the same as all.
  const std::vector<int64_t> both{0, 1};
  CHECK_VALUES(helpers::mean_backward(scalar0(12), sizes, both, 6, false), {2, 2, 2, 2, 2, 2});
  // A 0-d input (mean over dim 0 of a scalar): the 0-d grad itself.
  const std::vector<int64_t> scalar{}, d0{0};
  TensorBase s = helpers::mean_backward(scalar0(5), scalar, d0, 1, false);
  CHECK_EQ(shape(s), scalar);
  CHECK_VALUES(s, {5});
}

// ----- permute_backwards -----

TEST(helpers_permute_backwards) {
  std::vector<float> values(24);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  TensorBase x = floats(values, {2, 3, 4});
  const std::vector<int64_t> dims{2, 0, 1};
  TensorBase y = op::permute(x, dims);
  CHECK_EQ(shape(y), (std::vector<int64_t>{4, 2, 3}));
  TensorBase back = helpers::permute_backwards(y, dims);
  CHECK_EQ(shape(back), (std::vector<int64_t>{2, 3, 4}));
  CHECK_EQ(back.to_vector<float>(), values);
  const std::vector<int64_t> negative{-1, 0, -2};  // (2, 0, 1) again
  CHECK_EQ(helpers::permute_backwards(y, negative).to_vector<float>(), values);
  const std::vector<int64_t> swap{1, 0};
  TensorBase m = floats({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK_EQ(helpers::permute_backwards(op::permute(m, swap), swap).to_vector<float>(),
           (std::vector<float>{1, 2, 3, 4, 5, 6}));
  const std::vector<int64_t> repeated{0, 0};
  CHECK_THROWS(helpers::permute_backwards(m, repeated), "appears more than once");
}

// ----- as_strided_backward -----

namespace {

// The gradient by definition: each view element adds its grad to the storage element it
// addresses; each input element then reads its storage element's sum, divided by how many input
// elements share it. Walks row-major index space; returns the input's values row-major.
std::vector<double> as_strided_reference(const std::vector<double>& grad, const TensorGeometry& input,
                                         const std::vector<int64_t>& size, const std::vector<int64_t>& stride,
                                         int64_t offset) {
  auto offsets = [](const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int64_t base) {
    std::vector<int64_t> out;
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    for (int64_t i = 0; i < n; ++i) {
      int64_t rest = i, at = base;
      for (size_t d = sizes.size(); d-- > 0;) {
        at += (rest % sizes[d]) * strides[d];
        rest /= sizes[d];
      }
      out.push_back(at);
    }
    return out;
  };
  std::vector<double> storage(256, 0.0), count(256, 0.0);
  std::vector<int64_t> view = offsets(size, stride, offset);
  for (size_t i = 0; i < view.size(); ++i) storage[view[i]] += grad[i];
  std::vector<int64_t> in = offsets(input.sizes, input.strides, input.storage_offset);
  for (int64_t at : in) count[at] += 1;
  std::vector<double> out;
  for (int64_t at : in) out.push_back(storage[at] / count[at]);
  return out;
}

TensorBase counting(int64_t n, const std::vector<int64_t>& sizes) {
  std::vector<float> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = static_cast<float>(i + 1);
  return sizes.empty() ? scalar0(values[0]) : floats(values, sizes);
}

TensorGeometry geometry(std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t offset) {
  TensorGeometry g;
  g.sizes = std::move(sizes);
  g.strides = std::move(strides);
  g.storage_offset = offset;
  return g;
}

}  // namespace

TEST(helpers_as_strided_backward_offset_view) {
  // x [2, 3] contiguous; the view x.as_strided([2, 2], [3, 1], 1) is x[:, 1:].
  TensorBase x = floats({0, 0, 0, 0, 0, 0}, {2, 3});
  const std::vector<int64_t> size{2, 2}, stride{3, 1};
  TensorBase g = helpers::as_strided_backward(floats({1, 2, 3, 4}, {2, 2}), TensorGeometry(x), size, stride, 1);
  CHECK_EQ(shape(g), (std::vector<int64_t>{2, 3}));
  CHECK_VALUES(g, {0, 1, 2, 0, 3, 4});
  // storage_offset None: the input's own (0 here): x[:, :2].
  CHECK_VALUES(helpers::as_strided_backward(floats({1, 2, 3, 4}, {2, 2}), TensorGeometry(x), size, stride,
                                            std::nullopt),
               {1, 2, 0, 3, 4, 0});
}

TEST(helpers_as_strided_backward_transposed_input) {
  // The input is the transpose of a [2, 3] base: sizes [3, 2], strides [1, 3]. Its view
  // as_strided([2], [2], 1) reads storage elements 1 and 3, i.e. input[1][0] and input[0][1].
  TensorBase base = floats({0, 0, 0, 0, 0, 0}, {2, 3});
  TensorBase input = op::transpose(base, 0, 1);
  TensorGeometry geo(input);
  CHECK_EQ(geo.sizes, (std::vector<int64_t>{3, 2}));
  CHECK_EQ(geo.strides, (std::vector<int64_t>{1, 3}));
  const std::vector<int64_t> size{2}, stride{2};
  TensorBase g = helpers::as_strided_backward(floats({10, 20}), geo, size, stride, 1);
  CHECK_EQ(shape(g), (std::vector<int64_t>{3, 2}));
  CHECK_EQ(g.strides().vec(), (std::vector<int64_t>{1, 3}));  // laid out like the input
  CHECK_VALUES(g, {0, 20, 10, 0, 0, 0});
  // The whole transposed input read back contiguously: as_strided([3, 2], [2, 1], 0).
  const std::vector<int64_t> all_size{3, 2}, all_stride{2, 1};
  TensorBase h = helpers::as_strided_backward(counting(6, {3, 2}), geo, all_size, all_stride, 0);
  // storage k gets grad k+1; input (i, j) is storage i + 3j.
  CHECK_VALUES(h, {1, 4, 2, 5, 3, 6});
}

TEST(helpers_as_strided_backward_offset_input) {
  // The input is base[2:4] of a 6-element base (storage offset 2); the view covers storage 1
  // and 2: only storage 2 is the input's (its element 0).
  TensorBase base = floats({0, 0, 0, 0, 0, 0});
  TensorBase input = op::slice(base, 0, 2, 4);
  TensorGeometry geo(input);
  CHECK_EQ(geo.storage_offset, 2);
  const std::vector<int64_t> size{2}, stride{1};
  CHECK_VALUES(helpers::as_strided_backward(floats({7, 8}), geo, size, stride, 1), {8, 0});
  // Offset None: the input's (2): the view is the input itself.
  CHECK_VALUES(helpers::as_strided_backward(floats({7, 8}), geo, size, stride, std::nullopt), {7, 8});
}

TEST(helpers_as_strided_backward_overlapping_view) {
  TensorBase x = floats({0, 0, 0, 0});
  // Sliding windows of 2 over 4 elements: [3, 2] with strides [1, 1]; shared elements sum.
  const std::vector<int64_t> size{3, 2}, stride{1, 1};
  CHECK_VALUES(helpers::as_strided_backward(counting(6, {3, 2}), TensorGeometry(x), size, stride, 0), {1, 5, 9, 6});
  // A stride-0 dim (an expand of x[:2] to [3, 2]): summed over it.
  const std::vector<int64_t> expand_size{3, 2}, expand_stride{0, 1};
  CHECK_VALUES(helpers::as_strided_backward(counting(6, {3, 2}), TensorGeometry(x), expand_size, expand_stride, 0),
               {9, 12, 0, 0});
}

TEST(helpers_as_strided_backward_overlapping_input) {
  // An expanded input (sizes [3], stride 0): its one storage element's gradient is shared
  // equally by the three elements (PyTorch's rule), so they sum to the view's.
  const std::vector<int64_t> size{1}, stride{1};
  TensorBase g = helpers::as_strided_backward(floats({6}), geometry({3}, {0}, 0), size, stride, 0);
  CHECK_VALUES(g, {2, 2, 2});
}

TEST(helpers_as_strided_backward_against_reference) {
  struct Case {
    TensorGeometry input;
    std::vector<int64_t> size, stride;
    int64_t offset;
  };
  const std::vector<Case> cases = {
      {geometry({2, 3}, {3, 1}, 0), {3, 2}, {1, 3}, 0},           // the transpose of a contiguous input
      {geometry({3, 2}, {1, 3}, 0), {2, 3}, {3, 1}, 0},           // a transposed input read contiguously
      {geometry({4, 3}, {3, 1}, 0), {2, 2, 3}, {3, 6, 1}, 0},     // interleaved rows
      {geometry({3, 2}, {2, 3}, 0), {6}, {1}, 0},                 // interleaved input, non-overlapping
      {geometry({10}, {1}, 0), {2, 3, 2}, {4, 1, 1}, 1},          // overlapping windows at an offset
      {geometry({10}, {1}, 0), {4, 3}, {2, 1}, 0},                // windows of 3, step 2
      {geometry({2, 4}, {4, 1}, 3), {3, 2}, {0, 2}, 4},           // an offset input, a stride-0 view
      {geometry({2, 2}, {1, 4}, 2), {3}, {2}, 1},                 // partly outside the input
      {geometry({4}, {0}, 1), {2, 2}, {1, 0}, 0},                 // an expanded input
      {geometry({2, 3}, {0, 1}, 0), {3}, {1}, 0},                 // a broadcast row
      {geometry({2, 3}, {3, 1}, 0), {}, {}, 4},                   // a 0-d view
  };
  for (const Case& c : cases) {
    int64_t n = 1;
    for (int64_t s : c.size) n *= s;
    TensorBase grad = counting(n, c.size);
    const std::vector<double> want =
        as_strided_reference(grad.to_vector<double>(), c.input, c.size, c.stride, c.offset);
    TensorBase got = helpers::as_strided_backward(grad, c.input, c.size, c.stride, c.offset);
    CHECK_EQ(shape(got), c.input.sizes);
    CHECK_VALUES(got, want);
  }
}

TEST(helpers_as_strided_backward_empty_and_errors) {
  const std::vector<int64_t> size{0, 2}, stride{2, 1}, two{2}, one{1};
  TensorBase x = floats({1, 2, 3, 4});
  CHECK_VALUES(helpers::as_strided_backward(floats({}, {0, 2}), TensorGeometry(x), size, stride, 0), {0, 0, 0, 0});
  TensorBase none = helpers::as_strided_backward(floats({1, 2}), geometry({0}, {1}, 0), two, one, 0);
  CHECK_EQ(shape(none), (std::vector<int64_t>{0}));
  CHECK_THROWS(helpers::as_strided_backward(floats({1, 2, 3}), TensorGeometry(x), two, one, 0),
               "grad has shape [3] but the view's size is [2]");
  const std::vector<int64_t> negative{-1};
  CHECK_THROWS(helpers::as_strided_backward(floats({1, 2}), TensorGeometry(x), two, negative, 1),
               "negative sizes and strides are not supported");
}

// ----- _to_copy_backward -----

TEST(helpers_to_copy_backward_dtype_and_device) {
  // Forward: a float32 cpu input copied to float64; backward: grad back to float32 on cpu.
  TensorBase input = floats({1.5, -2});
  const TensorOptions options = TensorOptions(input.dtype()).with_device(input.device());
  TensorBase grad = TensorBase::from_vector<double>({0.25, 3});
  TensorBase g = helpers::_to_copy_backward(grad, options);
  CHECK_EQ(g.dtype(), ScalarType::Float32);
  CHECK_EQ(g.device(), Device(DeviceType::CPU));
  CHECK_VALUES(g, {0.25, 3});
  // Already the input's dtype and device: grad itself.
  TensorBase same = floats({1, 2});
  CHECK(helpers::_to_copy_backward(same, options).unsafe_impl() == same.unsafe_impl());
  // Another device: a float32 meta input copied to cpu float64 gets its gradient on meta.
  const TensorOptions meta = TensorOptions(ScalarType::Float32).with_device(Device(DeviceType::Meta));
  TensorBase on_meta = helpers::_to_copy_backward(grad, meta);
  CHECK_EQ(on_meta.device(), Device(DeviceType::Meta));
  CHECK_EQ(on_meta.dtype(), ScalarType::Float32);
  CHECK_EQ(shape(on_meta), (std::vector<int64_t>{2}));
  // Unset fields keep grad's.
  TensorBase only_dtype = helpers::_to_copy_backward(grad, TensorOptions(ScalarType::Float32));
  CHECK_EQ(only_dtype.dtype(), ScalarType::Float32);
  CHECK_EQ(only_dtype.device(), Device(DeviceType::CPU));
}

// ----- saved values -----

TEST(helpers_type_and_size_zeros) {
  TensorBase t = TensorBase::from_vector<int64_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  TypeAndSize info(op::transpose(t, 0, 1));
  CHECK_EQ(info.sizes, (std::vector<int64_t>{3, 2}));
  CHECK_EQ(info.dtype, ScalarType::Int64);
  TensorBase z = info.zeros();
  CHECK_EQ(shape(z), (std::vector<int64_t>{3, 2}));
  CHECK_EQ(z.dtype(), ScalarType::Int64);
  CHECK_EQ(z.device(), Device(DeviceType::CPU));
  CHECK(z.is_contiguous());
  CHECK_EQ(z.to_vector<int64_t>(), (std::vector<int64_t>(6, 0)));
  TypeAndSize scalar(scalar0(7));
  CHECK_EQ(shape(scalar.zeros()), (std::vector<int64_t>{}));
  CHECK_VALUES(scalar.zeros(), {0});
  TypeAndSize on_meta(TensorBase::empty({4, 1}, TensorOptions(ScalarType::Float64).with_device(DeviceType::Meta)));
  TensorBase mz = on_meta.zeros();
  CHECK_EQ(mz.device(), Device(DeviceType::Meta));
  CHECK_EQ(mz.dtype(), ScalarType::Float64);
  CHECK_EQ(shape(mz), (std::vector<int64_t>{4, 1}));
}

TEST(helpers_tensor_geometry) {
  TensorBase base = floats({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {3, 4});
  TensorGeometry geo(op::slice(op::transpose(base, 0, 1), 0, 1, 3));  // base[:, 1:3].T
  CHECK_EQ(geo.sizes, (std::vector<int64_t>{2, 3}));
  CHECK_EQ(geo.strides, (std::vector<int64_t>{1, 4}));
  CHECK_EQ(geo.storage_offset, 1);
  CHECK_EQ(geo.dim(), 2);
  CHECK_EQ(geo.numel(), 6);
  TensorGeometry empty;
  CHECK_EQ(empty.dim(), 0);
  CHECK_EQ(empty.numel(), 1);
}

// ----- the calls generated nodes make, with the types they save -----

TEST(helpers_accept_saved_values) {
  // What AmaxBackward0, SumBackward1, MeanBackward1, PowBackward2, ClampBackward1,
  // AsStridedBackward0, ToCopyBackward0 and PermuteBackward0 keep (derivatives.yaml's formulas).
  TensorBase self = floats({1, 3, 3, 2, 2, 1}, {2, 3}), grad1 = floats({6, 4});
  std::vector<int64_t> dim{1};                            // int[1] dim
  std::optional<std::vector<int64_t>> opt_dim = dim;      // int[1]? dim
  std::vector<int64_t> self_sym_sizes = self.sizes().vec();
  int64_t self_sym_numel = self.numel();
  bool keepdim = false;
  TensorBase result = op::amax(self, dim, keepdim);
  TensorBase amax_grad = helpers::scale_grad_by_count(helpers::restore_reduced_dims(grad1, dim, keepdim),
                                                      op::eq(helpers::restore_reduced_dims(result, dim, keepdim), self),
                                                      dim);
  CHECK_VALUES(amax_grad, {0, 3, 3, 2, 2, 0});
  // The generator hands an int[]? as std::optional<IntArrayRef> over the saved vector.
  const std::optional<IntArrayRef> dim_ref = opt_dim ? std::optional<IntArrayRef>(*opt_dim) : std::nullopt;
  CHECK_EQ(shape(helpers::restore_reduced_dims(grad1, dim_ref, keepdim)), (std::vector<int64_t>{2, 1}));
  CHECK_VALUES(helpers::mean_backward(grad1, self_sym_sizes, dim_ref, self_sym_numel, keepdim),
               {2, 2, 2, 4.0 / 3, 4.0 / 3, 4.0 / 3});
  Scalar exponent = 2, base = 2;
  std::optional<Scalar> min = Scalar(2), max;
  CHECK_VALUES(helpers::pow_backward(grad1, grad1, exponent), {72, 32});
  CHECK_VALUES(helpers::pow_backward_exponent(grad1, base, grad1, grad1),
               {6 * 6 * std::log(2.0), 4 * 4 * std::log(2.0)});
  CHECK_VALUES(helpers::clamp_backward(self, self, min, max), {0, 3, 3, 2, 2, 0});
  TensorGeometry self_geometry(self);
  std::vector<int64_t> size{3}, stride{1};
  std::optional<int64_t> storage_offset;
  CHECK_VALUES(helpers::as_strided_backward(floats({1, 2, 3}), self_geometry, size, stride, storage_offset),
               {1, 2, 3, 0, 0, 0});
  TensorOptions self_options = TensorOptions(self.dtype()).with_device(self.device());
  CHECK(helpers::_to_copy_backward(self, self_options).unsafe_impl() == self.unsafe_impl());
  std::vector<int64_t> dims{1, 0};
  CHECK_EQ(shape(helpers::permute_backwards(op::permute(self, dims), dims)), self_sym_sizes);
  TypeAndSize self_info(self);
  CHECK_VALUES(self_info.zeros(), {0, 0, 0, 0, 0, 0});
  CHECK_EQ(shape(helpers::sum_to(self, std::vector<int64_t>{3})), (std::vector<int64_t>{3}));
}
