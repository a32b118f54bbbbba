// Binary arithmetic: add, sub, mul, div (true division), maximum, minimum, pow. meta()
// broadcasts and promotes through TensorIteratorBase; impl() runs the device's loop (a stub).
// The Scalar overloads wrap the number in a 0-d tensor and call the Tensor operator.
#include "core/error.h"
#include "core/scalar.h"
#include "core/scalar_type.h"
#include "native/stubs.h"
#include "native/wrapped_number.h"
#include "ops/add.h"
#include "ops/add_native.h"
#include "ops/div.h"
#include "ops/div_native.h"
#include "ops/maximum_native.h"
#include "ops/minimum_native.h"
#include "ops/mul.h"
#include "ops/mul_native.h"
#include "ops/pow.h"
#include "ops/pow_native.h"
#include "ops/sub.h"
#include "ops/sub_native.h"

namespace op {

namespace {

// alpha must not change the category the operation computes in.
void check_alpha(const char* op_name, ScalarType common, const Scalar& alpha) {
  OP_CHECK(!alpha.is_bool() || common == ScalarType::Bool, op_name,
           ": a bool alpha is only allowed when the result is bool, not ", to_string(common));
  OP_CHECK(is_floating(common) || !alpha.is_floating_point(), op_name, ": alpha ", alpha.to_string(),
           " is a floating point number but the inputs are ", to_string(common), "; use an integer alpha");
}

Scalar negated(const Scalar& s) {
  if (s.is_floating_point()) return Scalar(-s.to<double>());
  return Scalar(-s.to<int64_t>());  // bool alphas never reach sub (bool inputs are rejected)
}

// Integral and bool bases with a negative integral exponent have no integral result.
void check_integral_power(const char* op_name, ScalarType base, const Scalar& exponent) {
  OP_CHECK(!(category(base) != TypeCategory::Floating && !exponent.is_floating_point() && exponent.to<int64_t>() < 0),
           op_name, ": integers to negative integer powers are not allowed (exponent ", exponent.to_string(), ")");
}

}  // namespace

// ----- add / sub -----

void meta::structured_add_Tensor::meta(const TensorBase& self, const TensorBase& other, const Scalar& alpha) {
  build_borrowing_binary_op(maybe_get_output(), self, other, "add");
  check_alpha("add", common_dtype(), alpha);
}

void native::structured_add_out::impl(const TensorBase&, const TensorBase&, const Scalar& alpha, const TensorBase&) {
  add_stub(device().type(), *this, alpha);
}

void meta::structured_sub_Tensor::meta(const TensorBase& self, const TensorBase& other, const Scalar& alpha) {
  OP_CHECK(self.dtype() != ScalarType::Bool && other.dtype() != ScalarType::Bool,
           "sub: subtraction with bool tensors is not supported; use logical_xor (or logical_not to invert a mask)");
  build_borrowing_binary_op(maybe_get_output(), self, other, "sub");
  check_alpha("sub", common_dtype(), alpha);
}

void native::structured_sub_out::impl(const TensorBase&, const TensorBase&, const Scalar& alpha, const TensorBase&) {
  add_stub(device().type(), *this, negated(alpha));
}

TensorBase native::add_scalar(const TensorBase& self, const Scalar& other, const Scalar& alpha) {
  return op::add(self, wrapped_number(other, self), alpha);
}

TensorBase& native::add_scalar_(TensorBase& self, const Scalar& other, const Scalar& alpha) {
  return ops::add__Tensor::call(self, wrapped_number(other, self), alpha);
}

// A bool number is rejected like a bool tensor, though its wrapper may take self's dtype.
TensorBase native::sub_scalar(const TensorBase& self, const Scalar& other, const Scalar& alpha) {
  OP_CHECK(!other.is_bool(), "sub: subtraction with bool tensors is not supported; use logical_xor");
  return op::sub(self, wrapped_number(other, self), alpha);
}

TensorBase& native::sub_scalar_(TensorBase& self, const Scalar& other, const Scalar& alpha) {
  OP_CHECK(!other.is_bool(), "sub: subtraction with bool tensors is not supported; use logical_xor");
  return ops::sub__Tensor::call(self, wrapped_number(other, self), alpha);
}

// ----- mul / div -----

void meta::structured_mul_Tensor::meta(const TensorBase& self, const TensorBase& other) {
  build_borrowing_binary_op(maybe_get_output(), self, other, "mul");
}

void native::structured_mul_out::impl(const TensorBase&, const TensorBase&, const TensorBase&) {
  mul_stub(device().type(), *this);
}

TensorBase native::mul_scalar(const TensorBase& self, const Scalar& other) { return op::mul(self, wrapped_number(other, self)); }

TensorBase& native::mul_scalar_(TensorBase& self, const Scalar& other) { return ops::mul__Tensor::call(self, wrapped_number(other, self)); }

void meta::structured_div_Tensor::meta(const TensorBase& self, const TensorBase& other) {
  build_borrowing_binary_float_op(maybe_get_output(), self, other, "div");
}

void native::structured_div_out::impl(const TensorBase&, const TensorBase&, const TensorBase&) {
  div_true_stub(device().type(), *this);
}

TensorBase native::div_scalar(const TensorBase& self, const Scalar& other) { return op::div(self, wrapped_number(other, self)); }

TensorBase& native::div_scalar_(TensorBase& self, const Scalar& other) { return ops::div__Tensor::call(self, wrapped_number(other, self)); }

// ----- maximum / minimum: NaN wins -----

void meta::structured_maximum::meta(const TensorBase& self, const TensorBase& other) {
  build_borrowing_binary_op(maybe_get_output(), self, other, "maximum");
}

void native::structured_maximum_out::impl(const TensorBase&, const TensorBase&, const TensorBase&) {
  maximum_stub(device().type(), *this);
}

void meta::structured_minimum::meta(const TensorBase& self, const TensorBase& other) {
  build_borrowing_binary_op(maybe_get_output(), self, other, "minimum");
}

void native::structured_minimum_out::impl(const TensorBase&, const TensorBase&, const TensorBase&) {
  minimum_stub(device().type(), *this);
}

// ----- pow -----

void meta::structured_pow_Tensor_Tensor::meta(const TensorBase& self, const TensorBase& exponent) {
  build_borrowing_binary_op(maybe_get_output(), self, exponent, "pow");
  OP_CHECK(common_dtype() != ScalarType::Bool, "pow: not supported for bool tensors (both base and exponent are bool)");
}

void native::structured_pow_Tensor_Tensor_out::impl(const TensorBase&, const TensorBase&, const TensorBase&) {
  pow_tensor_stub(device().type(), *this);
}

TensorBase native::pow_tensor_scalar(const TensorBase& self, const Scalar& exponent) {
  check_integral_power("pow", self.dtype(), exponent);
  return op::pow(self, wrapped_number(exponent, self));
}

TensorBase& native::pow_scalar_(TensorBase& self, const Scalar& exponent) {
  check_integral_power("pow", self.dtype(), exponent);
  return ops::pow__Tensor::call(self, wrapped_number(exponent, self));
}

TensorBase native::pow_scalar_tensor(const Scalar& self, const TensorBase& exponent) {
  return op::pow(wrapped_number(self, exponent), exponent);
}

}  // namespace op
