#include "backends/lazy/metrics.h"

#include <atomic>
#include <mutex>

namespace op::lazy {

namespace {

struct Recorder {
  std::atomic<int64_t> counters[static_cast<int>(Counter::kCount)] = {};
  std::mutex mutex;  // guards the rest
  std::map<std::string, int64_t> fallbacks;
  int64_t last_plan_nodes = 0;
  int64_t last_plan_buffers = 0;
};

Recorder& recorder() {
  static Recorder* r = new Recorder();  // leaked: tensors may die during static destruction
  return *r;
}

}  // namespace

void count(Counter counter, int64_t n) {
  recorder().counters[static_cast<int>(counter)].fetch_add(n, std::memory_order_relaxed);
}

void record_fallback(const std::string& op_name) {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  ++r.fallbacks[op_name];
}

void record_plan(int64_t nodes, int64_t buffers) {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.last_plan_nodes = nodes;
  r.last_plan_buffers = buffers;
}

Metrics metrics() {
  Recorder& r = recorder();
  Metrics m;
  for (int i = 0; i < static_cast<int>(Counter::kCount); ++i) m.counters[i] = r.counters[i].load();
  std::lock_guard<std::mutex> lock(r.mutex);
  m.fallbacks = r.fallbacks;
  m.last_plan_nodes = r.last_plan_nodes;
  m.last_plan_buffers = r.last_plan_buffers;
  return m;
}

void reset_metrics() {
  Recorder& r = recorder();
  for (auto& c : r.counters) c.store(0);
  std::lock_guard<std::mutex> lock(r.mutex);
  r.fallbacks.clear();
  r.last_plan_nodes = r.last_plan_buffers = 0;
}

}  // namespace op::lazy
