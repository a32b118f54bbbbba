#include "backends/xla/metrics.h"

#include <deque>
#include <mutex>

namespace op::xla {

namespace {

struct Recorder {
  std::mutex mutex;
  std::map<std::string, int64_t> counts[3];  // by CallKind
  std::deque<std::pair<CallKind, std::string>> trace;
};

Recorder& recorder() {
  static Recorder* r = new Recorder();  // leaked: kernels may run during static destruction
  return *r;
}

}  // namespace

const char* to_string(CallKind kind) {
  switch (kind) {
    case CallKind::Kernel: return "kernel";
    case CallKind::Fallback: return "fallback";
    case CallKind::Autograd: return "autograd";
  }
  return "?";
}

void record_call(CallKind kind, const std::string& op_name) {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  ++r.counts[static_cast<int>(kind)][op_name];
  if (r.trace.size() == kMaxTrace) r.trace.pop_front();
  r.trace.emplace_back(kind, op_name);
}

Metrics metrics() {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  Metrics m;
  m.kernels = r.counts[static_cast<int>(CallKind::Kernel)];
  m.fallbacks = r.counts[static_cast<int>(CallKind::Fallback)];
  m.autograd = r.counts[static_cast<int>(CallKind::Autograd)];
  m.trace.assign(r.trace.begin(), r.trace.end());
  return m;
}

void reset_metrics() {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto& counts : r.counts) counts.clear();
  r.trace.clear();
}

}  // namespace op::xla
