// op::Tensor: the runtime's TensorBase with every operator's methods (t.add(u), t.view(sizes),
// t.add_(u)), for code that calls operators as methods: user programs and tests.
//
// The library never includes this header: its class body includes every operator group's
// methods (build/gen/TensorMethods.h), so a TU including it recompiles whenever any method
// operator changes. The library's objects are compiled with OP_ASSERT_NO_TENSOR_METHODS, which
// turns such an include into a compile error instead of a silent whole-library dependency.
#pragma once

#ifdef OP_ASSERT_NO_TENSOR_METHODS
#error "api/tensor.h (op::Tensor with operator methods) included from code built with OP_ASSERT_NO_TENSOR_METHODS: use op::TensorBase and the per-operator headers ops/<group>.h instead"
#endif

#include <utility>

#include "MethodOperators.h"  // the operator handles the methods call
#include "core/tensor.h"

namespace op {

class Tensor : public TensorBase {
 public:
  Tensor() = default;
  // Implicit: results of op:: functions and handles (TensorBase) become Tensors, so
  // `Tensor y = op::add(a, b); y.mul_(2);` reads as before the split.
  Tensor(TensorBase base) : TensorBase(std::move(base)) {}
  using TensorBase::TensorBase;

#include "TensorMethods.h"
};

}  // namespace op
