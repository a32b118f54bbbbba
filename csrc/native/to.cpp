// _to_copy (a converted copy: dtype, device, memory format) and the `to` overloads, which
// return self unchanged when nothing would change and copy=False, and _to_copy otherwise.
#include "native/memory_layout.h"
#include "ops/_to_copy.h"
#include "ops/_to_copy_native.h"
#include "ops/copy.h"
#include "ops/empty_like.h"
#include "ops/to_native.h"

namespace op {

namespace {

// An unspecified index matches any: "cpu" is the same device as "cpu:0".
bool same_device(Device a, Device b) {
  return a.type() == b.type() && (!a.has_index() || !b.has_index() || a.index() == b.index());
}

bool already_converted(const TensorBase& self, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                       std::optional<Device> device, std::optional<MemoryFormat> memory_format) {
  return (!dtype || *dtype == self.dtype()) && (!layout || *layout == Layout::Strided) &&
         (!device || same_device(*device, self.device())) &&
         (!memory_format || native::is_contiguous_as(self, *memory_format));
}

}  // namespace

TensorBase native::_to_copy(const TensorBase& self, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                        std::optional<Device> device, std::optional<bool> pin_memory, bool non_blocking,
                        std::optional<MemoryFormat> memory_format) {
  TensorBase result = op::empty_like(self, dtype, layout, device, pin_memory, memory_format);
  ops::copy_::call(result, self, non_blocking);
  return result;
}

TensorBase native::to(const TensorBase& self, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                  std::optional<Device> device, std::optional<bool> pin_memory, bool non_blocking, bool copy,
                  std::optional<MemoryFormat> memory_format) {
  if (!copy && !pin_memory.value_or(false) && already_converted(self, dtype, layout, device, memory_format))
    return self;
  return op::_to_copy(self, dtype, layout, device, pin_memory, non_blocking, memory_format);
}

TensorBase native::to(const TensorBase& self, Device device, ScalarType dtype, bool non_blocking, bool copy,
                  std::optional<MemoryFormat> memory_format) {
  return native::to(self, dtype, std::nullopt, device, std::nullopt, non_blocking, copy, memory_format);
}

TensorBase native::to(const TensorBase& self, ScalarType dtype, bool non_blocking, bool copy,
                  std::optional<MemoryFormat> memory_format) {
  return native::to(self, dtype, std::nullopt, std::nullopt, std::nullopt, non_blocking, copy, memory_format);
}

}  // namespace op
