// sum without dims: the composite that sums everything through the structured sum.dim_IntList.
#include "ops/sum.h"
#include "ops/sum_native.h"

namespace op {

Tensor native::sum(const Tensor& self, std::optional<ScalarType> dtype) {
  return op::sum(self, std::optional<IntArrayRef>(), /*keepdim=*/false, dtype);
}

}  // namespace op
