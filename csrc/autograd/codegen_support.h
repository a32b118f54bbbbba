// What the generated ops/<g>_Autograd.cpp and ops/<g>_ADInplaceOrView.cpp files use, in one
// include: the engine's types (Node, SavedVariable, edges), the recording helpers (grad mode,
// compute_requires_grad, set_history, rebase_history), the view and version bookkeeping, the
// values nodes save instead of tensors (TypeAndSize, TensorGeometry) and the formula helpers.
#pragma once

// Formulas use std::sqrt, std::pow, M_PI and M_LN2 (erf's 2 / sqrt(pi), exp2's ln 2).
#include <cmath>

#include "autograd/autograd_meta.h"
#include "autograd/forward_ad.h"
#include "autograd/generated_support.h"
#include "autograd/grad_mode.h"
#include "autograd/guards.h"
#include "autograd/helpers.h"
#include "autograd/node.h"
#include "autograd/saved_values.h"
#include "autograd/saved_variable.h"
#include "autograd/views.h"
#include "core/error.h"

namespace op::autograd {

// Whether any incoming gradient is defined: a node whose outputs all received none returns
// none (the formulas assume a defined `grad`).
inline bool any_defined(const variable_list& grads) {
  for (const TensorBase& g : grads) {
    if (g.defined()) return true;
  }
  return false;
}

}  // namespace op::autograd
