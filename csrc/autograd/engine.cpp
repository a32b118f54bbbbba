// opgen: backward only (opgen/selection/sources.py: an inference-only selection keeps no operator it calls)
#include "autograd/engine.h"

#include <algorithm>
#include <limits>
#include <queue>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "autograd/grad_mode.h"
#include "autograd/helpers.h"
#include "core/error.h"
#include "dispatch/operator_recorder.h"
#include "ops/_to_copy.h"
#include "ops/add.h"

namespace op::autograd {

namespace {

// The node that starts the walk: hands each root its gradient.
struct GraphRoot : Node {
  GraphRoot(edge_list roots, variable_list grads)
      : Node(std::numeric_limits<uint64_t>::max(), std::move(roots)), grads_(std::move(grads)) {}
  variable_list apply(variable_list&&) override { return std::move(grads_); }  // runs once per walk
  std::string name() const override { return "GraphRoot"; }

 private:
  variable_list grads_;
};

struct LaterFirst {
  bool operator()(const Node* a, const Node* b) const { return a->sequence_nr() < b->sequence_nr(); }
};

// Number of edges into each node reachable from `root`, and each node's parents (for `needed`).
struct GraphInfo {
  std::unordered_map<Node*, int> dependencies;
  std::unordered_map<Node*, std::vector<Node*>> parents;
};

GraphInfo walk(Node* root, bool with_parents) {
  GraphInfo info;
  std::unordered_set<Node*> seen{root};
  std::vector<Node*> stack{root};
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    for (const Edge& edge : node->next_edges()) {
      Node* next = edge.function.get();
      if (next == nullptr) continue;
      ++info.dependencies[next];
      if (with_parents) info.parents[next].push_back(node);
      if (seen.insert(next).second) stack.push_back(next);
    }
  }
  return info;
}

// The nodes that lead to a captured edge: every ancestor of the nodes the output edges enter.
std::unordered_set<Node*> needed_nodes(const GraphInfo& info, const edge_list& outputs) {
  std::unordered_set<Node*> needed;
  std::vector<Node*> stack;
  for (const Edge& edge : outputs) {
    auto found = info.parents.find(edge.function.get());
    if (found == info.parents.end()) continue;
    for (Node* parent : found->second) stack.push_back(parent);
  }
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    if (!needed.insert(node).second) continue;
    auto found = info.parents.find(node);
    if (found != info.parents.end())
      for (Node* parent : found->second) stack.push_back(parent);
  }
  return needed;
}

// A gradient for input `input_nr` of `next`, checked against what `next` recorded for it
// (PyTorch's validate_outputs): a broadcast one is reduced, another dtype converted, another
// device or an incompatible shape is an error, except for a 0-d gradient, which moves to the
// input's device (a 0-d cpu tensor that requires grad may join a call on any device).
TensorBase validated(const Node& producer, size_t index, const Node& next, uint32_t input_nr, TensorBase grad) {
  if (!grad.defined() || input_nr >= next.num_inputs()) return grad;
  const InputMetadata& expected = next.input_metadata(input_nr);
  if (grad.sizes() != IntArrayRef(expected.sizes)) {
    OP_CHECK(is_expandable_to(expected.sizes, grad.sizes()), "Function ", producer.name(),
             " returned an invalid gradient at index ", index, " - got ", str_list(grad.sizes()),
             " but expected shape compatible with ", str_list(expected.sizes));
    grad = sum_to(grad, expected.sizes);
  }
  if (grad.device() != expected.device) {
    OP_CHECK(grad.dim() == 0, "Function ", producer.name(), " returned an invalid gradient at index ", index,
             " - expected device ", expected.device.str(), " but got ", grad.device().str());
    return op::_to_copy(grad, expected.dtype, std::nullopt, expected.device);
  }
  if (grad.dtype() != expected.dtype) grad = op::_to_copy(grad, expected.dtype);
  return grad;
}

}  // namespace

