// How log_softmax's kernels (CPU and CUDA) walk a tensor along `dim`: `outer` independent slabs,
// each `n` elements long along dim, `inner` of them interleaved (the stride of dim).
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace op::native {

struct Rows {
  int64_t outer = 1, n = 1, inner = 1;
};

// A 0-d tensor is one row of one element.
inline Rows rows_around(const TensorBase& t, int64_t dim) {
  Rows r;
  if (t.dim() == 0) return r;
  for (int64_t d = 0; d < dim; ++d) r.outer *= t.size(d);
  r.n = t.size(dim);
  for (int64_t d = dim + 1; d < t.dim(); ++d) r.inner *= t.size(d);
  return r;
}

}  // namespace op::native
