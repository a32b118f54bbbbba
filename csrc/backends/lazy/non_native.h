// The non-native `scalar` node (yaml/lazy_native_functions.yaml) as the kernels use it.
#pragma once

#include "backends/lazy/ir.h"

namespace op::lazy {

// `value` of `dtype` broadcast to `sizes`, as IR: a scalar constant (its value is not part of
// the graph's structure, so fill_(x, 2) and fill_(x, 3) share a plan) and an expand_copy.
Value expanded_scalar(const ::op::Scalar& value, ScalarType dtype, IntArrayRef sizes);

}  // namespace op::lazy
