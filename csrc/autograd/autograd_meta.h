// Autograd's state on a tensor (TensorImpl::autograd_meta, null until the tensor requires grad or
// gets history) and the accessors the engine, the generated Autograd kernels and the bindings
// use. A leaf requires grad by its flag and accumulates into `grad`; a non-leaf requires grad
// because it has a grad_fn, and `output_nr` says which of that node's outputs it is.
#pragma once

#include <cstdint>
#include <memory>

#include "autograd/node.h"
#include "core/tensor.h"

namespace op::autograd {

struct AutogradMeta : AutogradMetaInterface {
  bool requires_grad = false;  // a leaf's flag (non-leaves require grad through grad_fn)
  TensorBase grad;
  std::shared_ptr<Node> grad_fn;
  std::weak_ptr<Node> grad_accumulator;  // the leaf's AccumulateGrad while a graph holds it
  uint32_t output_nr = 0;
};

// The tensor's meta, or null (get) / made on first use (materialize).
AutogradMeta* get_autograd_meta(const TensorBase& t);
AutogradMeta& materialize_autograd_meta(const TensorBase& t);

bool requires_grad(const TensorBase& t);
// A leaf's flag. Throws op::Error for non-floating dtypes ("only Tensors of floating point and
// complex dtype can require gradients") and for turning it off on a non-leaf.
void set_requires_grad(const TensorBase& t, bool requires_grad);
bool is_leaf(const TensorBase& t);  // no grad_fn
const std::shared_ptr<Node>& grad_fn(const TensorBase& t);  // null for leaves
uint32_t output_nr(const TensorBase& t);
TensorBase grad(const TensorBase& t);  // undefined until a backward reaches the leaf
void set_grad(const TensorBase& t, const TensorBase& grad);  // undefined clears it

// A non-leaf's history: the node that made it and which of the node's outputs it is.
void set_history(const TensorBase& t, std::shared_ptr<Node> grad_fn, uint32_t output_nr);
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

// What an in-place operator's Autograd kernel checks first (outside no_grad): a leaf that
// requires grad cannot be changed in place. Throws op::Error in PyTorch's words.
void check_inplace(const TensorBase& t);

}  // namespace op::autograd
