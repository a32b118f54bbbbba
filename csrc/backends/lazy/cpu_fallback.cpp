// The boxed CPU fallback at DispatchKey::Lazy, for every operator the lazy yaml does not list:
// the lazy arguments' graphs run (one graph for all of them), the operator runs on their data
// on the cpu, a written lazy argument (in-place self, out=) takes its private cpu copy as its new
// data, and the other results become lazy tensors over the cpu results. Counted per operator
// (metrics: fallbacks). An operator that returns a view of an argument is refused: lazy tensors
// hold no views; functionalization, above this key, turns views into their *_copy operators.
// The frame is the one every backend shares (backends/support/cpu_fallback.h).
#include <optional>
#include <string>
#include <vector>

#include "backends/lazy/graph.h"
#include "backends/lazy/lazy_tensor.h"
#include "backends/lazy/metrics.h"
#include "backends/support/cpu_fallback.h"
#include "core/error.h"
#include "core/host_ops.h"
#include "dispatch/operator_handle.h"
#include "dispatch/registration.h"
#include "functionalization/functionalization.h"

namespace op::lazy {

namespace {

// cpu values of one call's lazy tensors: their data, shared for reading; a written tensor gets a
// private copy (data is never written in place), the same one wherever it is passed again.
class CpuArguments {
 public:
  CpuArguments(const FunctionSchema& schema, const std::vector<IValue>& arguments) {
    for (size_t i = 0; i < arguments.size(); ++i) {
      const bool written = schema.arguments()[i].is_write();
      for_each_tensor(arguments[i], [&](const TensorBase& t) {
        if (!is_lazy(t)) return;
        lazy_.push_back(t);
        written_.push_back(written);
      });
    }
    sync_tensors(lazy_);  // one graph for every argument that is pending
    for (size_t i = 0; i < lazy_.size(); ++i) {
      TensorBase data = state_of(lazy_[i], "lazy cpu fallback").data;
      cpu_.push_back(written_[i] ? host::clone(data) : data);
    }
    for (size_t i = 0; i < lazy_.size(); ++i)  // a tensor passed twice, written once: one copy
      for (size_t j = 0; j < lazy_.size(); ++j)
        if (lazy_[i].unsafe_impl() == lazy_[j].unsafe_impl() && written_[j]) cpu_[i] = cpu_[j];
  }

  TensorBase to_cpu(const TensorBase& t) const {
    for (size_t i = 0; i < lazy_.size(); ++i)
      if (lazy_[i].unsafe_impl() == t.unsafe_impl()) return cpu_[i];
    return t;
  }

  // What the operator wrote into a written lazy tensor's copy becomes its data.
  void write_back() const {
    for (size_t i = 0; i < lazy_.size(); ++i)
      if (written_[i]) set_data(lazy_[i], cpu_[i]);
  }

 private:
  std::vector<TensorBase> lazy_;
  std::vector<bool> written_;
  std::vector<TensorBase> cpu_;
};

// The lazy steps of the shared frame.
class LazyCpuCall {
 public:
  const char* label() const { return "lazy cpu fallback"; }
  DeviceType device_type() const { return lazy_device_type(); }

  // The lazy device of the call: its tensors are lazy, except 0-d cpu tensors (wrapped numbers).
  void start(const OperatorHandle& op, const std::vector<IValue>& arguments) {
    const std::string name = op.name();
    device_ = backend_support::common_device(name, arguments, [&](const TensorBase& t) {
      OP_CHECK(is_lazy(t), name, " (lazy cpu fallback): expected lazy tensors, got ",
               t.is_functional() ? std::string("a functional wrapper") : "a tensor on " + t.device().str());
    }).value_or(lazy_device());
    record_fallback(name);
    cpu_.emplace(op.schema(), arguments);
  }

  TensorBase to_cpu(const TensorBase& t) const { return cpu_->to_cpu(t); }

  void run(const OperatorHandle& op, Stack& cpu_stack) const {
    functionalization::BelowGuard below;  // the cpu call stays plain, whatever the thread's mode
    op.call_boxed(cpu_stack);
  }

  void write_back(const OperatorHandle& /*op*/, const std::vector<IValue>& /*arguments*/) const { cpu_->write_back(); }

  TensorBase to_backend(const TensorBase& t) const { return make_data_tensor(t, device_); }

 private:
  Device device_;
  std::optional<CpuArguments> cpu_;
};

void lazy_cpu_fallback(const OperatorHandle& op, DispatchKeySet /*ks*/, Stack* stack) {
  for (const Return& r : op.schema().returns())
    OP_CHECK(!r.annotation || r.is_write(), op.name(), ": returns a view of its input, and lazy tensors hold no views; "
             "run it on functional lazy tensors (factories and .to('lazy') make them), where it becomes its *_copy operator");
  LazyCpuCall call;
  backend_support::run_on_cpu(op, stack, call);
}

}  // namespace

}  // namespace op::lazy

OP_LIBRARY_IMPL(_, Lazy, m) {
  m.fallback(::op::KernelFunction::make_boxed<&::op::lazy::lazy_cpu_fallback>(), "lazy cpu fallback");
}
