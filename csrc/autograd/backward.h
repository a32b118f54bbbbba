// What `t.backward()` and `autograd.grad` do, on tensors: the edges and default gradients
// derived from the tensors, then the engine (engine.h). Misuse raises op::Error in PyTorch's
// words.
#pragma once

#include "autograd/node.h"

namespace op::autograd {

// Accumulates the gradients of `tensors` (weighted by `grad_tensors`; a missing or undefined one
// is 1 for a one-element tensor) into the leaves' .grad.
// With create_graph the backward pass records its own graph: the gradients have history (and a
// leaf's .grad is replaced out of place), so they can be differentiated again.
void backward(const variable_list& tensors, const variable_list& grad_tensors = {}, bool retain_graph = false,
              bool create_graph = false);

// The gradients of `outputs` with respect to `inputs` (nothing is accumulated into .grad); an
// input the graph does not reach gives an undefined tensor when allow_unused, an error otherwise.
variable_list grad(const variable_list& outputs, const variable_list& inputs, const variable_list& grad_outputs = {},
                   bool retain_graph = false, bool allow_unused = false, bool create_graph = false);

}  // namespace op::autograd
