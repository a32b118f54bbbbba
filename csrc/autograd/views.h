// Views and in-place operations on them, as PyTorch's autograd treats them ("differentiable
// views"). A view operator's generated ADInplaceOrView kernel records its output as a view of its
// input (as_view); an in-place operator's generated Autograd kernel gives self its new history with
// rebase_history. When self is a view, the in-place operation changes the base too: the base gets
// a CopySlices node (its old gradient with the view's slice replaced by the in-place node's
// gradient), and every view of the base remakes its grad_fn lazily (AsStridedBackward0, from the
// base's new history) once it sees the version counter move.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "autograd/autograd_meta.h"
#include "autograd/node.h"
#include "core/tensor.h"

namespace op::autograd {

// A tensor's layout in its storage (sizes, strides in elements, storage offset): what
// as_strided replays on the base.
struct ViewGeometry {
  ViewGeometry() = default;
  explicit ViewGeometry(const TensorBase& t);

  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t storage_offset = 0;
};

// Called by a view operator's ADInplaceOrView kernel after its redispatch: records `view` as a
// view of `base` (of base's own base when base is a view) and returns it. The view shares the
// base's version counter (it lives on the storage). When `view` is base's own tensor or already
// has autograd state, a shallow copy of it (same memory, no autograd state) is recorded and
// returned instead. An undefined view is returned as is. `creation` is how it was made
// (MultiOutputNode for each output of unbind-like functions); under no_grad it is NoGradMode, and
// a view of a view that is not Default inherits its base view's.
TensorBase as_view(const TensorBase& base, TensorBase view, CreationMeta creation = CreationMeta::Default);

// Whether t was recorded by as_view, and its base (undefined for a tensor that is not a view).
bool is_view(const TensorBase& t);
TensorBase view_base(const TensorBase& t);

// PyTorch's handle_view_on_rebase: raises op::Error, in PyTorch's words, when a view that is not
// CreationMeta::Default is modified in place (indirect: its base or another view of its base
// was, and its grad_fn is being remade). Nothing for a Default view or a tensor that is not a view.
void handle_view_on_rebase(const AutogradMeta& meta, bool indirect);

// Called by an in-place operator's Autograd kernel after its redispatch, when it recorded a node
// (grad_fn has its next edges; this adds self's input metadata). Not a view: self's history
// becomes grad_fn. A view: its base's history becomes CopySlices(base, the view's geometry,
// grad_fn) and the view's grad_fn an AsStridedBackward0 node over it; grad_fn must then have a
// single input (op::Error "Functions which modify views in-place must return a single Variable").
// Nothing for a null grad_fn or an undefined self.
void rebase_history(const TensorBase& self, std::shared_ptr<Node> grad_fn);
// An in-place _foreach_ operator's list: every tensor becomes an output of the one grad_fn, in
// list order (a view in the list must then be the list's only tensor, as above).
void rebase_history(ArrayRef<TensorBase> tensors, const std::shared_ptr<Node>& grad_fn);

// The base's node after an in-place operation on one of its views (PyTorch's CopySlices).
// Inputs: the base's gradient. Outputs (next edges): the base's previous gradient edge, then
// fn's next edges 1..n. apply clones the base's gradient (laid out like the base), runs fn on a
// contiguous copy of the view's slice of it, writes fn's gradient for its input 0 into that slice
// (zeros when undefined) and passes fn's other gradients through.
struct CopySlices : Node {
  CopySlices(const TensorBase& base, ViewGeometry view, std::shared_ptr<Node> fn);
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return "CopySlices"; }
  // Releases fn's saved variables and fn itself; a second backward then raises.
  void release_variables() override;

  const ViewGeometry& base_geometry() const { return base_; }
  const ViewGeometry& view_geometry() const { return view_; }
  const std::shared_ptr<Node>& fn() const { return fn_; }

 private:
  ViewGeometry base_;
  ViewGeometry view_;
  std::shared_ptr<Node> fn_;
};

// The gradient of as_strided(base, view's geometry): the grad_fn a modified view gets. Named
// "AsStridedBackward0" like torchgen's node; its one next edge is the base's gradient edge.
struct AsStridedViewBackward : Node {
  AsStridedViewBackward(ViewGeometry base, ViewGeometry view) : base_(std::move(base)), view_(std::move(view)) {}
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return "AsStridedBackward0"; }

  const ViewGeometry& base_geometry() const { return base_; }
  const ViewGeometry& view_geometry() const { return view_; }

 private:
  ViewGeometry base_;
  ViewGeometry view_;
};

// Makes a view's grad_fn an AsStridedBackward0 node over its base's current gradient edge, as of
// the current version (grad_fn(view) and rebase_history call it, holding meta.view->mutex).
void remake_view_grad_fn(const TensorBase& view, AutogradMeta& meta);

// as_strided's backward for an input laid out as `input` and an output laid out as `view`
// (storage offsets absolute): helpers::as_strided_backward, grad scattered into zeros over the
// storage both address (summed where the view overlaps itself: an expanded view), read back with
// the input's geometry. Negative strides raise op::Error.
TensorBase as_strided_view_backward(const TensorBase& grad, const ViewGeometry& input, const ViewGeometry& view);

}  // namespace op::autograd
