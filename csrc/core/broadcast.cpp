#include "core/broadcast.h"

#include <algorithm>

#include "core/error.h"

namespace op {

std::vector<int64_t> broadcast_shapes(IntArrayRef a, IntArrayRef b) {
  const size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t d = 0; d < n; ++d) {
    // Dimension d of the result is dimension d - (n - size) of an operand, when it has one.
    const size_t lead_a = n - a.size(), lead_b = n - b.size();
    const int64_t size_a = d < lead_a ? 1 : a[d - lead_a];
    const int64_t size_b = d < lead_b ? 1 : b[d - lead_b];
    OP_CHECK(size_a == size_b || size_a == 1 || size_b == 1, "The size of tensor a (", size_a,
             ") must match the size of tensor b (", size_b, ") at non-singleton dimension ", d);
    out[d] = size_a == 1 ? size_b : size_a;
  }
  return out;
}

bool broadcasts_to(IntArrayRef from, IntArrayRef to) {
  if (from.size() > to.size()) return false;
  const size_t lead = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d)
    if (from[d] != 1 && from[d] != to[lead + d]) return false;
  return true;
}

}  // namespace op
