#include "autograd/node.h"

#include <utility>

#include "autograd/autograd_meta.h"

namespace op::autograd {

namespace {
thread_local uint64_t next_sequence_nr = 0;
}  // namespace

Node::Node(edge_list next_edges) : Node(next_sequence_nr++, std::move(next_edges)) {}

Node::Node(uint64_t sequence_nr, edge_list next_edges)
    : sequence_nr_(sequence_nr), next_edges_(std::move(next_edges)) {}

uint64_t Node::peek_next_sequence_nr() { return next_sequence_nr; }

const std::shared_ptr<NodeHooks>& Node::hooks() {
  if (!hooks_) hooks_ = std::make_shared<NodeHooks>();
  return hooks_;
}

Node::~Node() {
  // A derived node's members (its saved variables) are gone by now; what keeps the chain alive is
  // the edges. Move them onto a stack and release nodes one at a time: a node whose only owner is
  // the stack hands its own edges over first, so its destructor finds none to recurse into.
  std::vector<std::shared_ptr<Node>> stack;
  auto gather = [&stack](edge_list& edges) {
    for (Edge& edge : edges)
      if (edge.function) stack.push_back(std::move(edge.function));
    edges.clear();
  };
  gather(next_edges_);
  while (!stack.empty()) {
    std::shared_ptr<Node> node = std::move(stack.back());
    stack.pop_back();
    if (node.use_count() == 1) gather(node->next_edges_);
    // `node` released here: its destructor finds its edges empty (or it lives on elsewhere).
  }
}

uint32_t Node::add_input_metadata(const TensorBase& output) {
  return add_input_metadata(InputMetadata{output.sizes().vec(), output.dtype(), output.device()});
}

uint32_t Node::add_input_metadata(InputMetadata metadata) {
  input_metadata_.push_back(std::move(metadata));
  return static_cast<uint32_t>(input_metadata_.size() - 1);
}

edge_list collect_next_edges(const std::vector<TensorBase>& tensors) {
  edge_list edges;
  edges.reserve(tensors.size());
  for (const TensorBase& t : tensors) edges.push_back(t.defined() ? gradient_edge(t) : Edge());
  return edges;
}

}  // namespace op::autograd
