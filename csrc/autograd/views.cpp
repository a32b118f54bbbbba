#include "autograd/views.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "autograd/autograd_meta.h"
#include "autograd/grad_mode.h"
#include "autograd/helpers.h"
#include "autograd/saved_variable.h"
#include "core/error.h"
#include "core/layout.h"
#include "ops/as_strided.h"
#include "ops/clone.h"
#include "ops/copy_ops.h"
#include "ops/empty_strided.h"
#include "ops/zero.h"

namespace op::autograd {

ViewGeometry::ViewGeometry(const TensorBase& t)
    : sizes(t.sizes().vec()), strides(t.strides().vec()), storage_offset(t.storage_offset()) {}

// ----- recording views -----

TensorBase as_view(const TensorBase& base, TensorBase view, CreationMeta creation) {
  if (!view.defined()) return view;
  OP_CHECK(base.defined(), "as_view: the base of a view is an undefined tensor");
  // The record goes on the view's own TensorImpl: never on the base's, nor on one that already
  // carries autograd state of another tensor.
  if (view.unsafe_impl() == base.unsafe_impl() || get_autograd_meta(view) != nullptr) view = detach(view);
  if (!GradMode::is_enabled()) creation = CreationMeta::NoGradMode;
  const AutogradMeta* base_meta = get_autograd_meta(base);
  TensorBase root = base;
  if (base_meta != nullptr && base_meta->view != nullptr) {
    root = base_meta->view->base;
    // A view of a restricted view is restricted too (PyTorch's propagate_creation_meta).
    if (creation == CreationMeta::Default) creation = base_meta->view->creation;
  }
  uint32_t current = version(view);
  materialize_autograd_meta(view).view = std::make_unique<ViewMeta>(std::move(root), current, creation);
  return view;
}

bool is_view(const TensorBase& t) {
  const AutogradMeta* meta = get_autograd_meta(t);
  return meta != nullptr && meta->view != nullptr;
}

TensorBase view_base(const TensorBase& t) {
  const AutogradMeta* meta = get_autograd_meta(t);
  return meta != nullptr && meta->view != nullptr ? meta->view->base : TensorBase();
}

void remake_view_grad_fn(const TensorBase& view, AutogradMeta& meta) {
  const TensorBase& base = meta.view->base;
  auto fn = std::make_shared<AsStridedViewBackward>(ViewGeometry(base), ViewGeometry(view));
  fn->set_next_edges({gradient_edge(base)});
  fn->add_input_metadata(InputMetadata{view.sizes().vec(), base.dtype(), base.device()});
  meta.grad_fn = std::move(fn);
  meta.output_nr = 0;
  meta.requires_grad = false;
  meta.grad_accumulator.reset();
  meta.view->attr_version = version(view);
}

// ----- in-place operations -----

void handle_view_on_rebase(const AutogradMeta& meta, bool indirect) {
  if (meta.view == nullptr || meta.view->creation == CreationMeta::Default) return;
  const CreationMeta creation = meta.view->creation;
  const Node* fn = meta.grad_fn.get();
  const std::string modified = indirect ? "its base or another view of its base has been" : "is being";
  const std::string output = fn != nullptr ? "Output " + std::to_string(meta.output_nr) + " of " + fn->name() : "";
  std::string msg;
  if (creation == CreationMeta::NoGradMode || fn == nullptr) {
    // Without a node the view was made under no_grad, whatever else its creation says.
    msg = (fn != nullptr ? output + " is a view of a view which was created in" : "A view was created in") +
          " no_grad mode and " + modified + " modified inplace with grad mode enabled.";
  } else {
    msg = output + " is a view and " + modified + " modified inplace.";
  }
  switch (creation) {
    case CreationMeta::MultiOutputNode:
      msg += " This view is the output of a function that returns multiple views. Such functions do not allow the "
             "output views to be modified inplace. You should replace the inplace operation by an out-of-place one.";
      break;
    case CreationMeta::NoGradMode:
      msg += " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
             "moving both the view and the inplace either both inside the no_grad block (if you don't want the "
             "inplace to be tracked) or both outside (if you want the inplace to be tracked).";
      break;
    case CreationMeta::InCustomFunction:
      msg += " This view was created inside a custom Function (or because an input was returned as-is) and the "
             "autograd logic to handle view+inplace would override the custom backward associated with the custom "
             "Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the "
             "output of the custom Function.";
      break;
    case CreationMeta::Default:
      break;
  }
  fail(msg);
}

void rebase_history(const TensorBase& self, std::shared_ptr<Node> grad_fn) {
  if (grad_fn == nullptr || !self.defined()) return;
  uint32_t input_nr = grad_fn->add_input_metadata(self);
  AutogradMeta* meta = get_autograd_meta(self);
  if (meta == nullptr || meta->view == nullptr) {
    set_history(self, std::move(grad_fn), input_nr);
    return;
  }
  OP_CHECK(input_nr == 0 && grad_fn->num_inputs() == 1,
           "Functions which modify views in-place must return a single Variable");
  const TensorBase base = meta->view->base;
  set_history(base, std::make_shared<CopySlices>(base, ViewGeometry(self), std::move(grad_fn)), 0);
  std::lock_guard<std::mutex> lock(meta->view->mutex);
  remake_view_grad_fn(self, *meta);  // now, even if the operation left the version alone
}

void rebase_history(ArrayRef<TensorBase> tensors, const std::shared_ptr<Node>& grad_fn) {
  for (const TensorBase& t : tensors) rebase_history(t, grad_fn);
}

CopySlices::CopySlices(const TensorBase& base, ViewGeometry view, std::shared_ptr<Node> fn)
    : base_(base), view_(std::move(view)), fn_(std::move(fn)) {
  OP_CHECK(fn_ != nullptr, "CopySlices: no node for the in-place operation");
  add_input_metadata(base);
  edge_list edges;
  edges.reserve(std::max<size_t>(1, fn_->num_outputs()));
  edges.push_back(gradient_edge(base));  // the base's history before the in-place operation
  for (size_t i = 1; i < fn_->num_outputs(); ++i) edges.push_back(fn_->next_edge(i));
  set_next_edges(std::move(edges));
}

variable_list CopySlices::apply(variable_list&& grads) {
  variable_list out(num_outputs());
  if (grads.empty() || !grads[0].defined()) return out;
  OP_CHECK(fn_ != nullptr, kErrBackwardTwice);
  const TensorBase& grad = grads[0];
  // The base's gradient, laid out like the base so that the view's geometry finds its slice.
  TensorBase result = op::empty_strided(base_.sizes, base_.strides, grad.dtype(), std::nullopt, grad.device());
  ops::copy_::call(result, grad, false);
  TensorBase grad_slice =
      op::as_strided(result, view_.sizes, view_.strides, view_.storage_offset - base_.storage_offset);
  // fn sees a copy: it may keep its input, and the slice is overwritten below.
  variable_list res = (*fn_)({op::clone(grad_slice, MemoryFormat::Contiguous)});
  OP_CHECK(res.empty() || res.size() == fn_->num_outputs(), "Function ", fn_->name(),
           " returned an incorrect number of gradients (expected ", fn_->num_outputs(), ", got ", res.size(), ")");
  if (!res.empty() && res[0].defined()) {
    TensorBase slice_grad = res[0].sizes() == IntArrayRef(view_.sizes) ? res[0] : sum_to(res[0], view_.sizes);
    ops::copy_::call(grad_slice, slice_grad, false);
  } else {
    op::zero_(grad_slice);  // the view's old values reach nothing
  }
  out[0] = std::move(result);
  for (size_t i = 1; i < res.size(); ++i) out[i] = std::move(res[i]);
  return out;
}

void CopySlices::release_variables() {
  if (fn_ == nullptr) return;
  fn_->release_variables();
  fn_.reset();
}

// ----- as_strided's backward -----

TensorBase as_strided_view_backward(const TensorBase& grad, const ViewGeometry& input, const ViewGeometry& view) {
  TensorGeometry geometry;
  geometry.sizes = input.sizes;
  geometry.strides = input.strides;
  geometry.storage_offset = input.storage_offset;
  return helpers::as_strided_backward(grad, geometry, view.sizes, view.strides, view.storage_offset);
}

variable_list AsStridedViewBackward::apply(variable_list&& grads) {
  if (grads.empty() || !grads[0].defined()) return {TensorBase()};
  return {as_strided_view_backward(grads[0], base_, view_)};
}

}  // namespace op::autograd
