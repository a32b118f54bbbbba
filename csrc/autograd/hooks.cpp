// opgen: backward only (opgen/selection/sources.py: an inference-only selection keeps no operator it calls)
#include "autograd/hooks.h"

#include <atomic>

#include "autograd/autograd_meta.h"
#include "autograd/node.h"
#include "core/error.h"
#include "ops/add.h"
#include "ops/clone.h"

namespace op::autograd {

namespace {

std::atomic<uint64_t> next_hook_id{1};

// PyTorch's check of a hook's result: it stands for the gradient, so it keeps its metadata.
void check_replacement(const TensorBase& grad, const TensorBase& result, const char* what) {
  OP_CHECK(result.sizes() == grad.sizes(), what, " has changed the size of value: expected ", str_list(grad.sizes()),
           ", got ", str_list(result.sizes()));
  OP_CHECK(result.dtype() == grad.dtype(), what, " has changed the type of value: expected ", to_string(grad.dtype()),
           ", got ", to_string(result.dtype()));
  OP_CHECK(result.device() == grad.device(), what, " has changed the device of value: expected ", grad.device().str(),
           ", got ", result.device().str());
}

void run_list(const HookList<TensorHook>& hooks, TensorBase& grad) {
  for (const TensorHook& hook : hooks.snapshot()) {
    if (!grad.defined()) return;  // no gradient flowed: hooks see only real ones
    TensorBase result = hook(grad);
    if (!result.defined()) continue;
    check_replacement(grad, result, "a tensor hook");
    grad = std::move(result);
  }
}

// A node's replacement list: one entry per gradient it stands for, each checked like a tensor
// hook's result where both are defined.
void replace_all(variable_list& grads, variable_list result, const char* what) {
  OP_CHECK(result.size() == grads.size(), what, " returned ", result.size(), " gradients, expected ", grads.size());
  for (size_t i = 0; i < grads.size(); ++i)
    if (grads[i].defined() && result[i].defined()) check_replacement(grads[i], result[i], what);
  grads = std::move(result);
}

AutogradMeta& meta_requiring_grad(const TensorBase& t, const char* message) {
  OP_CHECK(t.defined() && requires_grad(t), message);
  return materialize_autograd_meta(t);
}

}  // namespace

template <class Hook>
uint64_t HookList<Hook>::add(Hook hook) {
  const uint64_t id = next_hook_id++;
  entries_.emplace_back(id, std::move(hook));
  return id;
}

template <class Hook>
bool HookList<Hook>::remove(uint64_t id) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->first == id) {
      entries_.erase(it);
      return true;
    }
  return false;
}

template <class Hook>
std::vector<Hook> HookList<Hook>::snapshot() const {
  std::vector<Hook> hooks;
  hooks.reserve(entries_.size());
  for (const auto& entry : entries_) hooks.push_back(entry.second);
  return hooks;
}

template class HookList<TensorHook>;
template class HookList<NodePreHook>;
template class HookList<NodePostHook>;

void HookHandle::remove() {
  if (remover_) std::exchange(remover_, nullptr)();
}

HookHandle register_tensor_hook(const TensorBase& t, TensorHook hook) {
  AutogradMeta& meta = meta_requiring_grad(t, "cannot register a hook on a tensor that doesn't require gradient");
  if (const std::shared_ptr<Node>& node = grad_fn(t)) {
    std::shared_ptr<NodeHooks> hooks = node->hooks();
    const uint32_t nr = output_nr(t);
    const uint64_t id = hooks->tensor_pre[nr].add(std::move(hook));
    return HookHandle([weak = std::weak_ptr<NodeHooks>(hooks), nr, id] {
      if (auto alive = weak.lock()) alive->tensor_pre[nr].remove(id);
    });
  }
  if (!meta.hooks) meta.hooks = std::make_shared<HookList<TensorHook>>();
  const uint64_t id = meta.hooks->add(std::move(hook));
  return HookHandle([weak = std::weak_ptr<HookList<TensorHook>>(meta.hooks), id] {
    if (auto alive = weak.lock()) alive->remove(id);
  });
}

void retain_grad(const TensorBase& t) {
  AutogradMeta& meta = meta_requiring_grad(t, "can't retain_grad on Tensor that has requires_grad=False");
  const std::shared_ptr<Node>& node = grad_fn(t);
  if (!node || meta.retains_grad) return;  // a leaf keeps its gradient anyway
  meta.retains_grad = true;
  // The node must not keep the tensor alive (the tensor holds the node): a weak reference to its meta.
  std::weak_ptr<AutogradMetaInterface> weak = t.unsafe_impl()->autograd_meta;
  node->hooks()->retains_grad[output_nr(t)] = [weak](const TensorBase& grad) {
    auto alive = std::static_pointer_cast<AutogradMeta>(weak.lock());
    if (alive && grad.defined())
      alive->grad = alive->grad.defined() ? op::add(alive->grad, grad) : op::clone(detach(grad));
    return TensorBase();
  };
}

bool retains_grad(const TensorBase& t) {
  const AutogradMeta* meta = get_autograd_meta(t);
  return meta != nullptr && meta->retains_grad && !is_leaf(t);
}

HookHandle register_node_prehook(const std::shared_ptr<Node>& node, NodePreHook hook) {
  std::shared_ptr<NodeHooks> hooks = node->hooks();
  const uint64_t id = hooks->pre.add(std::move(hook));
  return HookHandle([weak = std::weak_ptr<NodeHooks>(hooks), id] {
    if (auto alive = weak.lock()) alive->pre.remove(id);
  });
}

HookHandle register_node_posthook(const std::shared_ptr<Node>& node, NodePostHook hook) {
  std::shared_ptr<NodeHooks> hooks = node->hooks();
  const uint64_t id = hooks->post.add(std::move(hook));
  return HookHandle([weak = std::weak_ptr<NodeHooks>(hooks), id] {
    if (auto alive = weak.lock()) alive->post.remove(id);
  });
}

void run_tensor_hooks(Node& node, variable_list& grads) {
  if (const HookList<TensorHook>* leaf = node.leaf_hooks(); leaf != nullptr && !grads.empty()) run_list(*leaf, grads[0]);
  const NodeHooks* hooks = node.hooks_if_any();
  if (hooks == nullptr) return;
  for (const auto& [nr, list] : hooks->tensor_pre)
    if (nr < grads.size()) run_list(list, grads[nr]);
}

void run_retains_grad(Node& node, const variable_list& grads) {
  const NodeHooks* hooks = node.hooks_if_any();
  if (hooks == nullptr) return;
  for (const auto& [nr, hook] : hooks->retains_grad)
    if (nr < grads.size()) hook(grads[nr]);
}

void run_pre_hooks(Node& node, variable_list& grads) {
  const NodeHooks* hooks = node.hooks_if_any();
  if (hooks == nullptr) return;
  for (const NodePreHook& hook : hooks->pre.snapshot())
    if (std::optional<variable_list> result = hook(grads)) replace_all(grads, std::move(*result), "a node's pre-hook");
}

void run_post_hooks(Node& node, variable_list& results, const variable_list& grads) {
  const NodeHooks* hooks = node.hooks_if_any();
  if (hooks == nullptr) return;
  for (const NodePostHook& hook : hooks->post.snapshot())
    if (std::optional<variable_list> result = hook(results, grads)) replace_all(results, std::move(*result), "a node's hook");
}

}  // namespace op::autograd
