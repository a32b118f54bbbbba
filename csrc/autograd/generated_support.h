// Small pieces the generated Autograd kernels (ops/<g>_Autograd.cpp) use besides guards.h,
// views.h and autograd_meta.h: the error of an out= function whose arguments require grad, the
// check of an argument without a formula, and the node of a function that has no derivative
// formula.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "autograd/node.h"
#include "core/tensor.h"

namespace op::autograd {

// op::Error "<name>(): functions with out=... arguments don't support automatic
// differentiation, but one of the arguments requires grad." (PyTorch's words).
[[noreturn]] void throw_error_out_requires_grad(const char* name);

// op::Error "The function '<fn>' is not differentiable with respect to argument '<name>'. This
// input cannot have requires_grad True." (PyTorch's words) when grad mode is on and t requires
// grad: a tensor argument with no formula in its derivatives.yaml entry that is not marked
// non_differentiable (nll_loss_forward's weight) would otherwise silently get no gradient.
void check_no_requires_grad(const TensorBase& t, const char* name, const char* fn);
void check_no_requires_grad(const std::optional<TensorBase>& t, const char* name, const char* fn);

// The node of a differentiable function without a formula: recording works, backward through it
// raises op::Error "derivative for <op_name> is not implemented".
struct NotImplemented : Node {
  NotImplemented(std::string op_name, edge_list edges);
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return "NotImplemented"; }
  const std::string& op_name() const { return op_name_; }

 private:
  std::string op_name_;
};

// grad_input_mask of a formula computing several gradients at once: PyTorch's std::array<bool, N>,
// which a formula may also pass where an operator takes bool[N] (std::vector<bool> in opgen's
// C++ API: _convolution_double_backward's output_mask).
template <size_t N>
struct GradInputMask : std::array<bool, N> {
  template <class... Bits>
  explicit GradInputMask(Bits... bits) : std::array<bool, N>{static_cast<bool>(bits)...} {}
  operator std::vector<bool>() const { return std::vector<bool>(this->begin(), this->end()); }
};

}  // namespace op::autograd
