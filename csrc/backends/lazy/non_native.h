// The non-native IR nodes (yaml/lazy_native_functions.yaml: `scalar`, `cast`) as the kernels use
// them; their lowerings are in non_native.cpp.
#pragma once

#include "backends/lazy/ir.h"

namespace op::lazy {

// `value` of `dtype` broadcast to `sizes`, as IR: a scalar constant (its value is not part of
// the graph's structure, so fill_(x, 2) and fill_(x, 3) share a plan) and an expand_copy.
Value expanded_scalar(const ::op::Scalar& value, ScalarType dtype, IntArrayRef sizes);
// `value` converted to `dtype` (itself when it has that dtype already).
Value cast(const Value& value, ScalarType dtype);

}  // namespace op::lazy
