#include "core/memory_format.h"

#include "core/error.h"
#include "core/strided_loop.h"

namespace op {

namespace {

const char* name_of(MemoryFormat format) {
  switch (format) {
    case MemoryFormat::Contiguous: return "contiguous_format";
    case MemoryFormat::Preserve: return "preserve_format";
    case MemoryFormat::ChannelsLast: return "channels_last";
    case MemoryFormat::ChannelsLast3d: return "channels_last_3d";
  }
  return "?";
}

}  // namespace

std::vector<int64_t> strides_for_memory_format(IntArrayRef sizes, MemoryFormat format, const char* what) {
  switch (format) {
    case MemoryFormat::Contiguous: return contiguous_strides(sizes);
    case MemoryFormat::Preserve:
      fail(str(what, ": memory format preserve_format needs an input tensor to preserve; use contiguous_format"));
    case MemoryFormat::ChannelsLast:
    case MemoryFormat::ChannelsLast3d: {
      const size_t want = format == MemoryFormat::ChannelsLast ? 4 : 5;
      OP_CHECK(sizes.size() == want, what, ": memory format ", name_of(format), " needs a ", want, "-d shape, got ",
               sizes.size(), " dimensions");
      // Innermost first: channels (dim 1), then the spatial dims from last to first, then batch.
      std::vector<int64_t> strides(want);
      int64_t step = 1;
      auto place = [&](size_t d) {
        strides[d] = step;
        step *= sizes[d] > 1 ? sizes[d] : 1;
      };
      place(1);
      for (size_t d = want - 1; d >= 2; --d) place(d);
      place(0);
      return strides;
    }
  }
  fail(str(what, ": unknown memory format ", static_cast<int>(format)));
}

}  // namespace op
