// opgen: backward only (opgen/selection/sources.py: an inference-only selection keeps no operator it calls)
#include "autograd/backward.h"

#include "autograd/autograd_meta.h"
#include "autograd/engine.h"
#include "core/error.h"
#include "dispatch/operator_recorder.h"
#include "ops/ones_like.h"

namespace op::autograd {

namespace {

struct Roots {
  edge_list edges;
  variable_list grads;
};

Roots roots_of(const variable_list& tensors, const variable_list& grad_tensors) {
  OP_CHECK(grad_tensors.empty() || grad_tensors.size() == tensors.size(), "grad_tensors should have the same length ",
           "as tensors: got ", grad_tensors.size(), " and ", tensors.size());
  Roots roots;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorBase& t = tensors[i];
    OP_CHECK(t.defined(), "backward: tensor ", i, " is undefined");
    Edge edge = gradient_edge(t);
    OP_CHECK(edge.is_valid(), "element ", i, " of tensors does not require grad and does not have a grad_fn");
    TensorBase grad = i < grad_tensors.size() ? grad_tensors[i] : TensorBase();
    if (grad.defined()) {
      OP_CHECK(grad.sizes() == t.sizes(), "Mismatch in shape: grad_output[", i, "] has a shape of ",
               str_list(grad.sizes()), " and output[", i, "] has a shape of ", str_list(t.sizes()), ".");
    } else {
      OP_CHECK(t.numel() == 1, "grad can be implicitly created only for scalar outputs");
      grad = op::ones_like(detach(t));
    }
    roots.edges.push_back(std::move(edge));
    roots.grads.push_back(std::move(grad));
  }
  return roots;
}

}  // namespace

// The default gradients and the engine's calls are the runtime's work for the program: no roots.
void backward(const variable_list& tensors, const variable_list& grad_tensors, bool retain_graph, bool create_graph) {
  recording::NestedScope runtime_work;
  Roots roots = roots_of(tensors, grad_tensors);
  run_backward(roots.edges, roots.grads, retain_graph, {}, create_graph);
}

variable_list grad(const variable_list& outputs, const variable_list& inputs, const variable_list& grad_outputs,
                   bool retain_graph, bool allow_unused, bool create_graph) {
  recording::NestedScope runtime_work;
  Roots roots = roots_of(outputs, grad_outputs);
  edge_list input_edges;
  for (const TensorBase& input : inputs) {
    OP_CHECK(input.defined() && requires_grad(input), "One of the differentiated Tensors does not require grad");
    input_edges.push_back(gradient_edge(input));
  }
  variable_list result = run_backward(roots.edges, roots.grads, retain_graph, input_edges, create_graph);
  for (const TensorBase& g : result)
    OP_CHECK(g.defined() || allow_unused, "One of the differentiated Tensors appears to not have been used in the ",
             "graph. Set allow_unused=True if this is the desired behavior.");
  return result;
}

}  // namespace op::autograd
