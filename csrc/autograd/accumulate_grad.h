// The node at a leaf: adds the gradient reaching it into the leaf's .grad (made on first use,
// reduced to the leaf's shape with sum_to when it arrives broadcast).
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "autograd/node.h"

namespace op::autograd {

struct AccumulateGrad : Node {
  // Sequence number UINT64_MAX: the engine runs a ready accumulator before any other node.
  explicit AccumulateGrad(TensorBase variable);

  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return "torch::autograd::AccumulateGrad"; }

  const TensorBase& variable() const { return variable_; }
  const HookList<TensorHook>* leaf_hooks() const override;

 private:
  TensorBase variable_;  // the leaf (it holds this node only weakly: no cycle)
};

}  // namespace op::autograd
