// What the lazy backend did since the last reset: IR nodes made and reused, graphs compiled,
// cache hits and misses, nodes executed, and the operators that fell back to the CPU.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace op::lazy {

enum class Counter {
  IrNodesCreated,
  IrNodesReused,
  GraphsCompiled,  // plans made: one per cache miss
  GraphCacheHits,
  GraphCacheMisses,
  GraphsExecuted,
  NodesExecuted,  // lowered calls (data nodes are inputs, not calls)
  TensorsMaterialized,
  kCount
};

void count(Counter counter, int64_t n = 1);
void record_fallback(const std::string& op_name);  // "aten::cos"
// The plan that ran last: its nodes and the buffers its slots needed at most.
void record_plan(int64_t nodes, int64_t buffers);

struct Metrics {
  int64_t counters[static_cast<int>(Counter::kCount)] = {};
  int64_t last_plan_nodes = 0;
  int64_t last_plan_buffers = 0;
  std::map<std::string, int64_t> fallbacks;
  int64_t operator[](Counter c) const { return counters[static_cast<int>(c)]; }
};

Metrics metrics();     // a snapshot
void reset_metrics();  // everything back to zero (the graph cache is kept)

}  // namespace op::lazy
