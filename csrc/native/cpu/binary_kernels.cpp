// CPU loops of the binary arithmetic stubs: add (sub passes -alpha), mul, true division,
// maximum, minimum, pow. Each computes in the iterator's common dtype.
//
// First, before any include: let GCC vectorize rows of unknown length (-O2 alone only
// vectorizes loops that need no remainder) and if-convert floating point selects (no FP
// exceptions are ever trapped, so assuming none trap loses nothing). Everything the loops
// inline must be compiled under the same options, hence before the includes.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic", "no-trapping-math", "no-math-errno")
#endif

#include <cmath>

#include "core/scalar.h"
#include "core/tensor_iterator.h"
#include "native/cpu/pointwise_math.h"
#include "native/stubs.h"

namespace op::native::cpu {
namespace {

void add_kernel(TensorIteratorBase& it, const Scalar& alpha) {
  visit_dtype(it.common_dtype(), "add", [&](auto tag) {
    using T = decltype(tag);
    const T a = alpha.to<T>();
    if (a == T(1))
      it.for_each_element<T>([](T x, T y) { return wrapping_add(x, y); });
    else
      it.for_each_element<T>([a](T x, T y) { return wrapping_add(x, wrapping_mul(a, y)); });
  });
}

void mul_kernel(TensorIteratorBase& it) {
  visit_dtype(it.common_dtype(), "mul", [&](auto tag) {
    using T = decltype(tag);
    it.for_each_element<T>([](T x, T y) { return wrapping_mul(x, y); });
  });
}

void div_true_kernel(TensorIteratorBase& it) {
  visit_floating_dtype(it.common_dtype(), "div", [&](auto tag) {
    using T = decltype(tag);
    it.for_each_element<T>([](T x, T y) { return x / y; });
  });
}

void maximum_kernel(TensorIteratorBase& it) {
  visit_dtype(it.common_dtype(), "maximum", [&](auto tag) {
    using T = decltype(tag);
    it.for_each_element<T>([](T x, T y) { return max_propagating(x, y); });
  });
}

void minimum_kernel(TensorIteratorBase& it) {
  visit_dtype(it.common_dtype(), "minimum", [&](auto tag) {
    using T = decltype(tag);
    it.for_each_element<T>([](T x, T y) { return min_propagating(x, y); });
  });
}

void pow_tensor_kernel(TensorIteratorBase& it) {
  visit_dtype(it.common_dtype(), "pow", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>)
      it.for_each_element<T>([](T x, T y) { return std::pow(x, y); });
    else if constexpr (is_int_v<T>)
      it.for_each_element<T>([](T x, T y) { return integer_power(x, y); });
    else
      fail("pow: not supported for bool tensors");
  });
}

}  // namespace

OP_REGISTER_STUB(add_stub, CPU, &add_kernel);
OP_REGISTER_STUB(mul_stub, CPU, &mul_kernel);
OP_REGISTER_STUB(div_true_stub, CPU, &div_true_kernel);
OP_REGISTER_STUB(maximum_stub, CPU, &maximum_kernel);
OP_REGISTER_STUB(minimum_stub, CPU, &minimum_kernel);
OP_REGISTER_STUB(pow_tensor_stub, CPU, &pow_tensor_kernel);

}  // namespace op::native::cpu
