// Layout and MemoryFormat appear in operator schemas (factory functions). Only the strided
// layout and the contiguous formats exist in this runtime; boxed, both travel as int64.
#pragma once

#include <cstdint>

namespace op {

enum class Layout : int8_t { Strided = 0 };
enum class MemoryFormat : int8_t { Contiguous = 0, Preserve = 1, ChannelsLast = 2, ChannelsLast3d = 3 };

}  // namespace op