variable_list run_backward(const edge_list& roots, const variable_list& grad_outputs, bool keep_graph,
                           const edge_list& outputs, bool create_graph) {
  OP_CHECK(roots.size() == grad_outputs.size(), "run_backward: ", roots.size(), " roots but ", grad_outputs.size(),
           " gradients");
  AutoGradMode grad_mode(create_graph);
  recording::NestedScope runtime_work;  // the operators the nodes call are not the program's roots
  auto root = std::make_shared<GraphRoot>(roots, grad_outputs);
  GraphInfo info = walk(root.get(), !outputs.empty());
  std::unordered_set<Node*> needed;
  std::unordered_map<Node*, std::vector<size_t>> captures;  // node -> indices into outputs
  if (!outputs.empty()) {
    needed = needed_nodes(info, outputs);
    for (size_t i = 0; i < outputs.size(); ++i)
      if (outputs[i].is_valid()) captures[outputs[i].function.get()].push_back(i);
  }
  auto runs = [&](Node* node) { return outputs.empty() || node == root.get() || needed.count(node) > 0; };

  variable_list result(outputs.size());
  std::unordered_map<Node*, variable_list> buffers;
  auto capture = [&](Node* node, const variable_list& buffer) {
    auto found = captures.find(node);
    if (found == captures.end()) return;
    for (size_t i : found->second) {
      uint32_t input_nr = outputs[i].input_nr;
      if (input_nr < buffer.size()) result[i] = buffer[input_nr];
    }
    captures.erase(found);
  };

  std::priority_queue<Node*, std::vector<Node*>, LaterFirst> ready;
  ready.push(root.get());
  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    variable_list inputs;
    auto buffered = buffers.find(node);
    if (buffered != buffers.end()) {
      inputs = std::move(buffered->second);
      buffers.erase(buffered);
    }
    inputs.resize(std::max(inputs.size(), node->num_inputs()));
    run_tensor_hooks(*node, inputs);  // before capture: grad() returns what the hooks made, as PyTorch's does
    capture(node, inputs);
    if (!runs(node)) continue;
    if (outputs.empty()) run_retains_grad(*node, inputs);
    run_pre_hooks(*node, inputs);

    const NodeHooks* hooks = node->hooks_if_any();
    const bool post_hooks = hooks != nullptr && !hooks->post.empty();
    variable_list given = post_hooks ? inputs : variable_list();
    variable_list grads = node->apply(std::move(inputs));
    if (post_hooks) run_post_hooks(*node, grads, given);
    if (!keep_graph) node->release_variables();
    OP_CHECK(grads.size() == node->num_outputs() || grads.empty(), "Function ", node->name(),
             " returned an incorrect number of gradients (expected ", node->num_outputs(), ", got ", grads.size(),
             ")");
    for (size_t i = 0; i < node->num_outputs(); ++i) {
      const Edge& edge = node->next_edge(i);
      Node* next = edge.function.get();
      if (next == nullptr) continue;
      TensorBase grad = grads.empty() ? TensorBase() : validated(*node, i, *next, edge.input_nr, std::move(grads[i]));
      if (grad.defined()) {
        variable_list& buffer = buffers[next];
        if (buffer.size() <= edge.input_nr) buffer.resize(std::max<size_t>(edge.input_nr + 1, next->num_inputs()));
        TensorBase& slot = buffer[edge.input_nr];
        slot = slot.defined() ? op::add(slot, grad) : std::move(grad);
      }
      if (--info.dependencies[next] == 0) ready.push(next);
    }
  }
  // Output nodes that never became ready (an edge into them came from a node that did not need
  // to run): their buffers hold every gradient that reaches the captured inputs.
  for (auto& [node, indices] : captures) {
    auto buffered = buffers.find(node);
    if (buffered == buffers.end()) continue;
    for (size_t i : indices)
      if (outputs[i].input_nr < buffered->second.size()) result[i] = buffered->second[outputs[i].input_nr];
  }
  return result;
}

}  // namespace op::autograd
