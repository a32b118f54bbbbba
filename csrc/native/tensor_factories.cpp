// Factory kernels that work for every backend: empty and empty_strided for Meta (shape only,
// no data), and the composites that allocate through the dispatcher (so the device picks the
// allocator) and then fill: zeros, ones, full, empty_like, zeros_like, ones_like.
#include "core/error.h"
#include "core/host_ops.h"
#include "core/memory_format.h"
#include "native/memory_layout.h"
#include "ops/empty.h"
#include "ops/empty_like_native.h"
#include "ops/empty_native.h"
#include "ops/empty_strided_native.h"
#include "ops/fill.h"
#include "ops/full_native.h"
#include "ops/ones_like_native.h"
#include "ops/ones_native.h"
#include "ops/zeros_like_native.h"
#include "ops/zeros_native.h"

namespace op {

namespace {

void check_meta_options(std::optional<Layout> layout, std::optional<bool> pin_memory, const char* what) {
  OP_CHECK(!layout || *layout == Layout::Strided, what, ": only the strided layout is supported");
  OP_CHECK(!pin_memory.value_or(false), what, ": meta tensors cannot be pinned");
}

TensorOptions meta_options(std::optional<ScalarType> dtype) {
  return TensorOptions(dtype.value_or(ScalarType::Float32)).with_device(Device(DeviceType::Meta));
}

// full's dtype when none is given: the fill value's kind, floating point as float32.
ScalarType dtype_of_value(const Scalar& value) {
  return value.is_bool() ? ScalarType::Bool : value.is_integral() ? ScalarType::Int64 : ScalarType::Float32;
}

}  // namespace

TensorBase native::empty_meta(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                          std::optional<Device> device, std::optional<bool> pin_memory,
                          std::optional<MemoryFormat> memory_format) {
  // Whatever device was asked for, reaching the Meta kernel means a meta tensor (e.g. under a
  // thread-local Meta include).
  (void)device;
  check_meta_options(layout, pin_memory, "empty");
  const std::vector<int64_t> strides =
      strides_for_memory_format(size, memory_format.value_or(MemoryFormat::Contiguous), "empty");
  return TensorBase::empty_strided(size, strides, meta_options(dtype));
}

TensorBase native::empty_strided_meta(IntArrayRef size, IntArrayRef stride, std::optional<ScalarType> dtype,
                                  std::optional<Layout> layout, std::optional<Device> device,
                                  std::optional<bool> pin_memory) {
  (void)device;
  check_meta_options(layout, pin_memory, "empty_strided");
  check_sizes_and_strides(size, stride, "empty_strided");
  return TensorBase::empty_strided(size, stride, meta_options(dtype));
}

TensorBase native::zeros(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                     std::optional<Device> device, std::optional<bool> pin_memory) {
  TensorBase t = op::empty(size, dtype, layout, device, pin_memory);
  return op::fill_(t, 0);
}

TensorBase native::ones(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                    std::optional<Device> device, std::optional<bool> pin_memory) {
  TensorBase t = op::empty(size, dtype, layout, device, pin_memory);
  return op::fill_(t, 1);
}

TensorBase native::full(IntArrayRef size, const Scalar& fill_value, std::optional<ScalarType> dtype,
                    std::optional<Layout> layout, std::optional<Device> device, std::optional<bool> pin_memory) {
  TensorBase t = op::empty(size, dtype.value_or(dtype_of_value(fill_value)), layout, device, pin_memory);
  return op::fill_(t, fill_value);
}

TensorBase native::empty_like(const TensorBase& self, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                          std::optional<Device> device, std::optional<bool> pin_memory,
                          std::optional<MemoryFormat> memory_format) {
  return op::empty(self.sizes(), dtype.value_or(self.dtype()), layout, device.value_or(self.device()), pin_memory,
                   resolve_memory_format(self, memory_format));
}

TensorBase native::zeros_like(const TensorBase& self, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                          std::optional<Device> device, std::optional<bool> pin_memory,
                          std::optional<MemoryFormat> memory_format) {
  TensorBase t = native::empty_like(self, dtype, layout, device, pin_memory, memory_format);
  return op::fill_(t, 0);
}

TensorBase native::ones_like(const TensorBase& self, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                         std::optional<Device> device, std::optional<bool> pin_memory,
                         std::optional<MemoryFormat> memory_format) {
  TensorBase t = native::empty_like(self, dtype, layout, device, pin_memory, memory_format);
  return op::fill_(t, 1);
}

}  // namespace op
