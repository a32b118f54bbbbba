#include "dispatch/operator_recorder.h"

#include <mutex>

#include "core/error.h"
#include "dispatch/operator_entry.h"

namespace op {

namespace recording {

std::atomic<bool> g_active{false};

namespace {

// One recorder at a time: the active one, and the lock every recorded call takes to add to it.
std::mutex g_mutex;
OperatorRecorder* g_current = nullptr;

thread_local int t_depth = 0;

// "ns::name.overload" into `out` (reused: no allocation once it has grown).
void full_name(const OperatorName& name, std::string& out) {
  out.clear();
  if (!name.ns.empty()) out.append(name.ns).append("::");
  out.append(name.name);
  if (!name.overload.empty()) out.append(".").append(name.overload);
}

}  // namespace

CallScope::CallScope(const OperatorEntry& entry) {
  thread_local std::string name;
  full_name(entry.name(), name);
  const bool root = t_depth == 0;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_current != nullptr) {
      auto& operators = g_current->operators_;
      auto found = operators.find(name);
      if (found == operators.end()) operators.emplace(name, root);
      else if (root) found->second = true;
    }
  }
  ++t_depth;
}

CallScope::~CallScope() { --t_depth; }

NestedScope::NestedScope() { ++t_depth; }
NestedScope::~NestedScope() { --t_depth; }

int depth() { return t_depth; }

}  // namespace recording

OperatorRecorder::OperatorRecorder() {
  std::lock_guard<std::mutex> lock(recording::g_mutex);
  OP_CHECK(recording::g_current == nullptr,
           "record_operators: another recording of operators is active; one recorder at a time (it sees every thread)");
  recording::g_current = this;
  recording_ = true;
  recording::g_active.store(true, std::memory_order_relaxed);
}

OperatorRecorder::~OperatorRecorder() { stop(); }

std::vector<RecordedOperator> OperatorRecorder::stop() {
  std::lock_guard<std::mutex> lock(recording::g_mutex);
  if (recording::g_current == this) {
    recording::g_current = nullptr;
    recording::g_active.store(false, std::memory_order_relaxed);
  }
  recording_ = false;
  std::vector<RecordedOperator> out;
  out.reserve(operators_.size());
  for (const auto& [name, root] : operators_) out.push_back({name, root});
  return out;
}

std::vector<RecordedOperator> OperatorRecorder::operators() const {
  std::lock_guard<std::mutex> lock(recording::g_mutex);
  std::vector<RecordedOperator> out;
  out.reserve(operators_.size());
  for (const auto& [name, root] : operators_) out.push_back({name, root});
  return out;
}

bool OperatorRecorder::recording() const {
  std::lock_guard<std::mutex> lock(recording::g_mutex);
  return recording_;
}

}  // namespace op
