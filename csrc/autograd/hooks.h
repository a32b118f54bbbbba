// Hooks on the backward pass, with PyTorch's semantics: a tensor's hooks (register_hook) see its
// gradient before anything uses it and may replace it; retain_grad keeps a non-leaf's gradient
// in its .grad; a node's pre-hooks see the gradients it is given, its post-hooks those it
// computed, and either may replace them. Hooks run in registration order; each registration
// gives a HookHandle whose remove() takes it out (a no-op once the node or tensor is gone).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace op::autograd {

struct Node;
using variable_list = std::vector<TensorBase>;

// Gets a tensor's gradient; a defined result replaces it (same size, dtype and device).
using TensorHook = std::function<TensorBase(const TensorBase& grad)>;
// Gets the gradients of a node's forward outputs (what it is given); a result replaces them.
using NodePreHook = std::function<std::optional<variable_list>(const variable_list& grad_outputs)>;
// Gets the gradients a node computed for its forward inputs, then those it was given; a result
// replaces the first.
using NodePostHook =
    std::function<std::optional<variable_list>(const variable_list& grad_inputs, const variable_list& grad_outputs)>;

// Hooks of one kind in registration order, each under an id unique in the process.
template <class Hook>
class HookList {
 public:
  uint64_t add(Hook hook);
  bool remove(uint64_t id);
  bool empty() const { return entries_.empty(); }
  // A copy: a hook may remove itself (or add others) while the list is being run.
  std::vector<Hook> snapshot() const;

 private:
  std::vector<std::pair<uint64_t, Hook>> entries_;
};

// A node's hooks (Node::hooks()). Tensor hooks sit on the node that receives the tensor's
// gradient: a non-leaf's grad_fn, under the tensor's output number.
struct NodeHooks {
  std::map<uint32_t, HookList<TensorHook>> tensor_pre;
  std::map<uint32_t, TensorHook> retains_grad;  // after tensor_pre; in backward() only, as PyTorch does
  HookList<NodePreHook> pre;
  HookList<NodePostHook> post;
};

// Takes one registration out. Holds nothing alive.
class HookHandle {
 public:
  HookHandle() = default;
  explicit HookHandle(std::function<void()> remover) : remover_(std::move(remover)) {}
  void remove();

 private:
  std::function<void()> remover_;
};

// t.register_hook(hook). t must require grad; a leaf's hooks live on the tensor (its
// AccumulateGrad runs them), a non-leaf's on its grad_fn. Throws op::Error in PyTorch's words.
HookHandle register_tensor_hook(const TensorBase& t, TensorHook hook);
// t.retain_grad(): a non-leaf's .grad gets (and accumulates) its gradient in each backward();
// nothing for a leaf. Throws op::Error for a tensor that does not require grad.
void retain_grad(const TensorBase& t);
bool retains_grad(const TensorBase& t);
HookHandle register_node_prehook(const std::shared_ptr<Node>& node, NodePreHook hook);
HookHandle register_node_posthook(const std::shared_ptr<Node>& node, NodePostHook hook);

// What the engine calls. `grads` are the node's inputs (gradients of its forward outputs).
// Tensor hooks first, then (in backward(), `retain`) retain_grad, then the node's pre-hooks.
void run_tensor_hooks(Node& node, variable_list& grads);
void run_retains_grad(Node& node, const variable_list& grads);
void run_pre_hooks(Node& node, variable_list& grads);
// After apply: the post-hooks, given the node's results and its inputs.
void run_post_hooks(Node& node, variable_list& results, const variable_list& grads);

}  // namespace op::autograd
