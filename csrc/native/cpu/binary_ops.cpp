// add and mul: structured elementwise operators. meta() broadcasts and promotes through
// TensorIteratorBase; the CPU impl() computes in the common dtype over host memory.
#include <type_traits>

#include "core/error.h"
#include "core/scalar.h"
#include "core/scalar_type.h"
#include "ops/add_native.h"
#include "ops/mul_native.h"

namespace op {

namespace {

// alpha must not change the category the operation computes in.
void check_alpha(ScalarType common, const Scalar& alpha) {
  OP_CHECK(!alpha.is_bool() || common == ScalarType::Bool, "add: a bool alpha is only allowed when the result is bool, not ",
           to_string(common));
  OP_CHECK(is_floating(common) || !alpha.is_floating_point(), "add: alpha ", alpha.to_string(),
           " is a floating point number but the inputs are ", to_string(common), "; use an integer alpha");
}

// x + a * y and x * y; bools add as "or" and multiply as "and".
template <class T>
T add_scaled(T x, T y, T a) {
  if constexpr (std::is_same_v<T, bool>)
    return x || (a && y);
  else
    return static_cast<T>(x + a * y);
}

template <class T>
T multiply(T x, T y) {
  if constexpr (std::is_same_v<T, bool>)
    return x && y;
  else
    return static_cast<T>(x * y);
}

}  // namespace

void meta::structured_add_Tensor::meta(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  build_borrowing_binary_op(maybe_get_output(), self, other, "add");
  check_alpha(common_dtype(), alpha);
}

void native::structured_add_out::impl(const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& out) {
  OP_DISPATCH_ALL_TYPES(common_dtype(), "add", {
    const scalar_t a = alpha.to<scalar_t>();
    if (a == scalar_t(1))
      for_each_element<scalar_t>([](scalar_t x, scalar_t y) { return add_scaled(x, y, scalar_t(1)); });
    else
      for_each_element<scalar_t>([a](scalar_t x, scalar_t y) { return add_scaled(x, y, a); });
  });
}

void meta::structured_mul_Tensor::meta(const Tensor& self, const Tensor& other) {
  build_borrowing_binary_op(maybe_get_output(), self, other, "mul");
}

void native::structured_mul_out::impl(const Tensor& self, const Tensor& other, const Tensor& out) {
  OP_DISPATCH_ALL_TYPES(common_dtype(), "mul", {
    for_each_element<scalar_t>(&multiply<scalar_t>);
  });
}

}  // namespace op
