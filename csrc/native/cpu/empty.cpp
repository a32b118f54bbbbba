// empty.memory_format and empty_strided for CPU: uninitialised host memory. External devices
// emulated on the host (e.g. xla) may allocate here too; meta and CUDA have their own kernels.
#include "core/error.h"
#include "core/memory_format.h"
#include "native/memory_layout.h"
#include "ops/empty_native.h"
#include "ops/empty_strided_native.h"

namespace op {

namespace {

// The host device asked for, after the checks every host allocation shares.
Device host_device(std::optional<Device> device, std::optional<Layout> layout, std::optional<bool> pin_memory,
                   const char* what) {
  const Device where = device.value_or(Device(DeviceType::CPU));
  OP_CHECK(!where.is_meta() && where.type() != DeviceType::CUDA, what, " (CPU kernel): cannot allocate on device ",
           where.str());
  OP_CHECK(!layout || *layout == Layout::Strided, what, ": only the strided layout is supported");
  OP_CHECK(!pin_memory.value_or(false), what,
           ": pin_memory=True needs CUDA; this runtime has no pinned host memory");
  return where;
}

}  // namespace

TensorBase native::empty_cpu(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                         std::optional<Device> device, std::optional<bool> pin_memory,
                         std::optional<MemoryFormat> memory_format) {
  return native::allocate_empty(size, dtype, memory_format, host_device(device, layout, pin_memory, "empty"));
}

TensorBase native::empty_strided_cpu(IntArrayRef size, IntArrayRef stride, std::optional<ScalarType> dtype,
                                 std::optional<Layout> layout, std::optional<Device> device,
                                 std::optional<bool> pin_memory) {
  return native::allocate_empty_strided(size, stride, dtype, host_device(device, layout, pin_memory, "empty_strided"));
}

}  // namespace op
