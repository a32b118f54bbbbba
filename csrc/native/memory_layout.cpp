#include "native/memory_layout.h"

#include <vector>

#include "core/error.h"
#include "core/memory_format.h"

namespace op::native {

void check_sizes_and_strides(IntArrayRef size, IntArrayRef stride, const char* what) {
  OP_CHECK(size.size() == stride.size(), what, ": size ", str_list(size), " and stride ", str_list(stride),
           " differ in length");
  for (int64_t s : size) OP_CHECK(s >= 0, what, ": negative size ", s, " in ", str_list(size));
  for (int64_t s : stride)
    OP_CHECK(s >= 0, what, ": negative stride ", s, " in ", str_list(stride), " is not supported");
}

bool is_contiguous_as(const TensorBase& t, MemoryFormat format) {
  switch (format) {
    case MemoryFormat::Preserve: return true;
    case MemoryFormat::Contiguous: return t.is_contiguous();
    case MemoryFormat::ChannelsLast:
    case MemoryFormat::ChannelsLast3d: {
      if (t.dim() != (format == MemoryFormat::ChannelsLast ? 4 : 5)) return false;
      if (t.numel() == 0) return true;
      const std::vector<int64_t> want = strides_for_memory_format(t.sizes(), format, "is_contiguous");
      for (int64_t d = 0; d < t.dim(); ++d)
        if (t.size(d) != 1 && t.stride(d) != want[d]) return false;
      return true;
    }
  }
  return false;
}

MemoryFormat resolve_memory_format(const TensorBase& t, std::optional<MemoryFormat> format) {
  if (format && *format != MemoryFormat::Preserve) return *format;
  if (!t.is_contiguous()) {
    for (MemoryFormat channels_last : {MemoryFormat::ChannelsLast, MemoryFormat::ChannelsLast3d})
      if (is_contiguous_as(t, channels_last)) return channels_last;
  }
  return MemoryFormat::Contiguous;
}

TensorBase allocate_empty(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<MemoryFormat> memory_format,
                      Device where) {
  const std::vector<int64_t> strides =
      strides_for_memory_format(size, memory_format.value_or(MemoryFormat::Contiguous), "empty");
  return TensorBase::empty_strided(size, strides, TensorOptions(dtype.value_or(ScalarType::Float32)).with_device(where));
}

TensorBase allocate_empty_strided(IntArrayRef size, IntArrayRef stride, std::optional<ScalarType> dtype, Device where) {
  check_sizes_and_strides(size, stride, "empty_strided");
  return TensorBase::empty_strided(size, stride, TensorOptions(dtype.value_or(ScalarType::Float32)).with_device(where));
}

}  // namespace op::native
