// matmul: the composite matrix product of numpy's rules, built from mm and bmm.
//   1-d @ 1-d: dot product (0-d result);  2-d @ 2-d: mm;
//   1-d operands become a 1-row / 1-column matrix whose extra dimension is dropped again;
//   n-d @ 1-d or 2-d: self's batch dimensions fold into its rows (one mm);
//   otherwise the batch dimensions broadcast, both sides expand and reshape to 3-d for bmm.
#include <string>
#include <vector>

#include "core/broadcast.h"
#include "core/error.h"
#include "core/structured_out.h"
#include "ops/bmm.h"
#include "ops/copy.h"
#include "ops/expand.h"
#include "ops/matmul_native.h"
#include "ops/mm.h"
#include "ops/reshape.h"
#include "ops/unsqueeze.h"

namespace op {

namespace {

std::vector<int64_t> concat(IntArrayRef a, IntArrayRef b) {
  std::vector<int64_t> out(a.begin(), a.end());
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

// All but the last `keep` sizes.
IntArrayRef leading_dims(const TensorBase& t, int64_t keep) {
  return IntArrayRef(t.sizes().data(), static_cast<size_t>(t.dim() - keep));
}

void check_operands(const TensorBase& self, const TensorBase& other) {
  OP_CHECK(self.defined() && other.defined(), "matmul: undefined tensor");
  OP_CHECK(self.dim() >= 1 && other.dim() >= 1, "matmul: both arguments need at least 1 dimension, but they have ",
           self.dim(), " and ", other.dim());
  OP_CHECK(self.dtype() == other.dtype(), "matmul: expected both arguments to have the same dtype, but got ",
           to_string(self.dtype()), " and ", to_string(other.dtype()));
  OP_CHECK(self.dtype() != ScalarType::Bool, "matmul: bool tensors are not supported");
  // The contracted dimension: self's last against other's second to last (its only one if 1-d).
  const int64_t k_self = self.size(-1), k_other = other.size(other.dim() == 1 ? 0 : -2);
  OP_CHECK(k_self == k_other, "matmul: shapes ", str_list(self.sizes()), " and ", str_list(other.sizes()),
           " cannot be multiplied (", k_self, " != ", k_other, ")");
}

// n-d (n >= 3) @ 1-d or 2-d: every row of every batch meets the same matrix, so one mm on
// self reshaped to [rows, K] does it.
TensorBase folded_matmul(const TensorBase& self, const TensorBase& other) {
  const bool vector = other.dim() == 1;
  std::vector<int64_t> shape(leading_dims(self, 1).begin(), leading_dims(self, 1).end());
  const TensorBase rows = op::reshape(self, {numel_of(shape), self.size(-1)});
  const TensorBase product = op::mm(rows, vector ? op::unsqueeze(other, 1) : other);
  if (!vector) shape.push_back(other.size(1));
  return op::reshape(product, shape);
}

// Broadcast batch dimensions: expand both sides to the common batch shape, flatten it into
// one dimension for bmm, and unflatten the result.
TensorBase batched_matmul(const TensorBase& self, const TensorBase& other) {
  const TensorBase a = self.dim() == 1 ? op::unsqueeze(self, 0) : self;     // [..., M, K]
  const TensorBase b = other.dim() == 1 ? op::unsqueeze(other, 1) : other;  // [..., K, N]
  const int64_t M = a.size(-2), K = a.size(-1), N = b.size(-1);
  std::vector<int64_t> batch;
  try {
    batch = broadcast_shapes(leading_dims(a, 2), leading_dims(b, 2));
  } catch (const Error&) {
    OP_CHECK(false, "matmul: the batch dimensions of shapes ", str_list(self.sizes()), " and ",
             str_list(other.sizes()), " cannot be broadcast together");
  }
  const int64_t batches = numel_of(batch);
  const TensorBase a3 = op::reshape(ops::expand::call(a, concat(batch, {M, K}), false), {batches, M, K});
  const TensorBase b3 = op::reshape(ops::expand::call(b, concat(batch, {K, N}), false), {batches, K, N});
  std::vector<int64_t> shape = batch;
  if (self.dim() > 1) shape.push_back(M);
  if (other.dim() > 1) shape.push_back(N);
  return op::reshape(op::bmm(a3, b3), shape);
}

}  // namespace

TensorBase native::matmul(const TensorBase& self, const TensorBase& other) {
  check_operands(self, other);
  const int64_t a = self.dim(), b = other.dim();
  if (a == 2 && b == 2) return op::mm(self, other);
  if (a == 1 && b == 1) return op::reshape(op::mm(op::unsqueeze(self, 0), op::unsqueeze(other, 1)), std::vector<int64_t>());
  if (a == 2 && b == 1) return op::reshape(op::mm(self, op::unsqueeze(other, 1)), {self.size(0)});
  if (a == 1 && b == 2) return op::reshape(op::mm(op::unsqueeze(self, 0), other), {other.size(1)});
  if (a >= 3 && b <= 2) return folded_matmul(self, other);
  return batched_matmul(self, other);
}

TensorBase& native::matmul_out(const TensorBase& self, const TensorBase& other, TensorBase& out) {
  check_operands(self, other);
  OP_CHECK(out.defined(), "matmul: out= is undefined");
  OP_CHECK(out.dtype() == self.dtype(), "matmul: expected out= to have dtype ", to_string(self.dtype()),
           ", but got ", to_string(out.dtype()));
  if (self.dim() == 2 && other.dim() == 2) return op::mm_out(out, self, other);
  // Other shapes compute into a new tensor first, so out may even alias an input.
  const TensorBase result = native::matmul(self, other);
  impl::resize_out(out, result.sizes(), {}, TensorOptions(result.dtype()).with_device(result.device()));
  ops::copy_::call(out, result, false);
  return out;
}

}  // namespace op
