// CPU loops of log_softmax_stub and log_softmax_backward_stub. The operands are contiguous with
// one shape, seen as [outer, n, inner] around the softmax dimension (n its size):
//   - inner 1 (the last dimension: a classifier's logits): each row of n is a contiguous run,
//     folded into its maximum and sum with plain loops;
//   - otherwise the n rows of `inner` elements are folded element-wise into `inner` maxima and
//     sums, so memory is still read in order.
// Sums accumulate in double; exp of float32 uses the vectorizable vec_expf.
// The optimize pragma comes first: see binary_kernels.cpp.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic", "no-trapping-math", "no-math-errno")
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/tensor.h"
#include "native/cpu/pointwise_math.h"
#include "native/cpu/vec_exp.h"
#include "native/softmax_rows.h"
#include "native/stubs.h"

namespace op::native::cpu {
namespace {

template <class T>
T exp_of(T x) {
  if constexpr (std::is_same_v<T, float>)
    return vec_expf(x);
  else
    return std::exp(x);
}

// best, or x when x is larger or NaN: a NaN, once taken, stays.
template <class T>
T max_step(T best, T x) {
  return (x > best || x != x) ? x : best;
}

template <class T>
void log_softmax_contiguous_rows(T* out, const T* in, const Rows& r) {
  for (int64_t row = 0; row < r.outer; ++row) {
    const T* x = in + row * r.n;
    T* y = out + row * r.n;
    T m = -std::numeric_limits<T>::infinity();
    for (int64_t i = 0; i < r.n; ++i) m = max_step(m, x[i]);
    for (int64_t i = 0; i < r.n; ++i) y[i] = exp_of(x[i] - m);  // y as scratch
    double sum = 0;
    for (int64_t i = 0; i < r.n; ++i) sum += y[i];
    const T log_sum = static_cast<T>(std::log(sum));
    for (int64_t i = 0; i < r.n; ++i) y[i] = (x[i] - m) - log_sum;
  }
}

template <class T>
void log_softmax_strided_rows(T* out, const T* in, const Rows& r) {
  std::vector<T> m(static_cast<size_t>(r.inner)), log_sum(static_cast<size_t>(r.inner));
  std::vector<double> sum(static_cast<size_t>(r.inner));
  for (int64_t o = 0; o < r.outer; ++o) {
    const T* x = in + o * r.n * r.inner;
    T* y = out + o * r.n * r.inner;
    std::fill(m.begin(), m.end(), -std::numeric_limits<T>::infinity());
    std::fill(sum.begin(), sum.end(), 0.0);
    for (int64_t k = 0; k < r.n; ++k)
      for (int64_t j = 0; j < r.inner; ++j) m[j] = max_step(m[j], x[k * r.inner + j]);
    for (int64_t k = 0; k < r.n; ++k)
      for (int64_t j = 0; j < r.inner; ++j) sum[j] += exp_of(x[k * r.inner + j] - m[j]);
    for (int64_t j = 0; j < r.inner; ++j) log_sum[j] = static_cast<T>(std::log(sum[j]));
    for (int64_t k = 0; k < r.n; ++k)
      for (int64_t j = 0; j < r.inner; ++j) y[k * r.inner + j] = (x[k * r.inner + j] - m[j]) - log_sum[j];
  }
}

// grad_input = grad_output - exp(output) * sum(grad_output) along the rows.
template <class T>
void log_softmax_backward_rows(T* grad_input, const T* grad_output, const T* output, const Rows& r) {
  std::vector<double> sum(static_cast<size_t>(r.inner));
  for (int64_t o = 0; o < r.outer; ++o) {
    const int64_t base = o * r.n * r.inner;
    const T* g = grad_output + base;
    const T* y = output + base;
    T* gi = grad_input + base;
    std::fill(sum.begin(), sum.end(), 0.0);
    for (int64_t k = 0; k < r.n; ++k)
      for (int64_t j = 0; j < r.inner; ++j) sum[j] += g[k * r.inner + j];
    for (int64_t k = 0; k < r.n; ++k)
      for (int64_t j = 0; j < r.inner; ++j) {
        const int64_t i = k * r.inner + j;
        gi[i] = g[i] - exp_of(y[i]) * static_cast<T>(sum[j]);
      }
  }
}

void log_softmax_kernel(const TensorBase& out, const TensorBase& self, int64_t dim) {
  const Rows r = rows_around(self, dim);
  visit_floating_dtype(self.dtype(), "_log_softmax", [&](auto tag) {
    using T = decltype(tag);
    if (r.inner == 1)
      log_softmax_contiguous_rows(out.data_ptr<T>(), self.data_ptr<T>(), r);
    else
      log_softmax_strided_rows(out.data_ptr<T>(), self.data_ptr<T>(), r);
  });
}

void log_softmax_backward_kernel(const TensorBase& grad_input, const TensorBase& grad_output,
                                 const TensorBase& output, int64_t dim) {
  const Rows r = rows_around(output, dim);
  visit_floating_dtype(output.dtype(), "_log_softmax_backward_data", [&](auto tag) {
    using T = decltype(tag);
    log_softmax_backward_rows(grad_input.data_ptr<T>(), grad_output.data_ptr<T>(), output.data_ptr<T>(), r);
  });
}

}  // namespace

OP_REGISTER_STUB(log_softmax_stub, CPU, &log_softmax_kernel);
OP_REGISTER_STUB(log_softmax_backward_stub, CPU, &log_softmax_backward_kernel);

}  // namespace op::native::cpu
