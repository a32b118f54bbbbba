// The boxed CPU fallback at DispatchKey::Lazy, for every operator the lazy yaml does not list:
// the lazy arguments' graphs run (one graph for all of them), the operator runs on their data
// on the cpu, a written lazy argument (in-place self, out=) takes its private cpu copy as its new
// data, and the other results become lazy tensors over the cpu results. Counted per operator
// (metrics: fallbacks). An operator that returns a view of an argument is refused: lazy tensors
// hold no views; functionalization, above this key, turns views into their *_copy operators.
#include <optional>
#include <string>
#include <vector>

#include "backends/lazy/graph.h"
#include "backends/lazy/lazy_tensor.h"
#include "backends/lazy/metrics.h"
#include "core/error.h"
#include "core/host_ops.h"
#include "dispatch/operator_handle.h"
#include "dispatch/registration.h"
#include "functionalization/functionalization.h"

namespace op::lazy {

namespace {

bool is_cpu_scalar(const TensorBase& t) { return t.defined() && t.dim() == 0 && t.device().is_cpu(); }

// The lazy device of the call: its tensors are lazy, except 0-d cpu tensors (wrapped numbers).
Device call_device(const std::string& op_name, const std::vector<IValue>& arguments) {
  std::optional<Device> device;
  for (const IValue& value : arguments) {
    for_each_tensor(value, [&](const TensorBase& t) {
      if (!t.defined() || is_cpu_scalar(t)) return;
      OP_CHECK(is_lazy(t), op_name, " (lazy cpu fallback): expected lazy tensors, got ",
               t.is_functional() ? std::string("a functional wrapper") : "a tensor on " + t.device().str());
      if (!device) device = t.device();
      OP_CHECK(t.device() == *device, op_name, ": expected all tensors on the same device, but found tensors on ",
               device->str(), " and on ", t.device().str());
    });
  }
  return device.value_or(lazy_device());
}

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

  IValue to_cpu(const IValue& value) const {
    // A factory's device=lazy becomes cpu, so BackendSelect picks the CPU kernel.
    if (value.tag() == IValue::Tag::Device && value.to_device().type() == lazy_device_type())
      return Device(DeviceType::CPU);
    return map_tensors(value, [&](const TensorBase& t) { return to_cpu(t); });
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

IValue to_lazy(const IValue& value, Device device) {
  return map_tensors(value, [&](const TensorBase& t) { return t.defined() && t.device().is_cpu() ? make_data_tensor(t, device) : t; });
}

void lazy_cpu_fallback(const OperatorHandle& op, DispatchKeySet /*ks*/, Stack* stack) {
  const FunctionSchema& schema = op.schema();
  const std::string name = op.name();
  for (const Return& r : schema.returns())
    OP_CHECK(!r.annotation || r.is_write(), name, ": returns a view of its input, and lazy tensors hold no views; "
             "run it on functional lazy tensors (factories and .to('lazy') make them), where it becomes its *_copy operator");
  const size_t num_arguments = schema.arguments().size();
  OP_CHECK(stack->size() >= num_arguments, name, " (lazy cpu fallback): expected ", num_arguments,
           " arguments on the stack, found ", stack->size());
  std::vector<IValue> arguments(stack->end() - static_cast<std::ptrdiff_t>(num_arguments), stack->end());
  stack->resize(stack->size() - num_arguments);
  const Device device = call_device(name, arguments);
  record_fallback(name);

  const CpuArguments cpu(schema, arguments);
  Stack cpu_stack;
  cpu_stack.reserve(num_arguments);
  for (const IValue& value : arguments) cpu_stack.push_back(cpu.to_cpu(value));
  {
    functionalization::BelowGuard below;  // the cpu call stays plain, whatever the thread's mode
    op.call_boxed(cpu_stack);
  }
  cpu.write_back();
  const auto& returns = schema.returns();
  for (size_t i = 0; i < cpu_stack.size(); ++i) {
    const std::optional<size_t> written = i < returns.size() ? schema.written_argument_of(returns[i]) : std::nullopt;
    const bool is_self_or_out = written && arguments[*written].is_tensor();
    stack->push_back(is_self_or_out ? arguments[*written] : to_lazy(cpu_stack[i], device));
  }
}

}  // namespace

}  // namespace op::lazy

OP_LIBRARY_IMPL(_, Lazy, m) {
  m.fallback(::op::KernelFunction::make_boxed<&::op::lazy::lazy_cpu_fallback>(), "lazy cpu fallback");
}
