// The boxed CPU fallback at DispatchKey::XLA: an operator with no XLA kernel runs on copies of
// its xla arguments on the cpu, and its effects come back to xla:
//  - written arguments (in-place self, out= tensors; `(a!)` in the schema) are resized when
//    the operator resized them and get the new values copied back;
//  - a return that aliases a written argument is that original xla tensor; other returned
//    tensors become xla tensors over the cpu results' memory.
// The frame is the one every backend shares (backends/support/cpu_fallback.h).
#include <optional>
#include <string>
#include <vector>

#include "backends/support/cpu_fallback.h"
#include "backends/xla/host_alias.h"
#include "backends/xla/metrics.h"
#include "backends/xla/xla_device.h"
#include "core/error.h"
#include "core/host_ops.h"
#include "dispatch/operator_handle.h"
#include "dispatch/registration.h"

namespace op::xla {

namespace {

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

  // The cpu copy of an xla tensor (undefined when it was not copied).
  TensorBase copy_of(const TensorBase& t) const {
    for (const auto& [original, copy] : copies_)
      if (original.unsafe_impl() == t.unsafe_impl()) return copy;
    return TensorBase();
  }

 private:
  std::vector<std::pair<TensorBase, TensorBase>> copies_;
};

// The xla steps of the shared frame.
class XlaCpuCall {
 public:
  const char* label() const { return "XLA cpu fallback"; }
  DeviceType device_type() const { return xla_device_type(); }

  // The xla device the call runs for: all tensor arguments on one xla device, except 0-d cpu
  // tensors (wrapped numbers), which may join any device.
  void start(const OperatorHandle& op, const std::vector<IValue>& arguments) {
    const std::string name = op.schema().name().unqualified();
    const std::optional<Device> device = backend_support::common_device(name, arguments, [](const TensorBase&) {});
    if (!device) {  // no tensors (a factory) or only wrapped numbers
      device_ = xla_device();
      return;
    }
    OP_CHECK(device->type() == xla_device_type(), name, ": the XLA fallback got tensors on ", device->str(),
             ", not on xla");
    device_ = *device;
  }

  TensorBase to_cpu(const TensorBase& t) { return copies_.to_cpu(t); }

  void run(const OperatorHandle& op, Stack& cpu_stack) const {
    op.call_boxed(cpu_stack);  // every tensor is on the cpu now: the CPU kernel runs
  }

  void write_back(const OperatorHandle& op, const std::vector<IValue>& arguments) const {
    const FunctionSchema& schema = op.schema();
    for (size_t i = 0; i < arguments.size(); ++i) {
      if (!schema.arguments()[i].is_write()) continue;
      for_each_tensor(arguments[i], [&](const TensorBase& t) {
        if (is_xla(t)) write_into(t, copies_.copy_of(t));
      });
    }
  }

  TensorBase to_backend(const TensorBase& t) const { return xla_view(t, device_); }

 private:
  // Puts what the operator wrote into a cpu copy back into the original xla tensor.
  static void write_into(const TensorBase& original, const TensorBase& copy) {
    if (!copy.defined()) return;
    if (original.sizes() != copy.sizes()) host::resize_(original, copy.sizes());
    if (copy.numel() > 0) host::copy_(original, copy);
  }

  Device device_;
  CpuCopies copies_;
};

void xla_cpu_fallback(const OperatorHandle& op, DispatchKeySet /*ks*/, Stack* stack) {
  record_call(CallKind::Fallback, op.name());
  XlaCpuCall call;
  backend_support::run_on_cpu(op, stack, call);
}

}  // namespace

}  // namespace op::xla

OP_LIBRARY_IMPL(_, XLA, m) {
  m.fallback(::op::KernelFunction::make_boxed<&::op::xla::xla_cpu_fallback>(), "xla cpu fallback");
}
