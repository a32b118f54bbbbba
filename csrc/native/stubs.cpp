// The stub objects declared in stubs.h; each device's kernel files fill them in.
#include "native/stubs.h"

namespace op::native {

OP_DEFINE_STUB(add_stub, void(TensorIteratorBase&, const Scalar& alpha));
OP_DEFINE_STUB(mul_stub, PointwiseFn);
OP_DEFINE_STUB(div_true_stub, PointwiseFn);
OP_DEFINE_STUB(maximum_stub, PointwiseFn);
OP_DEFINE_STUB(minimum_stub, PointwiseFn);
OP_DEFINE_STUB(pow_tensor_stub, PointwiseFn);
OP_DEFINE_STUB(eq_stub, PointwiseFn);
OP_DEFINE_STUB(ne_stub, PointwiseFn);
OP_DEFINE_STUB(lt_stub, PointwiseFn);
OP_DEFINE_STUB(le_stub, PointwiseFn);
OP_DEFINE_STUB(gt_stub, PointwiseFn);
OP_DEFINE_STUB(ge_stub, PointwiseFn);
OP_DEFINE_STUB(where_stub, PointwiseFn);
OP_DEFINE_STUB(neg_stub, PointwiseFn);
OP_DEFINE_STUB(abs_stub, PointwiseFn);
OP_DEFINE_STUB(exp_stub, PointwiseFn);
OP_DEFINE_STUB(log_stub, PointwiseFn);
OP_DEFINE_STUB(sqrt_stub, PointwiseFn);
OP_DEFINE_STUB(sin_stub, PointwiseFn);
OP_DEFINE_STUB(cos_stub, PointwiseFn);
OP_DEFINE_STUB(tanh_stub, PointwiseFn);
OP_DEFINE_STUB(sigmoid_stub, PointwiseFn);
OP_DEFINE_STUB(clamp_stub, void(TensorIteratorBase&, const std::optional<Scalar>& min, const std::optional<Scalar>& max));
OP_DEFINE_STUB(sum_stub, ReduceFn);
OP_DEFINE_STUB(mean_stub, ReduceFn);
OP_DEFINE_STUB(amax_stub, ReduceFn);
OP_DEFINE_STUB(amin_stub, ReduceFn);
OP_DEFINE_STUB(argmax_stub, ReduceFn);
OP_DEFINE_STUB(gemm_stub, void(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& bias,
                                const Scalar& beta, const Scalar& alpha));
OP_DEFINE_STUB(fill_stub, void(const Tensor& self, const Scalar& value));
OP_DEFINE_STUB(arange_stub, void(const Tensor& out, const Scalar& start, const Scalar& step));
OP_DEFINE_STUB(uniform_stub, void(const Tensor& self, double from, double to, uint64_t seed, uint64_t offset));
OP_DEFINE_STUB(normal_stub, void(const Tensor& self, double mean, double std, uint64_t seed, uint64_t offset));
OP_DEFINE_STUB(copy_stub, void(const Tensor& dst, const Tensor& src));

}  // namespace op::native
