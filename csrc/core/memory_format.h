// Strides for a requested MemoryFormat (factory functions such as empty).
#pragma once

#include <cstdint>
#include <vector>

#include "core/array_ref.h"
#include "core/layout.h"

namespace op {

// Contiguous: row-major. ChannelsLast (4-d, NCHW sizes) and ChannelsLast3d (5-d, NCDHW) put
// the channel dimension innermost. Preserve has nothing to preserve in a factory: an error,
// as is a channels-last format for the wrong number of dimensions. `what` names the caller.
std::vector<int64_t> strides_for_memory_format(IntArrayRef sizes, MemoryFormat format, const char* what);

}  // namespace op
