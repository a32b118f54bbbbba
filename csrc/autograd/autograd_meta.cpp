#include "autograd/autograd_meta.h"

#include "autograd/accumulate_grad.h"
#include "autograd/grad_mode.h"
#include "core/error.h"

namespace op::autograd {

namespace {

TensorImpl& impl_of(const TensorBase& t) {
  OP_CHECK(t.defined(), "autograd: operation on an undefined tensor");
  return *t.unsafe_impl();
}

}  // namespace

AutogradMeta* get_autograd_meta(const TensorBase& t) {
  if (!t.defined()) return nullptr;
  return static_cast<AutogradMeta*>(t.unsafe_impl()->autograd_meta.get());
}

AutogradMeta& materialize_autograd_meta(const TensorBase& t) {
  TensorImpl& impl = impl_of(t);
  if (!impl.autograd_meta) impl.autograd_meta = std::make_shared<AutogradMeta>();
  return static_cast<AutogradMeta&>(*impl.autograd_meta);
}

bool requires_grad(const TensorBase& t) {
  const AutogradMeta* meta = get_autograd_meta(t);
  return meta != nullptr && (meta->requires_grad || meta->grad_fn != nullptr);
}

void set_requires_grad(const TensorBase& t, bool requires_grad) {
  impl_of(t);
  AutogradMeta* meta = get_autograd_meta(t);
  if (requires_grad) {
    OP_CHECK(is_floating(t.dtype()), "only Tensors of floating point and complex dtype can require gradients");
  } else if (meta != nullptr && meta->grad_fn != nullptr) {
    fail("you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a "
         "subgraph that doesn't require differentiation use var_no_grad = var.detach().");
  }
  if (meta == nullptr && !requires_grad) return;
  materialize_autograd_meta(t).requires_grad = requires_grad;
}

bool is_leaf(const TensorBase& t) {
  const AutogradMeta* meta = get_autograd_meta(t);
  return meta == nullptr || meta->grad_fn == nullptr;
}

const std::shared_ptr<Node>& grad_fn(const TensorBase& t) {
  static const std::shared_ptr<Node> none;
  const AutogradMeta* meta = get_autograd_meta(t);
  return meta != nullptr ? meta->grad_fn : none;
}

uint32_t output_nr(const TensorBase& t) {
  const AutogradMeta* meta = get_autograd_meta(t);
  return meta != nullptr ? meta->output_nr : 0;
}

TensorBase grad(const TensorBase& t) {
  const AutogradMeta* meta = get_autograd_meta(t);
  return meta != nullptr ? meta->grad : TensorBase();
}

void set_grad(const TensorBase& t, const TensorBase& grad) {
  if (!grad.defined() && get_autograd_meta(t) == nullptr) return;
  if (grad.defined()) {
    OP_CHECK(grad.sizes() == t.sizes(), "assigned grad has data of a different size: ", str_list(grad.sizes()),
             " for a tensor of size ", str_list(t.sizes()));
    OP_CHECK(grad.dtype() == t.dtype(), "assigned grad has data of a different type: ", to_string(grad.dtype()),
             " for a tensor of type ", to_string(t.dtype()));
    OP_CHECK(grad.device() == t.device(), "assigned grad has data located on a different device: ",
             grad.device().str(), " for a tensor on ", t.device().str());
  }
  materialize_autograd_meta(t).grad = grad;
}

void set_history(const TensorBase& t, std::shared_ptr<Node> grad_fn, uint32_t output_nr) {
  AutogradMeta& meta = materialize_autograd_meta(t);
  meta.grad_fn = std::move(grad_fn);
  meta.output_nr = output_nr;
  meta.requires_grad = false;  // a non-leaf requires grad through its grad_fn
  meta.grad_accumulator.reset();
}

std::shared_ptr<Node> grad_accumulator(const TensorBase& t) {
  AutogradMeta* meta = get_autograd_meta(t);
  if (meta == nullptr || !meta->requires_grad || meta->grad_fn != nullptr) return nullptr;
  if (std::shared_ptr<Node> existing = meta->grad_accumulator.lock()) return existing;
  auto made = std::make_shared<AccumulateGrad>(t);
  meta->grad_accumulator = made;
  return made;
}

Edge gradient_edge(const TensorBase& t) {
  const AutogradMeta* meta = get_autograd_meta(t);
  if (meta == nullptr) return Edge();
  if (meta->grad_fn != nullptr) return Edge(meta->grad_fn, meta->output_nr);
  return Edge(grad_accumulator(t), 0);
}

TensorBase detach(const TensorBase& t) {
  auto copy = std::make_shared<TensorImpl>(impl_of(t));
  copy->autograd_meta.reset();
  return TensorBase(std::move(copy));
}

uint32_t version(const TensorBase& t) { return impl_of(t).storage.version(); }
void bump_version(const TensorBase& t) { impl_of(t).storage.bump_version(); }

void check_inplace(const TensorBase& t) {
  if (!GradMode::is_enabled() || !requires_grad(t) || !is_leaf(t)) return;
  fail("a leaf Variable that requires grad is being used in an in-place operation.");
}

}  // namespace op::autograd
