// The autograd kernels PyTorch writes by hand rather than generating (autograd_plan.py's
// HAND_WRITTEN): copy_ at Autograd and ADInplaceOrView. copy_ is how a value is written into an
// existing tensor (`y[0] = x`, `y.copy_(x)`): without it such a write would carry no history.
#include "autograd/codegen_support.h"
#include "dispatch/registration.h"
#include "ops/_to_copy.h"
#include "ops/copy_ops.h"
#include "ops/zeros_like.h"

namespace op::autograd {
namespace {

// The gradient of self.copy_(src): none for self's old value, the incoming one (on src's dtype
// and device) for src. PyTorch's node has this name.
struct CopyBackwards final : Node {
  using Node::Node;
  std::string name() const override { return "CopyBackwards"; }
  variable_list apply(variable_list&& grads) override {
    variable_list grad_inputs(2);
    const TensorBase& grad = grads[0];
    if (!grad.defined()) return grad_inputs;
    if (next_edge(0).is_valid()) grad_inputs[0] = op::zeros_like(grad);
    if (next_edge(1).is_valid()) {
      const bool same = grad.dtype() == src_dtype && grad.device() == src_device;
      grad_inputs[1] = same ? grad : op::_to_copy(grad, src_dtype, std::nullopt, src_device);
    }
    return grad_inputs;
  }
  ScalarType src_dtype = ScalarType::Float32;
  Device src_device;
};

TensorBase& autograd_copy_(TensorBase& self, const TensorBase& src, bool non_blocking) {
  const bool requires_grad = compute_requires_grad(self, src) && helpers::isDifferentiableType(self.dtype());
  if (requires_grad) check_inplace(self);
  std::shared_ptr<CopyBackwards> grad_fn;
  if (requires_grad) {
    grad_fn = std::make_shared<CopyBackwards>(collect_next_edges(self, src));
    grad_fn->src_dtype = src.dtype();
    grad_fn->src_device = src.device();
  }
  {
    BelowAutograd below;
    ops::copy_::call(self, src, non_blocking);
  }
  if (grad_fn) rebase_history(self, grad_fn);
  return self;
}

TensorBase& ad_inplace_or_view_copy_(TensorBase& self, const TensorBase& src, bool non_blocking) {
  {
    BelowADInplaceOrView below;
    ops::copy_::call(self, src, non_blocking);
  }
  bump_version(self);
  return self;
}

}  // namespace
}  // namespace op::autograd

OP_LIBRARY_IMPL(aten, Autograd, m) {
  m.impl("copy_", ::op::KernelFunction::make<&::op::autograd::autograd_copy_>());
}

OP_LIBRARY_IMPL(aten, ADInplaceOrView, m) {
  m.impl("copy_", ::op::KernelFunction::make<&::op::autograd::ad_inplace_or_view_copy_>());
}
