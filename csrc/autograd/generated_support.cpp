#include "autograd/generated_support.h"

#include <utility>

#include "autograd/autograd_meta.h"
#include "autograd/grad_mode.h"
#include "core/error.h"

namespace op::autograd {

void throw_error_out_requires_grad(const char* name) {
  fail(str(name, "(): functions with out=... arguments don't support automatic differentiation, but one of the "
                 "arguments requires grad."));
}

void check_no_requires_grad(const TensorBase& t, const char* name, const char* fn) {
  OP_CHECK(!(t.defined() && requires_grad(t) && GradMode::is_enabled()), "The function '", fn,
           "' is not differentiable with respect to argument '", name,
           "'. This input cannot have requires_grad True.");
}

void check_no_requires_grad(const std::optional<TensorBase>& t, const char* name, const char* fn) {
  if (t.has_value()) check_no_requires_grad(*t, name, fn);
}

NotImplemented::NotImplemented(std::string op_name, edge_list edges)
    : Node(std::move(edges)), op_name_(std::move(op_name)) {}

variable_list NotImplemented::apply(variable_list&&) { fail(str("derivative for ", op_name_, " is not implemented")); }

}  // namespace op::autograd
