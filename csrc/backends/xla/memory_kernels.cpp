// The XLA backend's allocation and data-movement kernels: empty and empty_strided allocate
// host memory on the xla device; copy_ (any direction, with dtype conversion and
// broadcasting), fill_ and _to_copy work through cpu views of the xla memory.
// Per-group declaration headers, not the umbrella: a backend-yaml edit recompiles only what it touches.
#include "backends/XLA/ops/_to_copy_native.h"
#include "backends/XLA/ops/copy_native.h"
#include "backends/XLA/ops/empty_native.h"
#include "backends/XLA/ops/empty_strided_native.h"
#include "backends/XLA/ops/fill_native.h"
#include "backends/xla/host_alias.h"
#include "backends/xla/metrics.h"
#include "backends/xla/xla_device.h"
#include "core/error.h"
#include "core/memory_format.h"
#include "native/memory_layout.h"
#include "ops/copy.h"
#include "ops/empty_like.h"
#include "ops/fill.h"

namespace op::xla {

namespace {

// Where an xla factory allocates: the requested xla device (any index), after the checks
// every allocation shares.
Device allocation_device(std::optional<Device> device, std::optional<Layout> layout, std::optional<bool> pin_memory,
                         const char* what) {
  const Device where = device.value_or(xla_device());
  OP_CHECK(where.type() == xla_device_type(), what, " (XLA kernel): cannot allocate on device ", where.str());
  OP_CHECK(!layout || *layout == Layout::Strided, what, ": only the strided layout is supported");
  OP_CHECK(!pin_memory.value_or(false), what, ": pin_memory=True is not supported on xla");
  return where;
}

}  // namespace

TensorBase XLANativeFunctions::empty_symint(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                                        std::optional<Device> device, std::optional<bool> pin_memory,
                                        std::optional<MemoryFormat> memory_format) {
  record_call(CallKind::Kernel, "aten::empty.memory_format");
  return native::allocate_empty(size, dtype, memory_format, allocation_device(device, layout, pin_memory, "empty"));
}

TensorBase XLANativeFunctions::empty_strided_symint(IntArrayRef size, IntArrayRef stride, std::optional<ScalarType> dtype,
                                                std::optional<Layout> layout, std::optional<Device> device,
                                                std::optional<bool> pin_memory) {
  record_call(CallKind::Kernel, "aten::empty_strided");
  return native::allocate_empty_strided(size, stride, dtype,
                                        allocation_device(device, layout, pin_memory, "empty_strided"));
}

// self or src (or both) is on xla. The copy itself is the in-tree copy_ between the cpu views,
// so a cuda or meta partner goes to its own copy kernel.
TensorBase& XLANativeFunctions::copy_(TensorBase& self, const TensorBase& src, bool non_blocking) {
  record_call(CallKind::Kernel, "aten::copy_");
  OP_CHECK(self.defined() && src.defined(), "copy_: undefined tensor");
  auto [dst, from] = cpu_views(self, src);
  ops::copy_::call(dst, from, non_blocking);
  return self;
}

TensorBase& XLANativeFunctions::fill_(TensorBase& self, const Scalar& value) {
  record_call(CallKind::Kernel, "aten::fill_.Scalar");
  TensorBase host = cpu_view(self);
  op::fill_(host, value);
  return self;
}

// A converted copy of an xla tensor, or of any tensor converted to xla (BackendSelect sends
// cpu->xla here too): allocated by empty_like (on the target device) and filled by copy_,
// which handle the memory format, dtype and device.
TensorBase XLANativeFunctions::_to_copy(const TensorBase& self, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                                    std::optional<Device> device, std::optional<bool> pin_memory, bool non_blocking,
                                    std::optional<MemoryFormat> memory_format) {
  record_call(CallKind::Kernel, "aten::_to_copy");
  TensorBase result = op::empty_like(self, dtype, layout, device, pin_memory, memory_format);
  ops::copy_::call(result, self, non_blocking);
  return result;
}

}  // namespace op::xla
