// Matrix products: mm, bmm and addmm (with addmm_). meta() checks ranks, shapes, dtypes and
// devices and announces the result; the device-generic impl() turns every product into the
// batched gemm_stub (out [B,M,N] = beta * bias + alpha * a [B,M,K] @ b [B,K,N]).
#include <string>
#include <vector>

#include "core/broadcast.h"
#include "core/error.h"
#include "core/host_ops.h"
#include "core/scalar_type.h"
#include "native/stubs.h"
#include "ops/addmm_native.h"
#include "ops/bmm_native.h"
#include "ops/mm_native.h"

namespace op {

namespace {

std::string shape_text(const TensorBase& t) {
  std::string s;
  for (int64_t d = 0; d < t.dim(); ++d) s += (d ? "x" : "") + std::to_string(t.size(d));
  return s;
}

void check_rank(const TensorBase& t, int64_t rank, const char* what, const char* op_name) {
  OP_CHECK(t.defined(), op_name, ": ", what, " is undefined");
  OP_CHECK(t.dim() == rank, op_name, ": ", what, " must be a ", rank, "-d tensor, but got a ", t.dim(),
           "-d tensor of shape ", str_list(t.sizes()));
}

// The operands of a product share one dtype (no promotion, like torch.mm) and one device.
void check_same_type(const TensorBase& a, const TensorBase& b, const char* a_name, const char* b_name, const char* op_name) {
  OP_CHECK(a.dtype() == b.dtype(), op_name, ": expected ", a_name, " and ", b_name,
           " to have the same dtype, but got ", to_string(a.dtype()), " and ", to_string(b.dtype()));
  OP_CHECK(a.device() == b.device(), op_name, ": expected ", a_name, " and ", b_name,
           " to be on the same device, but got ", a.device().str(), " and ", b.device().str());
  OP_CHECK(a.dtype() != ScalarType::Bool, op_name, ": bool tensors are not supported");
}

void check_out_dtype(const TensorBase& out, ScalarType dtype, const char* op_name) {
  if (out.defined())
    OP_CHECK(out.dtype() == dtype, op_name, ": expected out= to have dtype ", to_string(dtype), ", but got ",
             to_string(out.dtype()));
}

// Integer products cannot scale by a fraction.
void check_scale(const Scalar& s, const char* name, ScalarType dtype, const char* op_name) {
  OP_CHECK(is_floating(dtype) || !s.is_floating_point(), op_name, ": ", name, " is ", s.to_string(),
           " but the tensors are ", to_string(dtype), "; an integer product needs an integer ", name);
  OP_CHECK(!s.is_bool(), op_name, ": ", name, " must be a number, not a bool");
}

TensorOptions options_of(const TensorBase& t) { return TensorOptions(t.dtype()).with_device(t.device()); }

// Computes out = beta * bias + alpha * (a @ b) on 3-d operands. The stub wants an out that
// shares no memory with its inputs, so an aliased out (addmm_, or out= passing an input) is
// computed into a fresh tensor and copied back.
void run_gemm(const TensorBase& out, const TensorBase& a, const TensorBase& b, const TensorBase& bias, const Scalar& beta,
              const Scalar& alpha) {
  if (out.numel() == 0) return;
  const DeviceType device = out.device().type();
  const bool aliased = out.is_alias_of(a) || out.is_alias_of(b) || (bias.defined() && out.is_alias_of(bias));
  if (!aliased) {
    native::gemm_stub(device, out, a, b, bias, beta, alpha);
    return;
  }
  const TensorBase fresh = TensorBase::empty(out.sizes(), options_of(out));
  native::gemm_stub(device, fresh, a, b, bias, beta, alpha);
  native::copy_stub(device, out, fresh);
}

TensorBase as_batch(const TensorBase& matrix) { return host::unsqueeze(matrix, 0); }

}  // namespace

// ----- mm: [M,K] @ [K,N] -----

void meta::structured_mm::meta(const TensorBase& self, const TensorBase& mat2) {
  check_rank(self, 2, "self", "mm");
  check_rank(mat2, 2, "mat2", "mm");
  check_same_type(self, mat2, "mat1", "mat2", "mm");
  OP_CHECK(self.size(1) == mat2.size(0), "mm: mat1 and mat2 shapes cannot be multiplied (", shape_text(self),
           " and ", shape_text(mat2), ")");
  check_out_dtype(maybe_get_output(), self.dtype(), "mm");
  set_output_contiguous(0, {self.size(0), mat2.size(1)}, options_of(self));
}

void native::structured_mm_out::impl(const TensorBase& self, const TensorBase& mat2, const TensorBase& out) {
  run_gemm(as_batch(out), as_batch(self), as_batch(mat2), TensorBase(), 0, 1);
}

// ----- bmm: [B,M,K] @ [B,K,N] -----

void meta::structured_bmm::meta(const TensorBase& self, const TensorBase& mat2) {
  check_rank(self, 3, "self", "bmm");
  check_rank(mat2, 3, "mat2", "bmm");
  check_same_type(self, mat2, "self", "mat2", "bmm");
  OP_CHECK(self.size(0) == mat2.size(0), "bmm: self and mat2 must have the same batch size, but got ",
           str_list(self.sizes()), " and ", str_list(mat2.sizes()));
  OP_CHECK(self.size(2) == mat2.size(1), "bmm: batch1 and batch2 shapes cannot be multiplied (", shape_text(self),
           " and ", shape_text(mat2), ")");
  check_out_dtype(maybe_get_output(), self.dtype(), "bmm");
  set_output_contiguous(0, {self.size(0), self.size(1), mat2.size(2)}, options_of(self));
}

void native::structured_bmm_out::impl(const TensorBase& self, const TensorBase& mat2, const TensorBase& out) {
  run_gemm(out, self, mat2, TensorBase(), 0, 1);
}

// ----- addmm: beta * self + alpha * (mat1 @ mat2), self broadcast to [M,N] -----

void meta::structured_addmm::meta(const TensorBase& self, const TensorBase& mat1, const TensorBase& mat2, const Scalar& beta,
                                  const Scalar& alpha) {
  OP_CHECK(self.defined(), "addmm: self is undefined");
  check_rank(mat1, 2, "mat1", "addmm");
  check_rank(mat2, 2, "mat2", "addmm");
  check_same_type(mat1, mat2, "mat1", "mat2", "addmm");
  check_same_type(self, mat1, "self", "mat1", "addmm");
  OP_CHECK(mat1.size(1) == mat2.size(0), "addmm: mat1 and mat2 shapes cannot be multiplied (", shape_text(mat1),
           " and ", shape_text(mat2), ")");
  const std::vector<int64_t> shape = {mat1.size(0), mat2.size(1)};
  OP_CHECK(broadcasts_to(self.sizes(), shape), "addmm: self of shape ", str_list(self.sizes()),
           " cannot be broadcast to the product's shape ", str_list(shape));
  check_scale(beta, "beta", self.dtype(), "addmm");
  check_scale(alpha, "alpha", self.dtype(), "addmm");
  check_out_dtype(maybe_get_output(), self.dtype(), "addmm");
  set_output_contiguous(0, shape, options_of(self));
}

void native::structured_addmm_out::impl(const TensorBase& self, const TensorBase& mat1, const TensorBase& mat2,
                                        const Scalar& beta, const Scalar& alpha, const TensorBase& out) {
  // beta == 0 ignores self entirely, nan and inf included (as BLAS does).
  const bool use_bias = beta.to<double>() != 0;
  const TensorBase bias = use_bias ? as_batch(host::expand(self, out.sizes())) : TensorBase();
  run_gemm(as_batch(out), as_batch(mat1), as_batch(mat2), bias, beta, alpha);
}

}  // namespace op
