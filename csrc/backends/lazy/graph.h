// The graph executor. mark_step() collects the pending IR of every live lazy tensor into one
// graph, hashes it by structure, shapes and dtypes (never data or the values of scalar
// constants), looks the hash up in the graph cache, compiles a plan on a miss (the nodes in
// topological order, each output in a buffer slot that is reused once its value is dead), runs
// the plan (each node lowered: its operator called eagerly on cpu through the dispatcher) and
// makes the results the tensors' data.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/lazy/lazy_tensor.h"

namespace op::lazy {

// Runs what the given tensors' pending values need and materializes them.
void sync_states(const std::vector<std::shared_ptr<LazyTensorState>>& states);
// Every live lazy tensor with a pending value (the step boundary); forgets reusable nodes.
void mark_step();
// Functional wrappers are synced and unwrapped first; tensors not on lazy are skipped.
void sync_tensors(const std::vector<TensorBase>& tensors);
// The pending graph of `tensors` (all pending tensors when empty), one node per line:
//   %2 = aten::add.Tensor(%0, %1), alpha=1 -> float32[2, 3]
// and a last line naming the roots ("roots: %2, %3").
std::string ir_text(const std::vector<TensorBase>& tensors);
// Plans in the graph cache (kept across reset_metrics()).
size_t graph_cache_size();

}  // namespace op::lazy
