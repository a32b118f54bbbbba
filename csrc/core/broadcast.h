// Broadcasting: aligning shapes from the right, where a size-1 (or missing) dimension
// stretches to match the other operand.
#pragma once

#include <cstdint>
#include <vector>

#include "core/array_ref.h"

namespace op {

// The shape a and b broadcast to. Throws op::Error naming the first dimension (counted in
// the result) where neither size is 1 and they differ.
std::vector<int64_t> broadcast_shapes(IntArrayRef a, IntArrayRef b);

// Whether a tensor of shape `from` expands to `to` (copy_'s source into its destination).
bool broadcasts_to(IntArrayRef from, IntArrayRef to);

}  // namespace op
