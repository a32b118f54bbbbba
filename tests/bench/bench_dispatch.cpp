// Per-call overhead of the dispatcher: a tiny typed operator called through a
// TypedOperatorHandle vs the same kernel called directly (goal: <= 30 ns per dispatched call);
// the same call while an OperatorRecorder records (the other rows run without one).
// Built and run by tests/bench/bench_dispatch.py (build/bench/bench_dispatch), by hand, not by the tests.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>

#include "dispatch/dispatcher.h"
#include "dispatch/operator_recorder.h"
#include "dispatch/registration.h"

using namespace op;

namespace {

// noinline: the direct baseline pays a real call, as the kernel behind the table does.
__attribute__((noinline)) int64_t tiny(const TensorBase& self, int64_t x) { return x + self.dim(); }
__attribute__((noinline)) TensorBase tiny_tensor(const TensorBase& self) { return self; }

TensorBase autograd_tiny(DispatchKeySet ks, const TensorBase& self) {
  static auto op = Dispatcher::singleton().find_op_or_throw("bench::tiny_tensor").typed<TensorBase(const TensorBase&)>();
  return op.redispatch(ks.without_highest(), self);
}

template <class F>
double ns_per_call(F&& body, int64_t iterations) {
  double best = 1e300;
  for (int round = 0; round < 5; ++round) {
    auto start = std::chrono::steady_clock::now();
    body(iterations);
    auto stop = std::chrono::steady_clock::now();
    double ns = std::chrono::duration<double, std::nano>(stop - start).count() / static_cast<double>(iterations);
    if (ns < best) best = ns;
  }
  return best;
}

volatile int64_t sink;

}  // namespace

int main() {
  Dispatcher& d = Dispatcher::singleton();
  Library lib(Library::DEF, "bench");
  lib.def("tiny(Tensor self, int x) -> int");
  lib.def("tiny_tensor(Tensor self) -> Tensor");
  lib.impl("tiny", DispatchKey::CPU, KernelFunction::make<&tiny>(), "tiny");
  lib.impl("tiny_tensor", DispatchKey::CPU, KernelFunction::make<&tiny_tensor>(), "tiny_tensor");
  auto op = d.find_op_or_throw("bench::tiny").typed<int64_t(const TensorBase&, int64_t)>();
  auto op_t = d.find_op_or_throw("bench::tiny_tensor").typed<TensorBase(const TensorBase&)>();
  OperatorHandle boxed = d.find_op_or_throw("bench::tiny");
  TensorBase t = TensorBase::zeros({2, 2});
  const int64_t n = 20'000'000;

  // Each call consumes the previous result, so calls cannot overlap: this is latency per call.
  double direct = ns_per_call([&](int64_t k) {
    int64_t x = 0;
    for (int64_t i = 0; i < k; ++i) x = tiny(t, x);
    sink = x;
  }, n);
  double dispatched = ns_per_call([&](int64_t k) {
    int64_t x = 0;
    for (int64_t i = 0; i < k; ++i) x = op.call(t, x);
    sink = x;
  }, n);
  double direct_t = ns_per_call([&](int64_t k) {
    TensorBase cur = t;
    for (int64_t i = 0; i < k; ++i) cur = tiny_tensor(cur);
    sink = cur.dim();
  }, n);
  double dispatched_t = ns_per_call([&](int64_t k) {
    TensorBase cur = t;
    for (int64_t i = 0; i < k; ++i) cur = op_t.call(cur);
    sink = cur.dim();
  }, n);
  double boxed_call = ns_per_call([&](int64_t k) {
    for (int64_t i = 0; i < k; ++i) {
      Stack stack{t, i};  // building the stack is part of a boxed call's cost
      boxed.call_boxed(stack);
      sink = stack[0].to_int();
    }
  }, n / 10);
  double recorded;  // while opdispatch.record_operators runs: the out-of-line path, a lock and a lookup
  {
    OperatorRecorder recorder;
    recorded = ns_per_call([&](int64_t k) {
      int64_t x = 0;
      for (int64_t i = 0; i < k; ++i) x = op.call(t, x);
      sink = x;
    }, n / 10);
  }
  double through_autograd;
  {
    Library ag(Library::IMPL, "bench", DispatchKey::Autograd);
    ag.impl("tiny_tensor", KernelFunction::make<&autograd_tiny>(), "autograd");
    through_autograd = ns_per_call([&](int64_t k) {
      TensorBase cur = t;
      for (int64_t i = 0; i < k; ++i) cur = op_t.call(cur);
      sink = cur.dim();
    }, n);
  }

  std::printf("%-46s %10s %12s\n", "call", "ns/call", "overhead ns");
  std::printf("%-46s %10.2f %12s\n", "tiny(Tensor, int) -> int, direct", direct, "-");
  std::printf("%-46s %10.2f %12.2f\n", "tiny(Tensor, int) -> int, dispatched", dispatched, dispatched - direct);
  std::printf("%-46s %10.2f %12s\n", "tiny_tensor(Tensor) -> Tensor, direct", direct_t, "-");
  std::printf("%-46s %10.2f %12.2f\n", "tiny_tensor(Tensor) -> Tensor, dispatched", dispatched_t, dispatched_t - direct_t);
  std::printf("%-46s %10.2f %12.2f\n", "tiny_tensor via Autograd kernel + redispatch", through_autograd, through_autograd - direct_t);
  std::printf("%-46s %10.2f %12.2f\n", "tiny(Tensor, int) -> int, boxed (stack)", boxed_call, boxed_call - direct);
  std::printf("%-46s %10.2f %12.2f\n", "tiny(Tensor, int) -> int, recording operators", recorded, recorded - direct);
  std::printf("goal: dispatched overhead <= 30 ns per unboxed call: %s\n", dispatched - direct <= 30 ? "met" : "NOT met");
  return 0;
}
