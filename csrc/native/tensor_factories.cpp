// Factory kernels that work for every backend: empty for Meta (shape only, no data) and the
// composite zeros (empty through the dispatcher, then filled).
#include "core/error.h"
#include "core/host_ops.h"
#include "core/memory_format.h"
#include "ops/empty.h"
#include "ops/empty_native.h"
#include "ops/zeros_native.h"

namespace op {

Tensor native::empty_meta(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                          std::optional<Device> device, std::optional<bool> pin_memory,
                          std::optional<MemoryFormat> memory_format) {
  // Whatever device was asked for, reaching the Meta kernel means a meta tensor (e.g. under a
  // thread-local Meta include).
  (void)device;
  OP_CHECK(!layout || *layout == Layout::Strided, "empty: only the strided layout is supported");
  OP_CHECK(!pin_memory.value_or(false), "empty: meta tensors cannot be pinned");
  const std::vector<int64_t> strides =
      strides_for_memory_format(size, memory_format.value_or(MemoryFormat::Contiguous), "empty");
  return Tensor::empty_strided(size, strides,
                               TensorOptions(dtype.value_or(ScalarType::Float32)).with_device(Device(DeviceType::Meta)));
}

Tensor native::zeros(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                     std::optional<Device> device, std::optional<bool> pin_memory) {
  Tensor t = op::empty(size, dtype, layout, device, pin_memory);
  if (!t.is_meta()) host::fill_(t, 0);
  return t;
}

}  // namespace op
