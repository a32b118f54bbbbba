// Every dispatch stub of the operator library (see dispatch_stub.h), declared and defined here:
// the device loops that device-generic impl() functions in csrc/native/*.cpp call. CPU loops
// register in csrc/native/cpu/, CUDA loops in csrc/native/cuda/.
#pragma once

#include <cstdint>
#include <optional>

#include "core/scalar.h"
#include "core/tensor.h"
#include "core/tensor_iterator.h"
#include "native/dispatch_stub.h"

namespace op::native {

// ----- pointwise: meta() built the iterator; inputs in schema order, output(0) is the result.
using PointwiseFn = void(TensorIteratorBase&);
OP_DECLARE_STUB(add_stub, void(TensorIteratorBase&, const Scalar& alpha));  // a + alpha * b; sub passes -alpha
OP_DECLARE_STUB(mul_stub, PointwiseFn);
OP_DECLARE_STUB(div_true_stub, PointwiseFn);  // computes in a floating type (meta promotes integers)
OP_DECLARE_STUB(maximum_stub, PointwiseFn);
OP_DECLARE_STUB(minimum_stub, PointwiseFn);
OP_DECLARE_STUB(pow_tensor_stub, PointwiseFn);
OP_DECLARE_STUB(eq_stub, PointwiseFn);  // comparisons: compute in common_dtype(), write bool (or out's dtype)
OP_DECLARE_STUB(ne_stub, PointwiseFn);
OP_DECLARE_STUB(lt_stub, PointwiseFn);
OP_DECLARE_STUB(le_stub, PointwiseFn);
OP_DECLARE_STUB(gt_stub, PointwiseFn);
OP_DECLARE_STUB(ge_stub, PointwiseFn);
OP_DECLARE_STUB(where_stub, PointwiseFn);  // inputs: condition, self, other
OP_DECLARE_STUB(neg_stub, PointwiseFn);
OP_DECLARE_STUB(abs_stub, PointwiseFn);
OP_DECLARE_STUB(exp_stub, PointwiseFn);
OP_DECLARE_STUB(log_stub, PointwiseFn);
OP_DECLARE_STUB(sqrt_stub, PointwiseFn);
OP_DECLARE_STUB(sin_stub, PointwiseFn);
OP_DECLARE_STUB(cos_stub, PointwiseFn);
OP_DECLARE_STUB(tanh_stub, PointwiseFn);
OP_DECLARE_STUB(sigmoid_stub, PointwiseFn);
OP_DECLARE_STUB(clamp_stub, void(TensorIteratorBase&, const std::optional<Scalar>& min, const std::optional<Scalar>& max));

// ----- reductions: `result` has self's rank, size 1 along the reduced dimensions (a view of
// the out= tensor); self already has result's dtype (argmax: any dtype, result int64). The
// dimensions reduced are those where result has size 1 and self does not.
using ReduceFn = void(const TensorBase& result, const TensorBase& self);
OP_DECLARE_STUB(sum_stub, ReduceFn);
OP_DECLARE_STUB(mean_stub, ReduceFn);
OP_DECLARE_STUB(amax_stub, ReduceFn);
OP_DECLARE_STUB(amin_stub, ReduceFn);
OP_DECLARE_STUB(argmax_stub, ReduceFn);  // index of the first maximum along the reduced dims, row-major

// ----- log_softmax over one dimension (softmax_ops.cpp): operands contiguous with one shape
// and one floating dtype, dim wrapped (0 for a 0-d tensor, which counts as one element).
// out = self - log(sum(exp(self), dim)); grad_input = grad_output - exp(output) * sum(grad_output, dim).
OP_DECLARE_STUB(log_softmax_stub, void(const TensorBase& out, const TensorBase& self, int64_t dim));
OP_DECLARE_STUB(log_softmax_backward_stub,
                void(const TensorBase& grad_input, const TensorBase& grad_output, const TensorBase& output, int64_t dim));

// ----- losses (loss_ops.cpp); `reduction` is 0 none, 1 mean, 2 sum.
// mse: meta() built the iterator over (self, target); the result is (self - target)^2.
OP_DECLARE_STUB(mse_stub, PointwiseFn);
// grad_input = norm * (self - target) * grad_output; the inputs have grad_input's dtype and are
// expanded to its shape (stride 0 where broadcast); grad_input shares no memory with them.
OP_DECLARE_STUB(mse_backward_stub, void(const TensorBase& grad_input, const TensorBase& self, const TensorBase& target,
                                        const TensorBase& grad_output, double norm));
// nll_loss on rows: self [N, C] contiguous and floating, target [N] contiguous int64, weight [C]
// contiguous with self's dtype or undefined. Targets equal to ignore_index are skipped; others
// out of [0, C) are an error. The outputs are contiguous: output [N] for none, one element
// otherwise (the weighted sum of -self[i][target[i]], divided by the total weight for mean);
// total_weight one element (the sum of the weights of the targets counted; 0 for none).
OP_DECLARE_STUB(nll_loss_forward_stub,
                void(const TensorBase& output, const TensorBase& total_weight, const TensorBase& self,
                     const TensorBase& target, const TensorBase& weight, int64_t reduction, int64_t ignore_index));
// grad_input [N, C] contiguous (every element written); grad_output [N] for none, one element
// otherwise; total_weight one element; all of self's dtype and on its device.
OP_DECLARE_STUB(nll_loss_backward_stub,
                void(const TensorBase& grad_input, const TensorBase& grad_output, const TensorBase& target,
                     const TensorBase& weight, const TensorBase& total_weight, int64_t reduction, int64_t ignore_index));

// ----- linear algebra: batched 3-d matrices of one dtype, out [B,M,N] = beta * bias + alpha *
// (a [B,M,K] @ b [B,K,N]); bias is undefined (beta ignored) or expanded to out's shape; out
// does not overlap a, b or bias.
OP_DECLARE_STUB(gemm_stub, void(const TensorBase& out, const TensorBase& a, const TensorBase& b, const TensorBase& bias,
                                const Scalar& beta, const Scalar& alpha));

// ----- factories and data movement.
OP_DECLARE_STUB(fill_stub, void(const TensorBase& self, const Scalar& value));
// out[i] = start + i * step, out contiguous and 1-d.
OP_DECLARE_STUB(arange_stub, void(const TensorBase& out, const Scalar& start, const Scalar& step));
// Counter-based random numbers: element i (row-major) draws from stream (seed, offset + i), so
// CPU and CUDA give the same values and a generator advances by numel per call.
OP_DECLARE_STUB(uniform_stub, void(const TensorBase& self, double from, double to, uint64_t seed, uint64_t offset));
OP_DECLARE_STUB(normal_stub, void(const TensorBase& self, double mean, double std, uint64_t seed, uint64_t offset));
// dst and src have the same shape (src already broadcast); dtypes may differ. The CUDA entry
// handles every copy with a CUDA side (host to device, device to host, device to device).
OP_DECLARE_STUB(copy_stub, void(const TensorBase& dst, const TensorBase& src));

}  // namespace op::native
