// CPU loops of the unary stubs: neg, abs, the float functions (exp, log, sqrt, sin, cos, tanh,
// sigmoid; meta() already made integral inputs compute in float32) and clamp.
// The optimize pragma comes first: see binary_kernels.cpp.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic", "no-trapping-math", "no-math-errno")
#endif

#include <cmath>
#include <cstdint>
#include <optional>

#include "core/scalar.h"
#include "core/tensor_iterator.h"
#include "native/cpu/pointwise_math.h"
#include "native/cpu/vec_exp.h"
#include "native/stubs.h"

namespace op::native::cpu {

#if defined(__x86_64__)
void vec_expf_row_avx2(float* out, const float* in, int64_t n);  // exp_avx2.cpp
#endif

namespace {

using FloatRow = void (*)(float* out, const float* in, int64_t n);

// The widest exp row this cpu runs.
FloatRow best_expf_row() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &vec_expf_row_avx2;
#endif
  return &vec_expf_row;
}

void neg_kernel(TensorIteratorBase& it) {
  visit_dtype(it.common_dtype(), "neg", [&](auto tag) {
    using T = decltype(tag);
    it.for_each_element<T>([](T x) { return wrapping_neg(x); });
  });
}

void abs_kernel(TensorIteratorBase& it) {
  visit_dtype(it.common_dtype(), "abs", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>)
      it.for_each_element<T>([](T x) { return std::fabs(x); });
    else
      it.for_each_element<T>([](T x) { return x < T(0) ? wrapping_neg(x) : x; });
  });
}

void exp_kernel(TensorIteratorBase& it) {
  visit_floating_dtype(it.common_dtype(), "exp", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float>) {
      static const FloatRow row = best_expf_row();
      it.for_each_element<float>([](float x) { return vec_expf(x); }, row);
    } else {
      it.for_each_element<T>([](T x) { return std::exp(x); });
    }
  });
}

void sigmoid_kernel(TensorIteratorBase& it) {
  visit_floating_dtype(it.common_dtype(), "sigmoid", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float>)
      it.for_each_element<float>([](float x) { return 1.0f / (1.0f + vec_expf(-x)); });
    else
      it.for_each_element<T>([](T x) { return T(1) / (T(1) + std::exp(-x)); });
  });
}

// log, sqrt, sin, cos, tanh: the C library's functions in the common dtype.
template <class Fn>
void float_unary(TensorIteratorBase& it, const char* op_name, Fn fn) {
  visit_floating_dtype(it.common_dtype(), op_name, [&](auto tag) {
    using T = decltype(tag);
    it.for_each_element<T>([fn](T x) -> T { return fn(x); });
  });
}

void log_kernel(TensorIteratorBase& it) { float_unary(it, "log", [](auto x) { return std::log(x); }); }
void sqrt_kernel(TensorIteratorBase& it) { float_unary(it, "sqrt", [](auto x) { return std::sqrt(x); }); }
void sin_kernel(TensorIteratorBase& it) { float_unary(it, "sin", [](auto x) { return std::sin(x); }); }
void cos_kernel(TensorIteratorBase& it) { float_unary(it, "cos", [](auto x) { return std::cos(x); }); }
void tanh_kernel(TensorIteratorBase& it) { float_unary(it, "tanh", [](auto x) { return std::tanh(x); }); }

// NaN in the input or a bound gives NaN; min > max gives max (like numpy.clip).
void clamp_kernel(TensorIteratorBase& it, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  visit_dtype(it.common_dtype(), "clamp", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      fail("clamp: bool tensors are not supported");
    } else if (min && max) {
      const T lo = min->to<T>(), hi = max->to<T>();
      it.for_each_element<T>([lo, hi](T x) { return min_propagating(max_propagating(x, lo), hi); });
    } else if (min) {
      const T lo = min->to<T>();
      it.for_each_element<T>([lo](T x) { return max_propagating(x, lo); });
    } else {
      OP_CHECK(max.has_value(), "clamp: at least one of 'min' or 'max' must not be None");
      const T hi = max->to<T>();
      it.for_each_element<T>([hi](T x) { return min_propagating(x, hi); });
    }
  });
}

}  // namespace

OP_REGISTER_STUB(neg_stub, CPU, &neg_kernel);
OP_REGISTER_STUB(abs_stub, CPU, &abs_kernel);
OP_REGISTER_STUB(exp_stub, CPU, &exp_kernel);
OP_REGISTER_STUB(log_stub, CPU, &log_kernel);
OP_REGISTER_STUB(sqrt_stub, CPU, &sqrt_kernel);
OP_REGISTER_STUB(sin_stub, CPU, &sin_kernel);
OP_REGISTER_STUB(cos_stub, CPU, &cos_kernel);
OP_REGISTER_STUB(tanh_stub, CPU, &tanh_kernel);
OP_REGISTER_STUB(sigmoid_stub, CPU, &sigmoid_kernel);
OP_REGISTER_STUB(clamp_stub, CPU, &clamp_kernel);

}  // namespace op::native::cpu
