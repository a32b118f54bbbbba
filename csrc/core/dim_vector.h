// DimVector: sizes or strides a structured kernel's meta() computes and hands to impl()
// (`precomputed: - indices -> DimVector sizes, DimVector strides` in PyTorch's yaml). Not a
// schema type, so it never boxes. PyTorch's is a SmallVector of 5 inline elements; a vector
// is enough here, and it converts to IntArrayRef like any vector.
#pragma once

#include <cstdint>
#include <vector>

namespace op {

using DimVector = std::vector<int64_t>;

}  // namespace op
