#include "autograd/generated_support.h"

#include <utility>

#include "core/error.h"

namespace op::autograd {

void throw_error_out_requires_grad(const char* name) {
  fail(str(name, "(): functions with out=... arguments don't support automatic differentiation, but one of the "
                 "arguments requires grad."));
}

NotImplemented::NotImplemented(std::string op_name, edge_list edges)
    : Node(std::move(edges)), op_name_(std::move(op_name)) {}

variable_list NotImplemented::apply(variable_list&&) { fail(str("derivative for ", op_name_, " is not implemented")); }

}  // namespace op::autograd
