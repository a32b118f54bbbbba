#include "autograd/autograd_meta.h"

#include "autograd/accumulate_grad.h"
#include "autograd/grad_mode.h"
#include "autograd/views.h"
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
  if (meta == nullptr) return false;
  // The base before grad_fn(t): a view's stale grad_fn is not remade (nor refused) just to ask.
  return meta->requires_grad || (meta->view != nullptr && requires_grad(meta->view->base)) || grad_fn(t) != nullptr;
}

void set_requires_grad(const TensorBase& t, bool requires_grad) {
  impl_of(t);
  AutogradMeta* meta = get_autograd_meta(t);
  if (requires_grad) {
    OP_CHECK(is_floating(t.dtype()), "only Tensors of floating point and complex dtype can require gradients");
  } else if (meta != nullptr && grad_fn(t) != nullptr) {
    fail("you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a "
         "subgraph that doesn't require differentiation use var_no_grad = var.detach().");
  }
  if (meta == nullptr && !requires_grad) return;
  materialize_autograd_meta(t).requires_grad = requires_grad;
}

bool is_leaf(const TensorBase& t) { return grad_fn(t) == nullptr; }

const std::shared_ptr<Node>& grad_fn(const TensorBase& t) {
  static const std::shared_ptr<Node> none;
  AutogradMeta* meta = get_autograd_meta(t);
  if (meta == nullptr) return none;
  if (meta->view != nullptr) {
    // PyTorch's VariableHooks::grad_fn: a view without history of a base that does not require
    // grad has none; otherwise, once the version moved (the base or another of its views was
    // changed in place), the view's gradient goes through the base's current history.
    std::lock_guard<std::mutex> lock(meta->view->mutex);
    if (meta->grad_fn == nullptr && !requires_grad(meta->view->base)) return meta->grad_fn;
    if (meta->view->attr_version != version(t)) {
      handle_view_on_rebase(*meta, /*indirect=*/true);  // a view that may not be rebased raises
      remake_view_grad_fn(t, *meta);
    }
  }
  return meta->grad_fn;
}

uint32_t output_nr(const TensorBase& t) {
  const AutogradMeta* meta = get_autograd_meta(t);
  if (meta == nullptr) return 0;
  grad_fn(t);  // a view's remade history is output 0 of its node
  return meta->output_nr;
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
  std::unique_lock<std::mutex> lock;
  if (meta.view != nullptr) {
    // The history set now is the view's own: it stands until the version moves again.
    lock = std::unique_lock<std::mutex>(meta.view->mutex);
    meta.view->attr_version = version(t);
  }
  meta.grad_fn = std::move(grad_fn);
  meta.output_nr = output_nr;
  meta.requires_grad = false;  // a non-leaf requires grad through its grad_fn
  meta.grad_accumulator.reset();
}

void set_history(const TensorBase& t, const std::shared_ptr<Node>& grad_fn) {
  if (grad_fn == nullptr) return;
  if (!t.defined()) {
    grad_fn->add_input_metadata(InputMetadata{});  // keeps the numbers of the outputs after it
    return;
  }
  uint32_t input_nr = grad_fn->add_input_metadata(t);
  set_history(t, grad_fn, input_nr);
}

std::shared_ptr<Node> grad_accumulator(const TensorBase& t) {
  AutogradMeta* meta = get_autograd_meta(t);
  if (meta == nullptr || !meta->requires_grad || grad_fn(t) != nullptr) return nullptr;
  if (std::shared_ptr<Node> existing = meta->grad_accumulator.lock()) return existing;
  auto made = std::make_shared<AccumulateGrad>(t);
  meta->grad_accumulator = made;
  return made;
}

Edge gradient_edge(const TensorBase& t) {
  const AutogradMeta* meta = get_autograd_meta(t);
  if (meta == nullptr) return Edge();
  if (const std::shared_ptr<Node>& fn = grad_fn(t)) return Edge(fn, meta->output_nr);
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
  if (!GradMode::is_enabled() || !requires_grad(t)) return;
  const AutogradMeta* meta = get_autograd_meta(t);
  if (meta->view != nullptr) {
    handle_view_on_rebase(*meta, /*indirect=*/false);
    if (is_leaf(meta->view->base))
      fail("a view of a leaf Variable that requires grad is being used in an in-place operation.");
  }
  if (is_leaf(t)) fail("a leaf Variable that requires grad is being used in an in-place operation.");
}

void check_inplace(ArrayRef<TensorBase> tensors) {
  for (const TensorBase& t : tensors) check_inplace(t);
}

}  // namespace op::autograd
