// Unary pointwise operators: neg, abs, the float functions exp, log, sqrt, sin, cos, tanh and
// sigmoid (integral and bool inputs give float32), clamp, and relu / relu_ built on clamp.
// meta() checks and builds the TensorIteratorBase; impl() runs the device's loop (a stub).
#include <optional>
#include <vector>

#include "core/error.h"
#include "core/scalar_type.h"
#include "core/tensor.h"
#include "native/stubs.h"
#include "ops/abs_native.h"
#include "ops/clamp.h"
#include "ops/clamp_native.h"
#include "ops/cos_native.h"
#include "ops/exp_native.h"
#include "ops/log_native.h"
#include "ops/neg_native.h"
#include "ops/relu_native.h"
#include "ops/sigmoid_native.h"
#include "ops/sin_native.h"
#include "ops/sqrt_native.h"
#include "ops/tanh_native.h"

namespace op {

namespace {

void check_not_bool(const TensorBase& self, const char* op_name) {
  OP_CHECK(!self.defined() || self.dtype() != ScalarType::Bool, op_name, ": bool tensors are not supported");
}

}  // namespace

void meta::structured_neg::meta(const TensorBase& self) {
  OP_CHECK(!self.defined() || self.dtype() != ScalarType::Bool,
           "neg: bool tensors cannot be negated; use logical_not to invert a mask");
  build_borrowing_unary_op(maybe_get_output(), self, "neg");
}

void native::structured_neg_out::impl(const TensorBase&, const TensorBase&) { neg_stub(device().type(), *this); }

void meta::structured_abs::meta(const TensorBase& self) {
  check_not_bool(self, "abs");
  build_borrowing_unary_op(maybe_get_output(), self, "abs");
}

void native::structured_abs_out::impl(const TensorBase&, const TensorBase&) { abs_stub(device().type(), *this); }

// The float functions: one meta() and impl() each.
#define OP_DEFINE_FLOAT_UNARY(NAME)                                                    \
  void meta::structured_##NAME::meta(const TensorBase& self) {                             \
    build_borrowing_unary_float_op(maybe_get_output(), self, #NAME);                   \
  }                                                                                    \
  void native::structured_##NAME##_out::impl(const TensorBase&, const TensorBase&) {           \
    NAME##_stub(device().type(), *this);                                               \
  }

OP_DEFINE_FLOAT_UNARY(exp)
OP_DEFINE_FLOAT_UNARY(log)
OP_DEFINE_FLOAT_UNARY(sqrt)
OP_DEFINE_FLOAT_UNARY(sin)
OP_DEFINE_FLOAT_UNARY(cos)
OP_DEFINE_FLOAT_UNARY(tanh)
OP_DEFINE_FLOAT_UNARY(sigmoid)

#undef OP_DEFINE_FLOAT_UNARY

// ----- clamp: the bounds promote like Python numbers (int32 tensor, min=0.5 -> float32) -----

void meta::structured_clamp::meta(const TensorBase& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  OP_CHECK(min.has_value() || max.has_value(), "clamp: at least one of 'min' or 'max' must not be None");
  std::vector<Scalar> bounds;
  if (min) bounds.push_back(*min);
  if (max) bounds.push_back(*max);
  build_borrowing_unary_op_with_numbers(maybe_get_output(), self, bounds, "clamp");
  OP_CHECK(common_dtype() != ScalarType::Bool, "clamp: bool tensors are not supported");
}

void native::structured_clamp_out::impl(const TensorBase&, const std::optional<Scalar>& min, const std::optional<Scalar>& max,
                                        const TensorBase&) {
  clamp_stub(device().type(), *this, min, max);
}

// ----- relu: clamp from below at 0, for every device clamp supports -----

TensorBase native::relu(const TensorBase& self) {
  check_not_bool(self, "relu");
  return op::clamp(self, Scalar(0), std::nullopt);
}

TensorBase& native::relu_(TensorBase& self) {
  check_not_bool(self, "relu_");
  return op::clamp_(self, Scalar(0), std::nullopt);
}

}  // namespace op
