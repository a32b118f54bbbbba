// empty.memory_format for CPU: uninitialised host memory. External devices emulated on the
// host (e.g. xla) may allocate here too; meta and CUDA have their own kernels.
#include "core/error.h"
#include "core/memory_format.h"
#include "ops/empty_native.h"

namespace op {

Tensor native::empty_cpu(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                         std::optional<Device> device, std::optional<bool> pin_memory,
                         std::optional<MemoryFormat> memory_format) {
  const Device where = device.value_or(Device(DeviceType::CPU));
  OP_CHECK(!where.is_meta() && where.type() != DeviceType::CUDA, "empty (CPU kernel): cannot allocate on device ",
           where.str());
  OP_CHECK(!layout || *layout == Layout::Strided, "empty: only the strided layout is supported");
  OP_CHECK(!pin_memory.value_or(false), "empty: pin_memory=True needs CUDA; this runtime has no pinned host memory");
  const std::vector<int64_t> strides =
      strides_for_memory_format(size, memory_format.value_or(MemoryFormat::Contiguous), "empty");
  return Tensor::empty_strided(size, strides, TensorOptions(dtype.value_or(ScalarType::Float32)).with_device(where));
}

}  // namespace op
