// OperatorRecorder (dispatch/operator_recorder.h): calls recorded with their roots, redispatches
// not, every thread seen, one recorder at a time, nothing recorded outside a recorder's life.
#include <thread>
#include <vector>

#include "dispatch/dispatcher.h"
#include "dispatch/operator_recorder.h"
#include "tests/harness.h"

using namespace op;

namespace optest {
inline std::string show(const RecordedOperator& r) { return r.name + (r.is_root ? " (root)" : ""); }
}  // namespace optest

namespace {

using Unary = TypedOperatorHandle<TensorBase(const TensorBase&)>;

// The handles the kernels below call, set by Ops for the dispatcher of the test at hand.
const Unary* g_inner = nullptr;
const Unary* g_outer = nullptr;

TensorBase k_inner(const TensorBase& x) { return x; }
TensorBase k_outer(const TensorBase& x) { return g_inner->call(x); }  // a composite: calls inner
// At the Autograd key: continues below itself, the same operator (not a call of it).
TensorBase k_outer_autograd(DispatchKeySet ks, const TensorBase& x) {
  return g_outer->redispatch(ks.without_highest(), x);
}
TensorBase k_failing(const TensorBase& x) {
  g_inner->call(x);
  fail("rtest::failing: on purpose");
}

struct Ops {
  Dispatcher d;
  RegistrationHandle defs[4] = {
      d.def("rtest::inner(Tensor x) -> Tensor"), d.def("rtest::outer(Tensor x) -> Tensor"),
      d.def("rtest::outer.other(Tensor x) -> Tensor"), d.def("rtest::failing(Tensor x) -> Tensor")};
  RegistrationHandle impls[5] = {
      d.impl("rtest::inner", DispatchKey::CPU, KernelFunction::make<&k_inner>(), "inner"),
      d.impl("rtest::outer", DispatchKey::CPU, KernelFunction::make<&k_outer>(), "outer"),
      d.impl("rtest::outer", DispatchKey::Autograd, KernelFunction::make<&k_outer_autograd>(), "outer autograd"),
      d.impl("rtest::outer.other", DispatchKey::CPU, KernelFunction::make<&k_inner>(), "other"),
      d.impl("rtest::failing", DispatchKey::CPU, KernelFunction::make<&k_failing>(), "failing")};
  Unary inner = d.find_op_or_throw("rtest::inner").typed<TensorBase(const TensorBase&)>();
  Unary outer = d.find_op_or_throw("rtest::outer").typed<TensorBase(const TensorBase&)>();
  Unary other = d.find_op_or_throw("rtest::outer.other").typed<TensorBase(const TensorBase&)>();
  Unary failing = d.find_op_or_throw("rtest::failing").typed<TensorBase(const TensorBase&)>();
  Ops() {
    g_inner = &inner;
    g_outer = &outer;
  }
  ~Ops() { g_inner = g_outer = nullptr; }
};

TensorBase x() { return TensorBase::zeros({2}); }

}  // namespace

TEST(recorder_records_calls_with_roots_and_not_redispatches) {
  Ops ops;
  ops.inner.call(x());  // before: not recorded
  OperatorRecorder recorder;
  CHECK(recording::active() && recorder.recording());
  ops.outer.call(x());  // a root; its autograd kernel redispatches (not a call), its CPU kernel calls inner
  CHECK_EQ(recording::depth(), 0);
  CHECK_EQ(recorder.operators(),
           (std::vector<RecordedOperator>{{"rtest::inner", false}, {"rtest::outer", true}}));
  ops.inner.call(x());  // now called as a root too: a root from then on
  std::vector<RecordedOperator> recorded = recorder.stop();
  CHECK(!recording::active() && !recorder.recording());
  CHECK_EQ(recorded, (std::vector<RecordedOperator>{{"rtest::inner", true}, {"rtest::outer", true}}));
  ops.other.call(x());  // after stop: not recorded
  CHECK_EQ(recorder.stop(), recorded);  // a second stop changes nothing
}

TEST(recorder_records_boxed_calls) {
  Ops ops;
  OperatorRecorder recorder;
  Stack stack{IValue(x())};
  ops.d.find_op_or_throw("rtest::outer").call_boxed(stack);
  CHECK_EQ(recorder.stop(), (std::vector<RecordedOperator>{{"rtest::inner", false}, {"rtest::outer", true}}));
}

TEST(recorder_is_one_at_a_time) {
  Ops ops;
  {
    OperatorRecorder first;
    CHECK_THROWS(OperatorRecorder(), "another recording of operators is active");
    ops.inner.call(x());
    CHECK_EQ(first.operators(), (std::vector<RecordedOperator>{{"rtest::inner", true}}));
  }  // destroyed: stopped
  CHECK(!recording::active());
  OperatorRecorder second;  // a new one may start now
  CHECK(second.operators().empty());
}

TEST(recorder_sees_every_thread) {
  Ops ops;
  OperatorRecorder recorder;
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&ops, i] {
      for (int k = 0; k < 100; ++k) (i % 2 ? ops.other : ops.outer).call(x());
    });
  for (std::thread& t : threads) t.join();
  CHECK_EQ(recorder.stop(), (std::vector<RecordedOperator>{
                                {"rtest::inner", false}, {"rtest::outer", true}, {"rtest::outer.other", true}}));
}

TEST(recorder_depth_survives_exceptions_and_nested_scopes) {
  Ops ops;
  OperatorRecorder recorder;
  CHECK_THROWS(ops.failing.call(x()), "on purpose");
  CHECK_EQ(recording::depth(), 0);  // the scope unwound
  {
    recording::NestedScope runtime_work;  // e.g. the autograd engine: its calls are no roots
    ops.other.call(x());
    CHECK_EQ(recording::depth(), 1);
  }
  CHECK_EQ(recording::depth(), 0);
  CHECK_EQ(recorder.stop(), (std::vector<RecordedOperator>{
                                {"rtest::failing", true}, {"rtest::inner", false}, {"rtest::outer.other", false}}));
}
