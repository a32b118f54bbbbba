// Comparisons eq, ne, lt, le, gt, ge: computed in the promoted dtype of both operands, the
// result is bool (in-place and out= write into their tensor's dtype). Scalar overloads wrap
// the number in a 0-d tensor. Also where(condition, self, other).
#include "core/error.h"
#include "native/stubs.h"
#include "native/wrapped_number.h"
#include "ops/eq.h"
#include "ops/eq_native.h"
#include "ops/ge.h"
#include "ops/ge_native.h"
#include "ops/gt.h"
#include "ops/gt_native.h"
#include "ops/le.h"
#include "ops/le_native.h"
#include "ops/lt.h"
#include "ops/lt_native.h"
#include "ops/ne.h"
#include "ops/ne_native.h"
#include "ops/where.h"
#include "ops/where_native.h"

namespace op {

// Six operators that differ only in name and stub.
#define OP_DEFINE_COMPARISON(NAME)                                                                   \
  void meta::structured_##NAME##_Tensor::meta(const TensorBase& self, const TensorBase& other) {             \
    build_borrowing_comparison_op(maybe_get_output(), self, other, #NAME);                           \
  }                                                                                                  \
  void native::structured_##NAME##_Tensor_out::impl(const TensorBase&, const TensorBase&, const TensorBase&) {   \
    NAME##_stub(device().type(), *this);                                                             \
  }                                                                                                  \
  TensorBase native::NAME##_scalar(const TensorBase& self, const Scalar& other) {                            \
    return op::NAME(self, wrapped_number(other, self));                                              \
  }                                                                                                  \
  TensorBase& native::NAME##_scalar_(TensorBase& self, const Scalar& other) {                                \
    return ops::NAME##__Tensor::call(self, wrapped_number(other, self));                                            \
  }

OP_DEFINE_COMPARISON(eq)
OP_DEFINE_COMPARISON(ne)
OP_DEFINE_COMPARISON(lt)
OP_DEFINE_COMPARISON(le)
OP_DEFINE_COMPARISON(gt)
OP_DEFINE_COMPARISON(ge)

#undef OP_DEFINE_COMPARISON

// ----- where -----

void meta::structured_where_self::meta(const TensorBase& condition, const TensorBase& self, const TensorBase& other) {
  OP_CHECK(condition.defined() && condition.dtype() == ScalarType::Bool,
           "where: expected condition to be a bool tensor, but got a tensor with dtype ",
           condition.defined() ? to_string(condition.dtype()) : "undefined");
  build_borrowing_select_op(maybe_get_output(), condition, self, other, "where");
}

void native::structured_where_self_out::impl(const TensorBase&, const TensorBase&, const TensorBase&, const TensorBase&) {
  where_stub(device().type(), *this);
}

TensorBase native::where_scalar_other(const TensorBase& condition, const TensorBase& self, const Scalar& other) {
  return op::where(condition, self, wrapped_number(other, self));
}

TensorBase native::where_scalar_self(const TensorBase& condition, const Scalar& self, const TensorBase& other) {
  return op::where(condition, wrapped_number(self, other), other);
}

}  // namespace op
