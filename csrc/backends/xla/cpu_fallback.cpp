// The boxed CPU fallback at DispatchKey::XLA: an operator with no XLA kernel runs on copies of
// its xla arguments on the cpu, and its effects come back to xla:
//  - written arguments (in-place self, out= tensors; `(a!)` in the schema) are resized when
//    the operator resized them and get the new values copied back;
//  - a return that aliases a written argument is that original xla tensor; other returned
//    tensors become xla tensors over the cpu results' memory.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "backends/xla/host_alias.h"
#include "backends/xla/metrics.h"
#include "backends/xla/xla_device.h"
#include "core/error.h"
#include "core/host_ops.h"
#include "dispatch/operator_handle.h"
#include "dispatch/registration.h"

namespace op::xla {

namespace {

bool is_cpu_scalar(const TensorBase& t) { return t.defined() && t.dim() == 0 && t.device().is_cpu(); }

// The xla device the call runs for: all tensor arguments on one xla device, except 0-d cpu
// tensors (wrapped numbers), which may join any device.
Device call_device(const std::string& op_name, const std::vector<IValue>& arguments) {
  std::optional<Device> device;
  for (const IValue& value : arguments) {
    for_each_tensor(value, [&](const TensorBase& t) {
      if (!t.defined() || is_cpu_scalar(t)) return;
      if (!device) device = t.device();
      OP_CHECK(t.device() == *device, op_name, ": expected all tensors on the same device, but found tensors on ",
               device->str(), " and on ", t.device().str());
    });
  }
  if (!device) return xla_device();  // no tensors (a factory) or only wrapped numbers
  OP_CHECK(device->type() == xla_device_type(), op_name, ": the XLA fallback got tensors on ", device->str(),
           ", not on xla");
  return *device;
}

// cpu copies of the xla tensors of one call; the same xla tensor passed twice (x.pow_(x))
// gets one copy, so the operator sees the aliasing it would see on the cpu.
class CpuCopies {
 public:
  TensorBase to_cpu(const TensorBase& t) {
    if (!is_xla(t)) return t;
    for (const auto& [original, copy] : copies_)
      if (original.unsafe_impl() == t.unsafe_impl()) return copy;
    copies_.emplace_back(t, host::to(t, Device(DeviceType::CPU)));
    return copies_.back().second;
  }

  IValue to_cpu(const IValue& value) {
    // A factory's device=xla becomes cpu, so BackendSelect picks the CPU kernel.
    if (value.tag() == IValue::Tag::Device && value.to_device().type() == xla_device_type())
      return Device(DeviceType::CPU);
    return map_tensors(value, [&](const TensorBase& t) { return to_cpu(t); });
  }

  // The cpu copy of an xla tensor (undefined when it was not copied).
  TensorBase copy_of(const TensorBase& t) const {
    for (const auto& [original, copy] : copies_)
      if (original.unsafe_impl() == t.unsafe_impl()) return copy;
    return TensorBase();
  }

 private:
  std::vector<std::pair<TensorBase, TensorBase>> copies_;
};

// Puts what the operator wrote into a cpu copy back into the original xla tensor.
void write_back(const TensorBase& original, const TensorBase& copy) {
  if (!copy.defined()) return;
  if (original.sizes() != copy.sizes()) host::resize_(original, copy.sizes());
  if (copy.numel() > 0) host::copy_(original, copy);
}

IValue to_xla(const IValue& value, Device device) {
  return map_tensors(value, [&](const TensorBase& t) { return t.defined() && t.device().is_cpu() ? xla_view(t, device) : t; });
}

void xla_cpu_fallback(const OperatorHandle& op, DispatchKeySet /*ks*/, Stack* stack) {
  const FunctionSchema& schema = op.schema();
  const std::string name = op.name();
  record_call(CallKind::Fallback, name);

  const size_t num_arguments = schema.arguments().size();
  OP_CHECK(stack->size() >= num_arguments, name, " (XLA cpu fallback): expected ", num_arguments,
           " arguments on the stack, found ", stack->size());
  std::vector<IValue> arguments(stack->end() - static_cast<std::ptrdiff_t>(num_arguments), stack->end());
  stack->resize(stack->size() - num_arguments);
  const Device device = call_device(schema.name().unqualified(), arguments);

  CpuCopies copies;
  Stack cpu_stack;
  cpu_stack.reserve(num_arguments);
  for (const IValue& value : arguments) cpu_stack.push_back(copies.to_cpu(value));
  op.call_boxed(cpu_stack);  // every tensor is on the cpu now: the CPU kernel runs

  for (size_t i = 0; i < num_arguments; ++i) {
    if (!schema.arguments()[i].is_write()) continue;
    for_each_tensor(arguments[i], [&](const TensorBase& t) {
      if (is_xla(t)) write_back(t, copies.copy_of(t));
    });
  }
  const auto& returns = schema.returns();
  for (size_t i = 0; i < cpu_stack.size(); ++i) {
    const std::optional<size_t> written = i < returns.size() ? schema.written_argument_of(returns[i]) : std::nullopt;
    const bool is_self_or_out = written && arguments[*written].is_tensor();
    stack->push_back(is_self_or_out ? arguments[*written] : to_xla(cpu_stack[i], device));
  }
}

}  // namespace

}  // namespace op::xla

OP_LIBRARY_IMPL(_, XLA, m) {
  m.fallback(::op::KernelFunction::make_boxed<&::op::xla::xla_cpu_fallback>(), "xla cpu fallback");
}
