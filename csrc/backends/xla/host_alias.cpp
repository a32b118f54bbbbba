#include "backends/xla/host_alias.h"

#include "backends/xla/xla_device.h"
#include "core/error.h"

namespace op::xla {

namespace {

bool is_cpu_scalar(const TensorBase& t) { return t.dim() == 0 && t.device().is_cpu(); }

// Storage over `from`'s bytes on another device; the release functor holds `from`, so the
// memory lives as long as either handle does.
Storage alias_storage(const Storage& from, Device device) {
  return Storage::from_external(from.data(), from.nbytes(), device, [keep = from](void*) {});
}

TensorBase over(const Storage& storage, const TensorBase& t) {
  return TensorBase::from_storage(storage, t.sizes(), t.strides(), t.storage_offset(), t.dtype());
}

TensorBase retarget(const TensorBase& t, Device device) { return over(alias_storage(t.storage(), device), t); }

}  // namespace

TensorBase cpu_view(const TensorBase& t) { return is_xla(t) ? retarget(t, Device(DeviceType::CPU)) : t; }

std::pair<TensorBase, TensorBase> cpu_views(const TensorBase& a, const TensorBase& b) {
  TensorBase a_view = cpu_view(a);
  if (is_xla(a) && is_xla(b) && a.storage().is_alias_of(b.storage())) return {a_view, over(a_view.storage(), b)};
  return {a_view, cpu_view(b)};
}

TensorBase xla_view(const TensorBase& cpu, Device device) {
  OP_CHECK(cpu.device().is_cpu(), "xla_view: expected a cpu tensor, got one on ", cpu.device().str());
  return retarget(cpu, device);
}

Device common_device(const char* op_name, std::initializer_list<Operand> operands) {
  const Operand* lead = nullptr;
  for (const Operand& o : operands) {
    if (!o.tensor.defined() || is_cpu_scalar(o.tensor)) continue;
    if (lead == nullptr) lead = &o;
    OP_CHECK(o.tensor.device() == lead->tensor.device(), op_name, ": expected all tensors on the same device, but ",
             lead->name, " is on ", lead->tensor.device().str(), " and ", o.name, " is on ",
             o.tensor.device().str());
  }
  if (lead == nullptr) return xla_device();  // only wrapped numbers (an include guard sent them here)
  OP_CHECK(is_xla(lead->tensor), op_name, ": the XLA kernel got tensors on ", lead->tensor.device().str(),
           ", not on xla");
  return lead->tensor.device();
}

}  // namespace op::xla
