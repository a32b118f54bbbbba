// matmul for 1-d and 2-d operands, composed from mm: vectors become 1-row or 1-column
// matrices and the extra dimension is dropped from the result.
#include "core/error.h"
#include "core/host_ops.h"
#include "ops/matmul_native.h"
#include "ops/mm.h"

namespace op {

Tensor native::matmul(const Tensor& self, const Tensor& other) {
  OP_CHECK(self.defined() && other.defined(), "matmul: undefined tensor");
  const int64_t a = self.dim(), b = other.dim();
  OP_CHECK(a >= 1 && b >= 1, "matmul: both arguments need at least 1 dimension, but they have ", a, " and ", b);
  OP_CHECK(a <= 2 && b <= 2, "matmul: only 1-d and 2-d tensors are supported, got ", a, "-d and ", b, "-d");
  if (a == 2 && b == 2) return op::mm(self, other);
  if (a == 1 && b == 1) {
    OP_CHECK(self.size(0) == other.size(0), "matmul: a dot product needs vectors of equal length, got ",
             self.size(0), " and ", other.size(0));
    return host::view(op::mm(host::unsqueeze(self, 0), host::unsqueeze(other, 1)), {});
  }
  if (a == 1) return host::view(op::mm(host::unsqueeze(self, 0), other), {other.size(1)});  // [k] @ [k, p]
  return host::view(op::mm(self, host::unsqueeze(other, 1)), {self.size(0)});               // [n, k] @ [k]
}

}  // namespace op
