// Recording the operators a program calls (opdispatch.record_operators, for a selective build).
//
// While an OperatorRecorder lives, every *call* of an operator through its handle
// (TypedOperatorHandle::call, OperatorHandle::call_boxed) adds the operator's full name
// ("aten::add.Tensor") to the recorder, from every thread. A redispatch is not a call: it is the
// same operator continuing below its key. A call is a *root* when its thread is at depth 0: made by
// the program (Python, user C++), not from inside a kernel (a composite's callees, an autograd
// kernel's backend call) or from work the runtime does for the program (the autograd engine's
// backward, a lazy step: NestedScope). An operator ever called as a root is a root.
//
//   OperatorRecorder recorder;            // op::Error while another recorder is active
//   run_the_program();
//   for (const RecordedOperator& r : recorder.stop()) ...   // sorted by name
//
// Cost when nothing records: one relaxed atomic load per call, predicted false. Calls that were
// already running when recording started count their depth from there (their callees look like
// roots): start the recorder before the program, as record_operators does.
#pragma once

#include <atomic>
#include <map>
#include <string>
#include <vector>

namespace op {

class OperatorEntry;

namespace recording {

// True while a recorder is active; set and cleared under the recorder's lock.
extern std::atomic<bool> g_active;

inline bool active() { return __builtin_expect(g_active.load(std::memory_order_relaxed), 0); }

// One call of an operator while recording: recorded at the thread's depth (a root at depth 0),
// then the thread is one level deeper until the scope ends. Only the handles' call paths make these.
class CallScope {
 public:
  explicit CallScope(const OperatorEntry& entry);
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;
};

// Work the runtime does on the program's behalf: the operators called inside are not roots.
// Cheap enough to use whether or not anything records (a thread-local increment).
class NestedScope {
 public:
  NestedScope();
  ~NestedScope();
  NestedScope(const NestedScope&) = delete;
  NestedScope& operator=(const NestedScope&) = delete;
};

// The calling thread's depth: 0 outside every recorded call and NestedScope (for tests).
int depth();

}  // namespace recording

struct RecordedOperator {
  std::string name;  // "aten::add.Tensor", "aten::mm", "myops::scale"
  bool is_root;
  bool operator==(const RecordedOperator& o) const { return name == o.name && is_root == o.is_root; }
};

class OperatorRecorder {
 public:
  // Starts recording; throws op::Error when another recorder is active.
  OperatorRecorder();
  ~OperatorRecorder();  // stops recording
  OperatorRecorder(const OperatorRecorder&) = delete;
  OperatorRecorder& operator=(const OperatorRecorder&) = delete;

  // Stops recording (a second stop does nothing) and returns what was recorded.
  std::vector<RecordedOperator> stop();
  // What was recorded so far, sorted by name.
  std::vector<RecordedOperator> operators() const;
  bool recording() const;

 private:
  friend class recording::CallScope;
  std::map<std::string, bool, std::less<>> operators_;  // name -> is_root; under the recorders' lock
  bool recording_ = false;
};

}  // namespace op
