// The kernels the lazy yaml lists under `supported`: allocation (empty, empty_strided), moving
// and converting (_to_copy, copy_), fill_, lift and lift_fresh. Factories and moves onto the
// device called above the Functionalize key return functional wrappers (PR 75527), so user
// programs never hand this backend a view or an in-place operator.
// Per-group declaration headers, not the umbrella: a yaml edit recompiles only what it touches.
// Not LazyNonNativeIr.h either: its class Scalar would hide op::Scalar in the declarations below.
#include "backends/Lazy/ops/_to_copy_native.h"
#include "backends/Lazy/ops/copy_native.h"
#include "backends/Lazy/ops/empty_native.h"
#include "backends/Lazy/ops/empty_strided_native.h"
#include "backends/Lazy/ops/expand_copy_ir.h"
#include "backends/Lazy/ops/fill_native.h"
#include "backends/Lazy/ops/lift_fresh_native.h"
#include "backends/Lazy/ops/lift_native.h"
#include "backends/lazy/lazy_tensor.h"
#include "backends/lazy/non_native.h"
#include "core/error.h"
#include "functionalization/functionalization.h"
#include "native/memory_layout.h"
#include "ops/_to_copy_ops.h"
#include "ops/copy_ops.h"
#include "ops/expand_copy_ops.h"

namespace op::lazy {

namespace {

const Device kCpu{DeviceType::CPU};

Device allocation_device(std::optional<Device> device, std::optional<Layout> layout, std::optional<bool> pin_memory,
                         const char* what) {
  const Device where = device.value_or(lazy_device());
  OP_CHECK(where.type() == lazy_device_type(), what, " (Lazy kernel): cannot allocate on device ", where.str());
  OP_CHECK(!layout || *layout == Layout::Strided, what, ": only the strided layout is supported");
  OP_CHECK(!pin_memory.value_or(false), what, ": pin_memory=True is not supported on lazy");
  return where;
}

// t's values on the cpu: a lazy tensor's data (its graph run first), other tensors copied.
// Callers hold a BelowGuard, so nothing here becomes functional.
TensorBase cpu_values(const TensorBase& t) {
  if (is_lazy(t)) return materialize(t);
  if (t.device().is_cpu()) return t;
  return ops::_to_copy::call(t, std::nullopt, std::nullopt, kCpu, std::nullopt, false, std::nullopt);
}

}  // namespace

// Lazy tensors are contiguous: a memory format or strides only shape the cpu buffer.
TensorBase LazyNativeFunctions::empty_symint(IntArrayRef size, std::optional<ScalarType> dtype,
                                             std::optional<Layout> layout, std::optional<Device> device,
                                             std::optional<bool> pin_memory, std::optional<MemoryFormat> memory_format) {
  const Device where = allocation_device(device, layout, pin_memory, "empty");
  TensorBase data = native::allocate_empty(size, dtype, memory_format, kCpu);
  return wrap_if_above(make_data_tensor(std::move(data), where));
}

TensorBase LazyNativeFunctions::empty_strided_symint(IntArrayRef size, IntArrayRef stride,
                                                     std::optional<ScalarType> dtype, std::optional<Layout> layout,
                                                     std::optional<Device> device, std::optional<bool> pin_memory) {
  const Device where = allocation_device(device, layout, pin_memory, "empty_strided");
  TensorBase data = native::allocate_empty_strided(size, stride, dtype, kCpu);
  return wrap_if_above(make_data_tensor(std::move(data), where));
}

// Onto lazy: a lazy source's value (a `cast` node for a dtype change), or a converted cpu copy
// of a tensor from elsewhere. Off lazy: the source's data, run first, converted by the target
// device's _to_copy.
TensorBase LazyNativeFunctions::_to_copy(const TensorBase& self, std::optional<ScalarType> dtype,
                                         std::optional<Layout> layout, std::optional<Device> device,
                                         std::optional<bool> pin_memory, bool non_blocking,
                                         std::optional<MemoryFormat> memory_format) {
  OP_CHECK(self.defined(), "_to_copy: undefined tensor");
  const Device target = device.value_or(self.device());
  if (target.type() == lazy_device_type()) {
    allocation_device(target, layout, pin_memory, "_to_copy");
    if (is_lazy(self) && (!dtype || *dtype == self.dtype())) return wrap_if_above(share_value(self, target));
    if (is_lazy(self)) return wrap_if_above(make_tensor(cast(ir_value(self), *dtype), target));
    TensorBase data;
    {
      functionalization::BelowGuard below;
      data = ops::_to_copy::call(cpu_values(self), dtype, std::nullopt, kCpu, std::nullopt, false, std::nullopt);
    }
    return wrap_if_above(make_data_tensor(std::move(data), target));
  }
  OP_CHECK(is_lazy(self), "_to_copy (Lazy kernel): expected a lazy tensor or a move onto lazy, got a tensor on ",
           self.device().str(), " moving to ", target.str());
  functionalization::BelowGuard below;
  return ops::_to_copy::call(cpu_values(self), dtype, layout, target, pin_memory, non_blocking, memory_format);
}

TensorBase& LazyNativeFunctions::copy_(TensorBase& self, const TensorBase& src, bool non_blocking) {
  OP_CHECK(self.defined() && src.defined(), "copy_: undefined tensor");
  if (is_lazy(self)) {
    if (is_lazy(src)) {
      if (src.sizes() == self.sizes() && src.dtype() == self.dtype()) {
        set_same_value(self, src);
        return self;
      }
      Value value = cast(ir_value(src), self.dtype());
      if (src.sizes() != self.sizes()) {  // broadcast, checked as the eager expand checks it
        std::vector<Shape> shapes = shapes_of(ops::expand_copy::call(to_meta(src), self.sizes(), false));
        shapes[0].dtype = self.dtype();
        value = Value{reuse_or_make<ExpandCopy>(value, self.sizes().vec(), false, std::move(shapes)), 0};
      }
      set_value(self, std::move(value));
      return self;
    }
    functionalization::BelowGuard below;
    TensorBase data = TensorBase::empty(self.sizes(), TensorOptions(self.dtype()));
    ops::copy_::call(data, cpu_values(src), false);
    set_data(self, std::move(data));
    return self;
  }
  OP_CHECK(is_lazy(src), "copy_ (Lazy kernel): neither tensor is lazy (", self.device().str(), " <- ",
           src.device().str(), ")");
  functionalization::BelowGuard below;
  ops::copy_::call(self, cpu_values(src), non_blocking);
  return self;
}

TensorBase& LazyNativeFunctions::fill_(TensorBase& self, const ::op::Scalar& value) {
  state_of(self, "fill_");
  set_value(self, expanded_scalar(value, self.dtype(), self.sizes()));
  return self;
}

// lift copies (a new tensor of the same value); lift_fresh's argument is fresh, so it is itself.
TensorBase LazyNativeFunctions::lift(const TensorBase& self) { return share_value(self, self.device()); }

TensorBase LazyNativeFunctions::lift_fresh(const TensorBase& self) {
  state_of(self, "lift_fresh");
  return self;
}

}  // namespace op::lazy
