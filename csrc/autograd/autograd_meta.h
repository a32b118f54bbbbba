// Autograd's state on a tensor (TensorImpl::autograd_meta, null until the tensor requires grad or
// gets history) and the accessors the engine, the generated Autograd kernels and the bindings
// use. A leaf requires grad by its flag and accumulates into `grad`; a non-leaf requires grad
// because it has a grad_fn, and `output_nr` says which of that node's outputs it is. A view
// (autograd/views.h) also records its base; its grad_fn is remade lazily once the base or another
// view of it was changed in place.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>

#include "autograd/node.h"
#include "core/tensor.h"

namespace op::autograd {

// How a view was made (PyTorch's CreationMeta), which decides whether it may be modified in place
// with grad mode on (check_inplace) or survive its base being modified (grad_fn): only a Default
// view may, since rebasing the others' history would give wrong gradients or silently track
// what the user meant not to track.
enum class CreationMeta : uint8_t {
  Default,
  NoGradMode,        // made under no_grad: whether the in-place change should be tracked is ambiguous
  MultiOutputNode,   // an output of a view function with several outputs (unbind): one node, no CopySlices per output
  InCustomFunction,  // returned by a custom Function: CopySlices would bypass its backward
};

// What as_view records on a view (PyTorch's DifferentiableViewMeta): the base it is a view of
// (never itself a view: a view of a view records the first one's base), the version counter's
// value when its grad_fn was last set and how it was made. The view's geometry is read from the
// view itself.
struct ViewMeta {
  ViewMeta(TensorBase base_, uint32_t attr_version_, CreationMeta creation_ = CreationMeta::Default)
      : base(std::move(base_)), attr_version(attr_version_), creation(creation_) {}
  TensorBase base;
  uint32_t attr_version;
  CreationMeta creation;
  std::mutex mutex;  // grad_fn(view) remakes the node under it
};

struct AutogradMeta : AutogradMetaInterface {
  bool requires_grad = false;  // a leaf's flag (non-leaves require grad through grad_fn)
  TensorBase grad;
  std::shared_ptr<Node> grad_fn;
  std::weak_ptr<Node> grad_accumulator;  // the leaf's AccumulateGrad while a graph holds it
  uint32_t output_nr = 0;
  std::unique_ptr<ViewMeta> view;  // set by as_view (autograd/views.h) on a view of a base
  std::shared_ptr<HookList<TensorHook>> hooks;  // a leaf's register_hook hooks (a non-leaf's are on its grad_fn)
  bool retains_grad = false;                   // retain_grad() was called (autograd/hooks.h)
  TensorBase fw_grad;  // the tangent at the current dual level (autograd/forward_ad.h), if any
};

// The tensor's meta, or null (get) / made on first use (materialize).
AutogradMeta* get_autograd_meta(const TensorBase& t);
AutogradMeta& materialize_autograd_meta(const TensorBase& t);

// A leaf's flag, a grad_fn, or (a view) its base requiring grad: a view made under no_grad of
// such a base requires grad without a grad_fn, as in PyTorch.
bool requires_grad(const TensorBase& t);
// A leaf's flag. Throws op::Error for non-floating dtypes ("only Tensors of floating point and
// complex dtype can require gradients") and for turning it off on a non-leaf.
void set_requires_grad(const TensorBase& t, bool requires_grad);
bool is_leaf(const TensorBase& t);  // no grad_fn
// Null for leaves. For a view whose version moved since its grad_fn was set (its base or another
// view of the base was changed in place), first remakes it as an AsStridedBackward0 node from
// the base's current history (autograd/views.h); requires_grad, is_leaf, output_nr and
// gradient_edge see that node too.
const std::shared_ptr<Node>& grad_fn(const TensorBase& t);
uint32_t output_nr(const TensorBase& t);
TensorBase grad(const TensorBase& t);  // undefined until a backward reaches the leaf
void set_grad(const TensorBase& t, const TensorBase& grad);  // undefined clears it

// A non-leaf's history: the node that made it and which of the node's outputs it is.
void set_history(const TensorBase& t, std::shared_ptr<Node> grad_fn, uint32_t output_nr);
// What a generated Autograd kernel calls once per differentiable output, in output order: adds
// t's input metadata to grad_fn and sets t's history with the input number that gave (an
// undefined t adds a placeholder, so later outputs keep their numbers). Nothing for a null grad_fn.
void set_history(const TensorBase& t, const std::shared_ptr<Node>& grad_fn);
// The leaf's AccumulateGrad, made on first use and shared while a graph holds it; null for a
// tensor that does not require grad or has a grad_fn.
std::shared_ptr<Node> grad_accumulator(const TensorBase& t);
// Where a gradient for `t` goes: {grad_fn, output_nr} or {grad_accumulator, 0}; invalid when
// `t` does not require grad.
Edge gradient_edge(const TensorBase& t);

// A new tensor over the same memory (and version counter) without autograd history.
TensorBase detach(const TensorBase& t);

// The version counter shared by every view of t's storage (Storage::version): in-place
// operators bump it; SavedVariable compares it.
uint32_t version(const TensorBase& t);
void bump_version(const TensorBase& t);

// What an in-place operator's Autograd kernel checks first (outside no_grad): neither a leaf that
// requires grad nor a view of such a leaf can be changed in place, nor a view that is not
// CreationMeta::Default (handle_view_on_rebase). Throws op::Error in PyTorch's words.
void check_inplace(const TensorBase& t);
// Each tensor of an in-place _foreach_ operator's list.
void check_inplace(ArrayRef<TensorBase> tensors);

}  // namespace op::autograd
