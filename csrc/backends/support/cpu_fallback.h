// The frame every external backend's boxed CPU fallback shares (the fallback a backend registers
// for the operators it has no kernel for): the operator's arguments come off the stack, go to
// the cpu, the operator runs there, and its effects come back to the backend. What a backend's
// tensors are, how their cpu values are made and how written values get back differs between
// backends (an xla tensor aliases host memory; a lazy tensor stands for pending IR or data), so
// the backend supplies those steps and run_on_cpu orders them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/ivalue.h"
#include "core/tensor.h"
#include "dispatch/operator_handle.h"

namespace op::backend_support {

// A 0-d cpu tensor: a wrapped number, which may join a call on any device.
inline bool is_cpu_scalar(const TensorBase& t) { return t.defined() && t.dim() == 0 && t.device().is_cpu(); }

// The one device of a call's tensors, wrapped numbers aside; nullopt when there are none (a
// factory). check(t) sees each such tensor first.
template <class Check>
std::optional<Device> common_device(const std::string& op_name, const std::vector<IValue>& arguments, Check check) {
  std::optional<Device> device;
  for (const IValue& value : arguments) {
    for_each_tensor(value, [&](const TensorBase& t) {
      if (!t.defined() || is_cpu_scalar(t)) return;
      check(t);
      if (!device) device = t.device();
      OP_CHECK(t.device() == *device, op_name, ": expected all tensors on the same device, but found tensors on ",
               device->str(), " and on ", t.device().str());
    });
  }
  return device;
}

// Runs `op` on the cpu for a backend. `backend` supplies the steps that differ:
//   const char* label()            names the fallback in messages ("lazy cpu fallback")
//   DeviceType device_type()       the backend's device type
//   void start(op, arguments)      sees the call's arguments first (their device, metrics, cpu values)
//   TensorBase to_cpu(t)           the cpu value of a tensor argument (others as they are)
//   void run(op, cpu_stack)        calls the operator boxed on the cpu arguments
//   void write_back(op, arguments) puts what the operator wrote into written arguments' cpu
//                                  values back into those arguments
//   TensorBase to_backend(t)       a backend tensor over a defined cpu result
// A device argument of the backend's type becomes cpu, so a factory's BackendSelect picks the CPU
// kernel. A return that is a written argument (in-place self, out=) is that argument itself.
template <class Backend>
void run_on_cpu(const OperatorHandle& op, Stack* stack, Backend& backend) {
  const FunctionSchema& schema = op.schema();
  const size_t num_arguments = schema.arguments().size();
  OP_CHECK(stack->size() >= num_arguments, op.name(), " (", backend.label(), "): expected ", num_arguments,
           " arguments on the stack, found ", stack->size());
  std::vector<IValue> arguments(stack->end() - static_cast<std::ptrdiff_t>(num_arguments), stack->end());
  stack->resize(stack->size() - num_arguments);
  backend.start(op, arguments);

  Stack cpu_stack;
  cpu_stack.reserve(num_arguments);
  for (const IValue& value : arguments) {
    if (value.tag() == IValue::Tag::Device && value.to_device().type() == backend.device_type())
      cpu_stack.push_back(Device(DeviceType::CPU));
    else
      cpu_stack.push_back(map_tensors(value, [&](const TensorBase& t) { return backend.to_cpu(t); }));
  }
  backend.run(op, cpu_stack);
  backend.write_back(op, arguments);

  const auto& returns = schema.returns();
  for (size_t i = 0; i < cpu_stack.size(); ++i) {
    const std::optional<size_t> written = i < returns.size() ? schema.written_argument_of(returns[i]) : std::nullopt;
    if (written && arguments[*written].is_tensor()) {
      stack->push_back(arguments[*written]);
      continue;
    }
    stack->push_back(map_tensors(cpu_stack[i], [&](const TensorBase& t) {
      return t.defined() && t.device().is_cpu() ? backend.to_backend(t) : t;
    }));
  }
}

}  // namespace op::backend_support
