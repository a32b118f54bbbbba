// The engine: runs the backward graph from its roots in reverse topological order. Each node runs
// once every edge into it has delivered (dependency counting); gradients along edges to the same
// input are summed; a node's gradients are checked against its input metadata (a broadcast one is
// reduced with sum_to); saved variables are freed after a node runs unless keep_graph. Iterative
// throughout (a worklist and a priority queue, no recursion). Under no_grad, unless create_graph:
// then the nodes run with grad mode on, so the operators their formulas call record a graph of
// the backward pass itself (double backward).
#pragma once

#include "autograd/node.h"

namespace op::autograd {

// `roots[i]` receives `grad_outputs[i]`. With `outputs` empty every reachable node runs (leaves
// accumulate into .grad) and the result is empty. Otherwise only the nodes on a path to one of
// `outputs` run and the result holds, per output edge, the gradient summed into it (undefined
// where none arrived); the outputs' own nodes do not run (autograd.grad leaves .grad alone).
variable_list run_backward(const edge_list& roots, const variable_list& grad_outputs, bool keep_graph,
                           const edge_list& outputs = {}, bool create_graph = false);

}  // namespace op::autograd
