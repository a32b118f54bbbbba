// A tensor a node keeps for its backward formula, with the version it had when saved: unpacking
// after an in-place change (the version counter moved) or after the graph was freed raises
// op::Error in PyTorch's words.
#pragma once

#include <cstdint>
#include <string>

#include "core/tensor.h"

namespace op::autograd {

struct Node;

class SavedVariable {
 public:
  SavedVariable() = default;
  // `is_output`: t is an output of the node saving it. Then only a history-less alias is kept
  // (t's grad_fn is that node: keeping t would be a cycle), and the node's name is recorded for
  // the error message.
  SavedVariable(const TensorBase& t, bool is_output);

  // The saved tensor (undefined if an undefined one was saved). `saved_for` names the node
  // unpacking, for the messages.
  TensorBase unpack(const std::string& saved_for = "") const;
  // The same, for the node `saved_for` (a generated apply passes itself). Under grad mode (a
  // backward with create_graph) a saved output comes back with its history: an alias whose
  // grad_fn is that node, so a formula using the result is differentiated through it.
  TensorBase unpack(Node& saved_for) const;
  // Frees the tensor (the engine calls it through Node::release_variables unless retain_graph).
  void reset();

  bool defined() const { return was_defined_; }
  uint32_t saved_version() const { return saved_version_; }

 private:
  TensorBase data_;
  uint32_t saved_version_ = 0;
  uint32_t output_nr_ = 0;
  std::string producer_;  // name of the node whose output it is ("" for a leaf)
  bool is_output_ = false;  // an output with history: unpack(Node&) may restore it
  bool was_defined_ = false;
  bool freed_ = false;
};

// PyTorch's ERR_BACKWARD_TWICE: what a node raises when run again after its saved state was
// freed ("Trying to backward through the graph a second time ...").
extern const char kErrBackwardTwice[];

// "[Float32 tensor [2, 3]]": how the version message names a tensor.
std::string describe_tensor(const TensorBase& t);

}  // namespace op::autograd
