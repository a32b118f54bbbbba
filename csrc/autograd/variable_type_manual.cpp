// The Autograd and ADInplaceOrView kernels that PyTorch writes by hand instead of generating them
// (torchgen's HAND_WRITTEN, opgen/gen/autograd_plan.py): copy_, as VariableTypeManual.cpp and
// ADInplaceOrViewTypeManual.cpp write it. The generator gives these functions no kernel at either
// key, so without this file x.copy_(src) would neither record history (src's gradient lost, self
// keeping its old grad_fn) nor bump self's version.
#include <optional>
#include <utility>

#include "autograd/codegen_support.h"
#include "dispatch/registration.h"
#include "ops/copy_ops.h"
#include "ops/zeros.h"
#include "ops/zeros_like.h"

namespace op {
namespace {

// PyTorch's CopyBackwards: self's old values reach nothing (a zero gradient), src gets grad in
// its own dtype and on its own device (the engine sums a broadcast src's gradient to its shape).
struct CopyBackwards final : autograd::Node {
  using autograd::Node::Node;
  std::string name() const override { return "CopyBackwards"; }

  autograd::variable_list apply(autograd::variable_list&& grads) override {
    autograd::variable_list grad_inputs(2);
    const TensorBase& grad = grads[0];
    if (!grad.defined()) return grad_inputs;
    if (next_edge(0).is_valid()) grad_inputs[0] = op::zeros(grad.sizes(), grad.dtype(), std::nullopt, grad.device());
    if (next_edge(1).is_valid()) grad_inputs[1] = autograd::helpers::_to_copy_backward(grad, src_options);
    return grad_inputs;
  }

  TensorOptions src_options;
};

TensorBase& copy__Autograd(TensorBase& self, const TensorBase& src, bool non_blocking) {
  const bool requires_grad =
      autograd::compute_requires_grad(self, src) && autograd::helpers::isDifferentiableType(self.dtype());
  if (requires_grad) autograd::check_inplace(self);
  // Forward mode (derivatives.yaml's `result: self_t.copy_(src_t)`): self's new tangent is src's,
  // broadcast and converted, in a tensor of its own.
  const bool any_fw_grad = autograd::any_fw_grad_defined(self, src) && autograd::helpers::isDifferentiableType(self.dtype());
  std::shared_ptr<CopyBackwards> grad_fn;
  if (requires_grad) {
    grad_fn = std::make_shared<CopyBackwards>(autograd::collect_next_edges(self, src));
    grad_fn->src_options = TensorOptions(src.dtype()).with_device(src.device());
  }
  {
    autograd::BelowAutograd below;
    ops::copy_::call(self, src, non_blocking);
  }
  autograd::rebase_history(self, std::move(grad_fn));
  if (any_fw_grad) {
    TensorBase src_t = autograd::fw_grad_or_zeros(src);
    TensorBase self_t;
    {
      autograd::ForwardADDisabled hide;
      self_t = op::zeros_like(self);
      ops::copy_::call(self_t, src_t, non_blocking);
    }
    autograd::set_fw_grad_inplace(self, self_t);
  }
  return self;
}

TensorBase& copy__ADInplaceOrView(TensorBase& self, const TensorBase& src, bool non_blocking) {
  {
    autograd::BelowADInplaceOrView below;
    ops::copy_::call(self, src, non_blocking);
  }
  autograd::bump_version(self);
  return self;
}

}  // namespace
}  // namespace op

OP_LIBRARY_IMPL(aten, Autograd, m) { m.impl("copy_", ::op::KernelFunction::make<&::op::copy__Autograd>()); }

OP_LIBRARY_IMPL(aten, ADInplaceOrView, m) {
  m.impl("copy_", ::op::KernelFunction::make<&::op::copy__ADInplaceOrView>());
}
