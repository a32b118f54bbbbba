#include "autograd/views.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <utility>

#include "autograd/autograd_meta.h"
#include "autograd/helpers.h"
#include "autograd/saved_variable.h"
#include "core/error.h"
#include "core/layout.h"
#include "ops/as_strided.h"
#include "ops/clone.h"
#include "ops/copy_ops.h"
#include "ops/empty_strided.h"
#include "ops/zero.h"
#include "ops/zeros.h"

namespace op::autograd {

namespace {

int64_t numel_of(const ViewGeometry& g) {
  int64_t n = 1;
  for (int64_t s : g.sizes) n *= s;
  return n;
}

// The largest element offset of a layout, relative to its storage offset (0 when empty).
int64_t last_offset(const ViewGeometry& g) {
  int64_t last = 0;
  for (size_t i = 0; i < g.sizes.size(); ++i)
    if (g.sizes[i] > 1) last += (g.sizes[i] - 1) * g.strides[i];
  return last;
}

// Whether two elements of the layout share a memory location (negative strides count as
// overlapping: this backward does not handle them).
bool overlaps_itself(const ViewGeometry& g) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size) of the dimensions that step
  for (size_t i = 0; i < g.sizes.size(); ++i) {
    if (g.sizes[i] == 0) return false;
    if (g.sizes[i] > 1) dims.emplace_back(g.strides[i], g.sizes[i]);
  }
  std::sort(dims.begin(), dims.end());
  int64_t reach = 0;  // largest offset the smaller-strided dimensions reach
  for (const auto& [stride, size] : dims) {
    if (stride <= reach) return true;
    reach += stride * (size - 1);
  }
  return false;
}

}  // namespace

ViewGeometry::ViewGeometry(const TensorBase& t)
    : sizes(t.sizes().vec()), strides(t.strides().vec()), storage_offset(t.storage_offset()) {}

// ----- recording views -----

TensorBase as_view(const TensorBase& base, TensorBase view) {
  if (!view.defined()) return view;
  OP_CHECK(base.defined(), "as_view: the base of a view is an undefined tensor");
  // The record goes on the view's own TensorImpl: never on the base's, nor on one that already
  // carries autograd state of another tensor.
  if (view.unsafe_impl() == base.unsafe_impl() || get_autograd_meta(view) != nullptr) view = detach(view);
  const AutogradMeta* base_meta = get_autograd_meta(base);
  TensorBase root = base_meta != nullptr && base_meta->view != nullptr ? base_meta->view->base : base;
  uint32_t current = version(view);
  materialize_autograd_meta(view).view = std::make_unique<ViewMeta>(std::move(root), current);
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
  for (const ViewGeometry* g : {&input, &view})
    for (int64_t stride : g->strides)
      OP_CHECK(stride >= 0, "as_strided backward: negative strides are not supported");
  OP_CHECK(!overlaps_itself(input) && !overlaps_itself(view),
           "as_strided backward: an input or a view whose elements overlap in memory is not supported");
  const bool view_empty = numel_of(view) == 0;
  const int64_t offset = view.storage_offset - input.storage_offset;
  OP_CHECK(view_empty || offset >= 0, "as_strided backward: a view starting before its input (storage offset ",
           view.storage_offset, " < ", input.storage_offset, ") is not supported");
  int64_t extent = numel_of(input) == 0 ? 0 : last_offset(input) + 1;
  if (!view_empty) extent = std::max(extent, offset + last_offset(view) + 1);
  TensorBase storage = op::zeros({extent}, grad.dtype(), std::nullopt, grad.device());
  if (!view_empty) {
    TensorBase slice = op::as_strided(storage, view.sizes, view.strides, offset);
    ops::copy_::call(slice, grad, false);
  }
  return op::as_strided(storage, input.sizes, input.strides, 0);
}

variable_list AsStridedViewBackward::apply(variable_list&& grads) {
  if (grads.empty() || !grads[0].defined()) return {TensorBase()};
  return {as_strided_view_backward(grads[0], base_, view_)};
}

}  // namespace op::autograd
