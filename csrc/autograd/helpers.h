// Helpers the backward formulas and the engine share, through the dispatcher's operators so they
// work on every device (derivatives.yaml's header lists the ones formulas may call).
#pragma once

#include "core/array_ref.h"
#include "core/tensor.h"

namespace op::autograd {

// Whether `shape` broadcasts to `desired` (numpy's rule, trailing dimensions aligned).
bool is_expandable_to(IntArrayRef shape, IntArrayRef desired);

// Reduces a gradient of a broadcast result to `shape` (the inverse of expanding to its sizes):
// sums the leading dimensions `shape` lacks and, keeping them, those where `shape` has 1. The
// tensor itself when the sizes already match. Throws op::Error when `shape` does not broadcast
// to t's sizes.
TensorBase sum_to(const TensorBase& t, IntArrayRef shape);

}  // namespace op::autograd
