// What the xla backend ran, per operator: its own kernels, the boxed CPU fallback and the
// AutogradXLA kernels, plus the order they ran in. Tests and users read it to see which
// operators an xla program executes natively and which ones fall back to the CPU.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace op::xla {

enum class CallKind { Kernel, Fallback, Autograd };
const char* to_string(CallKind kind);  // "kernel", "fallback", "autograd"

// Counts one call of `op_name` (e.g. "aten::add.Tensor") and appends it to the trace.
void record_call(CallKind kind, const std::string& op_name);

struct Metrics {
  std::map<std::string, int64_t> kernels;    // by operator name
  std::map<std::string, int64_t> fallbacks;
  std::map<std::string, int64_t> autograd;
  std::vector<std::pair<CallKind, std::string>> trace;  // oldest first, the latest kMaxTrace calls
};
constexpr size_t kMaxTrace = 4096;

Metrics metrics();     // a snapshot
void reset_metrics();  // counters and trace back to empty

}  // namespace op::xla
