// The backward graph: a Node computes the gradients of a forward operator's inputs from the
// gradients of its outputs; its next edges lead to the nodes of those inputs (their grad_fn, or a
// leaf's AccumulateGrad). An Edge names one input of the node it points to (`input_nr`: which of
// that node's forward outputs the gradient belongs to).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "autograd/hooks.h"
#include "core/tensor.h"

namespace op::autograd {

using variable_list = std::vector<TensorBase>;

struct Node;

struct Edge {
  Edge() = default;
  Edge(std::shared_ptr<Node> function_, uint32_t input_nr_) : function(std::move(function_)), input_nr(input_nr_) {}
  bool is_valid() const { return function != nullptr; }
  bool operator==(const Edge& other) const { return function == other.function && input_nr == other.input_nr; }

  std::shared_ptr<Node> function;  // null: the input needs no gradient
  uint32_t input_nr = 0;
};
using edge_list = std::vector<Edge>;

// What a node knows of each of its inputs (its forward outputs): the engine checks incoming
// gradients against it, reducing a broadcast one with sum_to.
struct InputMetadata {
  std::vector<int64_t> sizes;
  ScalarType dtype = ScalarType::Float32;
  Device device;
};

struct Node : std::enable_shared_from_this<Node> {
  // `sequence_nr` orders nodes made later first in the engine's ready queue; each node gets the
  // next value of a thread-local counter.
  explicit Node(edge_list next_edges = {});
  explicit Node(uint64_t sequence_nr, edge_list next_edges = {});
  // Releases the chain of nodes behind this one iteratively (a 100,000-node chain would
  // otherwise overflow the stack in nested shared_ptr destructors).
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Gradients of the forward inputs (one per next edge; undefined where none) from those of the
  // forward outputs (one per input; undefined where none flowed).
  virtual variable_list apply(variable_list&& grads) = 0;
  // torchgen's class name ("MulBackward0").
  virtual std::string name() const = 0;
  // Frees what the node saved for backward (the engine calls it unless retain_graph).
  virtual void release_variables() {}

  variable_list operator()(variable_list&& grads) { return apply(std::move(grads)); }

  uint64_t sequence_nr() const { return sequence_nr_; }

  const edge_list& next_edges() const { return next_edges_; }
  const Edge& next_edge(size_t i) const { return next_edges_.at(i); }
  size_t num_outputs() const { return next_edges_.size(); }
  void set_next_edges(edge_list edges) { next_edges_ = std::move(edges); }
  void add_next_edge(Edge edge) { next_edges_.push_back(std::move(edge)); }

  // One per forward output the node differentiates; returns its input number.
  uint32_t add_input_metadata(const TensorBase& output);
  uint32_t add_input_metadata(InputMetadata metadata);
  size_t num_inputs() const { return input_metadata_.size(); }
  const InputMetadata& input_metadata(size_t i) const { return input_metadata_.at(i); }

  // The value the next node gets (for tests and the engine's checks).
  static uint64_t peek_next_sequence_nr();

  // Its hooks (autograd/hooks.h), made on first use; null until then, so a node without hooks
  // costs the engine one pointer test.
  const std::shared_ptr<NodeHooks>& hooks();
  const NodeHooks* hooks_if_any() const { return hooks_.get(); }
  // A leaf's tensor hooks, for the node that receives its gradient (AccumulateGrad).
  virtual const HookList<TensorHook>* leaf_hooks() const { return nullptr; }

 private:
  uint64_t sequence_nr_;
  edge_list next_edges_;
  std::vector<InputMetadata> input_metadata_;
  std::shared_ptr<NodeHooks> hooks_;
};

// The edge that a gradient for each of `tensors` flows along (grad_fn and output number, or a
// leaf's accumulator; invalid for tensors that do not require grad).
edge_list collect_next_edges(const std::vector<TensorBase>& tensors);

}  // namespace op::autograd
