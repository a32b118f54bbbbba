// TEMPORARY while issue 5 lands: kernels the yaml declares that no file defines yet.
// Each family owner deletes its entries as it implements them; this file must be gone
// before the issue is closed.
#include "core/error.h"
#include "ops/_to_copy_native.h"
#include "ops/abs_native.h"
#include "ops/add_native.h"
#include "ops/addmm_native.h"
#include "ops/amax_native.h"
#include "ops/amin_native.h"
#include "ops/arange_native.h"
#include "ops/argmax_native.h"
#include "ops/as_strided_native.h"
#include "ops/bmm_native.h"
#include "ops/clamp_native.h"
#include "ops/clone_native.h"
#include "ops/contiguous_native.h"
#include "ops/cos_native.h"
#include "ops/div_native.h"
#include "ops/empty_native.h"
#include "ops/empty_like_native.h"
#include "ops/empty_strided_native.h"
#include "ops/eq_native.h"
#include "ops/exp_native.h"
#include "ops/expand_native.h"
#include "ops/fill_native.h"
#include "ops/full_native.h"
#include "ops/ge_native.h"
#include "ops/gt_native.h"
#include "ops/le_native.h"
#include "ops/log_native.h"
#include "ops/lt_native.h"
#include "ops/matmul_native.h"
#include "ops/maximum_native.h"
#include "ops/mean_native.h"
#include "ops/minimum_native.h"
#include "ops/mul_native.h"
#include "ops/ne_native.h"
#include "ops/normal_native.h"
#include "ops/ones_native.h"
#include "ops/ones_like_native.h"
#include "ops/permute_native.h"
#include "ops/pow_native.h"
#include "ops/rand_native.h"
#include "ops/randn_native.h"
#include "ops/reshape_native.h"
#include "ops/select_native.h"
#include "ops/sigmoid_native.h"
#include "ops/sin_native.h"
#include "ops/slice_native.h"
#include "ops/sqrt_native.h"
#include "ops/squeeze_native.h"
#include "ops/sub_native.h"
#include "ops/t_native.h"
#include "ops/tanh_native.h"
#include "ops/to_native.h"
#include "ops/transpose_native.h"
#include "ops/uniform_native.h"
#include "ops/unsqueeze_native.h"
#include "ops/where_native.h"
#include "ops/zero_native.h"
#include "ops/zeros_like_native.h"

namespace op {

Tensor native::_to_copy(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Layout> layout, std::optional<Device> device, std::optional<bool> pin_memory, bool non_blocking, std::optional<MemoryFormat> memory_format) { OP_CHECK(false, "_to_copy: not implemented yet"); }
void native::structured_abs_out::impl(const Tensor& self, const Tensor& out) { OP_CHECK(false, "structured_abs_out: not implemented yet"); }
Tensor native::add_scalar(const Tensor& self, const Scalar& other, const Scalar& alpha) { OP_CHECK(false, "add_scalar: not implemented yet"); }
Tensor& native::add_scalar_(Tensor& self, const Scalar& other, const Scalar& alpha) { OP_CHECK(false, "add_scalar_: not implemented yet"); }
void native::structured_addmm_out::impl(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha, const Tensor& out) { OP_CHECK(false, "structured_addmm_out: not implemented yet"); }
void native::structured_amax_out::impl(const Tensor& self, IntArrayRef dim, bool keepdim, const Tensor& out) { OP_CHECK(false, "structured_amax_out: not implemented yet"); }
void native::structured_amin_out::impl(const Tensor& self, IntArrayRef dim, bool keepdim, const Tensor& out) { OP_CHECK(false, "structured_amin_out: not implemented yet"); }
Tensor native::arange(const Scalar& end, std::optional<ScalarType> dtype, std::optional<Layout> layout, std::optional<Device> device, std::optional<bool> pin_memory) { OP_CHECK(false, "arange: not implemented yet"); }
Tensor& native::arange_out(const Scalar& end, Tensor& out) { OP_CHECK(false, "arange_out: not implemented yet"); }
Tensor native::arange_start(const Scalar& start, const Scalar& end, std::optional<ScalarType> dtype, std::optional<Layout> layout, std::optional<Device> device, std::optional<bool> pin_memory) { OP_CHECK(false, "arange_start: not implemented yet"); }
Tensor& native::arange_start_out(const Scalar& start, const Scalar& end, const Scalar& step, Tensor& out) { OP_CHECK(false, "arange_start_out: not implemented yet"); }
Tensor native::arange_start_step(const Scalar& start, const Scalar& end, const Scalar& step, std::optional<ScalarType> dtype, std::optional<Layout> layout, std::optional<Device> device, std::optional<bool> pin_memory) { OP_CHECK(false, "arange_start_step: not implemented yet"); }
void native::structured_argmax_out::impl(const Tensor& self, std::optional<int64_t> dim, bool keepdim, const Tensor& out) { OP_CHECK(false, "structured_argmax_out: not implemented yet"); }
Tensor native::as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset) { OP_CHECK(false, "as_strided: not implemented yet"); }
void native::structured_bmm_out::impl(const Tensor& self, const Tensor& mat2, const Tensor& out) { OP_CHECK(false, "structured_bmm_out: not implemented yet"); }
void native::structured_clamp_out::impl(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max, const Tensor& out) { OP_CHECK(false, "structured_clamp_out: not implemented yet"); }
Tensor native::clone(const Tensor& self, std::optional<MemoryFormat> memory_format) { OP_CHECK(false, "clone: not implemented yet"); }
Tensor native::contiguous(const Tensor& self, MemoryFormat memory_format) { OP_CHECK(false, "contiguous: not implemented yet"); }
void native::structured_cos_out::impl(const Tensor& self, const Tensor& out) { OP_CHECK(false, "structured_cos_out: not implemented yet"); }
Tensor native::div_scalar(const Tensor& self, const Scalar& other) { OP_CHECK(false, "div_scalar: not implemented yet"); }
Tensor& native::div_scalar_(Tensor& self, const Scalar& other) { OP_CHECK(false, "div_scalar_: not implemented yet"); }
void native::structured_div_out::impl(const Tensor& self, const Tensor& other, const Tensor& out) { OP_CHECK(false, "structured_div_out: not implemented yet"); }
Tensor native::empty_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Layout> layout, std::optional<Device> device, std::optional<bool> pin_memory, std::optional<MemoryFormat> memory_format) { OP_CHECK(false, "empty_like: not implemented yet"); }
Tensor native::empty_cuda(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout> layout, std::optional<Device> device, std::optional<bool> pin_memory, std::optional<MemoryFormat> memory_format) { OP_CHECK(false, "empty_cuda: not implemented yet"); }
Tensor native::empty_strided_cpu(IntArrayRef size, IntArrayRef stride, std::optional<ScalarType> dtype, std::optional<Layout> layout, std::optional<Device> device, std::optional<bool> pin_memory) { OP_CHECK(false, "empty_strided_cpu: not implemented yet"); }
Tensor native::empty_strided_cuda(IntArrayRef size, IntArrayRef stride, std::optional<ScalarType> dtype, std::optional<Layout> layout, std::optional<Device> device, std::optional<bool> pin_memory) { OP_CHECK(false, "empty_strided_cuda: not implemented yet"); }
Tensor native::empty_strided_meta(IntArrayRef size, IntArrayRef stride, std::optional<ScalarType> dtype, std::optional<Layout> layout, std::optional<Device> device, std::optional<bool> pin_memory) { OP_CHECK(false, "empty_strided_meta: not implemented yet"); }
Tensor native::eq_scalar(const Tensor& self, const Scalar& other) { OP_CHECK(false, "eq_scalar: not implemented yet"); }
Tensor& native::eq_scalar_(Tensor& self, const Scalar& other) { OP_CHECK(false, "eq_scalar_: not implemented yet"); }
void native::structured_eq_Tensor_out::impl(const Tensor& self, const Tensor& other, const Tensor& out) { OP_CHECK(false, "structured_eq_Tensor_out: not implemented yet"); }
void native::structured_exp_out::impl(const Tensor& self, const Tensor& out) { OP_CHECK(false, "structured_exp_out: not implemented yet"); }
Tensor native::expand(const Tensor& self, IntArrayRef size, bool implicit) { OP_CHECK(false, "expand: not implemented yet"); }
Tensor& native::fill_(Tensor& self, const Scalar& value) { OP_CHECK(false, "fill_: not implemented yet"); }
Tensor& native::fill_meta_(Tensor& self, const Scalar& value) { OP_CHECK(false, "fill_meta_: not implemented yet"); }
Tensor native::full(IntArrayRef size, const Scalar& fill_value, std::optional<ScalarType> dtype, std::optional<Layout> layout, std::optional<Device> device, std::optional<bool> pin_memory) { OP_CHECK(false, "full: not implemented yet"); }
Tensor native::ge_scalar(const Tensor& self, const Scalar& other) { OP_CHECK(false, "ge_scalar: not implemented yet"); }
Tensor& native::ge_scalar_(Tensor& self, const Scalar& other) { OP_CHECK(false, "ge_scalar_: not implemented yet"); }
void native::structured_ge_Tensor_out::impl(const Tensor& self, const Tensor& other, const Tensor& out) { OP_CHECK(false, "structured_ge_Tensor_out: not implemented yet"); }
Tensor native::gt_scalar(const Tensor& self, const Scalar& other) { OP_CHECK(false, "gt_scalar: not implemented yet"); }
Tensor& native::gt_scalar_(Tensor& self, const Scalar& other) { OP_CHECK(false, "gt_scalar_: not implemented yet"); }
void native::structured_gt_Tensor_out::impl(const Tensor& self, const Tensor& other, const Tensor& out) { OP_CHECK(false, "structured_gt_Tensor_out: not implemented yet"); }
Tensor native::le_scalar(const Tensor& self, const Scalar& other) { OP_CHECK(false, "le_scalar: not implemented yet"); }
Tensor& native::le_scalar_(Tensor& self, const Scalar& other) { OP_CHECK(false, "le_scalar_: not implemented yet"); }
void native::structured_le_Tensor_out::impl(const Tensor& self, const Tensor& other, const Tensor& out) { OP_CHECK(false, "structured_le_Tensor_out: not implemented yet"); }
void native::structured_log_out::impl(const Tensor& self, const Tensor& out) { OP_CHECK(false, "structured_log_out: not implemented yet"); }
Tensor native::lt_scalar(const Tensor& self, const Scalar& other) { OP_CHECK(false, "lt_scalar: not implemented yet"); }
Tensor& native::lt_scalar_(Tensor& self, const Scalar& other) { OP_CHECK(false, "lt_scalar_: not implemented yet"); }
void native::structured_lt_Tensor_out::impl(const Tensor& self, const Tensor& other, const Tensor& out) { OP_CHECK(false, "structured_lt_Tensor_out: not implemented yet"); }
Tensor& native::matmul_out(const Tensor& self, const Tensor& other, Tensor& out) { OP_CHECK(false, "matmul_out: not implemented yet"); }
void native::structured_maximum_out::impl(const Tensor& self, const Tensor& other, const Tensor& out) { OP_CHECK(false, "structured_maximum_out: not implemented yet"); }
Tensor native::mean(const Tensor& self, std::optional<ScalarType> dtype) { OP_CHECK(false, "mean: not implemented yet"); }
void native::structured_mean_out::impl(const Tensor& self, std::optional<IntArrayRef> dim, bool keepdim, std::optional<ScalarType> dtype, const Tensor& out) { OP_CHECK(false, "structured_mean_out: not implemented yet"); }
void native::structured_minimum_out::impl(const Tensor& self, const Tensor& other, const Tensor& out) { OP_CHECK(false, "structured_minimum_out: not implemented yet"); }
Tensor native::mul_scalar(const Tensor& self, const Scalar& other) { OP_CHECK(false, "mul_scalar: not implemented yet"); }
Tensor& native::mul_scalar_(Tensor& self, const Scalar& other) { OP_CHECK(false, "mul_scalar_: not implemented yet"); }
Tensor native::ne_scalar(const Tensor& self, const Scalar& other) { OP_CHECK(false, "ne_scalar: not implemented yet"); }
Tensor& native::ne_scalar_(Tensor& self, const Scalar& other) { OP_CHECK(false, "ne_scalar_: not implemented yet"); }
void native::structured_ne_Tensor_out::impl(const Tensor& self, const Tensor& other, const Tensor& out) { OP_CHECK(false, "structured_ne_Tensor_out: not implemented yet"); }
Tensor& native::normal_(Tensor& self, double mean, double std, const std::optional<Generator>& generator) { OP_CHECK(false, "normal_: not implemented yet"); }
Tensor& native::normal_meta_(Tensor& self, double mean, double std, const std::optional<Generator>& generator) { OP_CHECK(false, "normal_meta_: not implemented yet"); }
Tensor native::ones_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Layout> layout, std::optional<Device> device, std::optional<bool> pin_memory, std::optional<MemoryFormat> memory_format) { OP_CHECK(false, "ones_like: not implemented yet"); }
Tensor native::ones(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout> layout, std::optional<Device> device, std::optional<bool> pin_memory) { OP_CHECK(false, "ones: not implemented yet"); }
Tensor native::permute(const Tensor& self, IntArrayRef dims) { OP_CHECK(false, "permute: not implemented yet"); }
Tensor native::pow_scalar_tensor(const Scalar& self, const Tensor& exponent) { OP_CHECK(false, "pow_scalar_tensor: not implemented yet"); }
Tensor native::pow_tensor_scalar(const Tensor& self, const Scalar& exponent) { OP_CHECK(false, "pow_tensor_scalar: not implemented yet"); }
Tensor& native::pow_scalar_(Tensor& self, const Scalar& exponent) { OP_CHECK(false, "pow_scalar_: not implemented yet"); }
void native::structured_pow_Tensor_Tensor_out::impl(const Tensor& self, const Tensor& exponent, const Tensor& out) { OP_CHECK(false, "structured_pow_Tensor_Tensor_out: not implemented yet"); }
Tensor native::rand(IntArrayRef size, const std::optional<Generator>& generator, std::optional<ScalarType> dtype, std::optional<Layout> layout, std::optional<Device> device, std::optional<bool> pin_memory) { OP_CHECK(false, "rand: not implemented yet"); }
Tensor native::randn(IntArrayRef size, const std::optional<Generator>& generator, std::optional<ScalarType> dtype, std::optional<Layout> layout, std::optional<Device> device, std::optional<bool> pin_memory) { OP_CHECK(false, "randn: not implemented yet"); }
Tensor native::reshape(const Tensor& self, IntArrayRef shape) { OP_CHECK(false, "reshape: not implemented yet"); }
Tensor native::select(const Tensor& self, int64_t dim, int64_t index) { OP_CHECK(false, "select: not implemented yet"); }
void native::structured_sigmoid_out::impl(const Tensor& self, const Tensor& out) { OP_CHECK(false, "structured_sigmoid_out: not implemented yet"); }
void native::structured_sin_out::impl(const Tensor& self, const Tensor& out) { OP_CHECK(false, "structured_sin_out: not implemented yet"); }
Tensor native::slice(const Tensor& self, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) { OP_CHECK(false, "slice: not implemented yet"); }
void native::structured_sqrt_out::impl(const Tensor& self, const Tensor& out) { OP_CHECK(false, "structured_sqrt_out: not implemented yet"); }
Tensor native::squeeze(const Tensor& self) { OP_CHECK(false, "squeeze: not implemented yet"); }
Tensor native::squeeze_dim(const Tensor& self, int64_t dim) { OP_CHECK(false, "squeeze_dim: not implemented yet"); }
Tensor native::squeeze_dims(const Tensor& self, IntArrayRef dim) { OP_CHECK(false, "squeeze_dims: not implemented yet"); }
Tensor native::sub_scalar(const Tensor& self, const Scalar& other, const Scalar& alpha) { OP_CHECK(false, "sub_scalar: not implemented yet"); }
Tensor& native::sub_scalar_(Tensor& self, const Scalar& other, const Scalar& alpha) { OP_CHECK(false, "sub_scalar_: not implemented yet"); }
void native::structured_sub_out::impl(const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& out) { OP_CHECK(false, "structured_sub_out: not implemented yet"); }
Tensor native::t(const Tensor& self) { OP_CHECK(false, "t: not implemented yet"); }
void native::structured_tanh_out::impl(const Tensor& self, const Tensor& out) { OP_CHECK(false, "structured_tanh_out: not implemented yet"); }
Tensor native::to(const Tensor& self, Device device, ScalarType dtype, bool non_blocking, bool copy, std::optional<MemoryFormat> memory_format) { OP_CHECK(false, "to: not implemented yet"); }
Tensor native::to(const Tensor& self, ScalarType dtype, bool non_blocking, bool copy, std::optional<MemoryFormat> memory_format) { OP_CHECK(false, "to: not implemented yet"); }
Tensor native::to(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Layout> layout, std::optional<Device> device, std::optional<bool> pin_memory, bool non_blocking, bool copy, std::optional<MemoryFormat> memory_format) { OP_CHECK(false, "to: not implemented yet"); }
Tensor native::transpose(const Tensor& self, int64_t dim0, int64_t dim1) { OP_CHECK(false, "transpose: not implemented yet"); }
Tensor& native::uniform_(Tensor& self, double from, double to, const std::optional<Generator>& generator) { OP_CHECK(false, "uniform_: not implemented yet"); }
Tensor& native::uniform_meta_(Tensor& self, double from, double to, const std::optional<Generator>& generator) { OP_CHECK(false, "uniform_meta_: not implemented yet"); }
Tensor native::unsqueeze(const Tensor& self, int64_t dim) { OP_CHECK(false, "unsqueeze: not implemented yet"); }
Tensor native::where_scalar_other(const Tensor& condition, const Tensor& self, const Scalar& other) { OP_CHECK(false, "where_scalar_other: not implemented yet"); }
Tensor native::where_scalar_self(const Tensor& condition, const Scalar& self, const Tensor& other) { OP_CHECK(false, "where_scalar_self: not implemented yet"); }
void native::structured_where_self_out::impl(const Tensor& condition, const Tensor& self, const Tensor& other, const Tensor& out) { OP_CHECK(false, "structured_where_self_out: not implemented yet"); }
Tensor& native::zero_(Tensor& self) { OP_CHECK(false, "zero_: not implemented yet"); }
Tensor native::zeros_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Layout> layout, std::optional<Device> device, std::optional<bool> pin_memory, std::optional<MemoryFormat> memory_format) { OP_CHECK(false, "zeros_like: not implemented yet"); }
void meta::structured_abs::meta(const Tensor& self) { OP_CHECK(false, "structured_abs: not implemented yet"); }
void meta::structured_addmm::meta(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha) { OP_CHECK(false, "structured_addmm: not implemented yet"); }
void meta::structured_amax::meta(const Tensor& self, IntArrayRef dim, bool keepdim) { OP_CHECK(false, "structured_amax: not implemented yet"); }
void meta::structured_amin::meta(const Tensor& self, IntArrayRef dim, bool keepdim) { OP_CHECK(false, "structured_amin: not implemented yet"); }
void meta::structured_argmax::meta(const Tensor& self, std::optional<int64_t> dim, bool keepdim) { OP_CHECK(false, "structured_argmax: not implemented yet"); }
void meta::structured_bmm::meta(const Tensor& self, const Tensor& mat2) { OP_CHECK(false, "structured_bmm: not implemented yet"); }
void meta::structured_clamp::meta(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) { OP_CHECK(false, "structured_clamp: not implemented yet"); }
void meta::structured_cos::meta(const Tensor& self) { OP_CHECK(false, "structured_cos: not implemented yet"); }
void meta::structured_div_Tensor::meta(const Tensor& self, const Tensor& other) { OP_CHECK(false, "structured_div_Tensor: not implemented yet"); }
void meta::structured_eq_Tensor::meta(const Tensor& self, const Tensor& other) { OP_CHECK(false, "structured_eq_Tensor: not implemented yet"); }
void meta::structured_exp::meta(const Tensor& self) { OP_CHECK(false, "structured_exp: not implemented yet"); }
void meta::structured_ge_Tensor::meta(const Tensor& self, const Tensor& other) { OP_CHECK(false, "structured_ge_Tensor: not implemented yet"); }
void meta::structured_gt_Tensor::meta(const Tensor& self, const Tensor& other) { OP_CHECK(false, "structured_gt_Tensor: not implemented yet"); }
void meta::structured_le_Tensor::meta(const Tensor& self, const Tensor& other) { OP_CHECK(false, "structured_le_Tensor: not implemented yet"); }
void meta::structured_log::meta(const Tensor& self) { OP_CHECK(false, "structured_log: not implemented yet"); }
void meta::structured_lt_Tensor::meta(const Tensor& self, const Tensor& other) { OP_CHECK(false, "structured_lt_Tensor: not implemented yet"); }
void meta::structured_maximum::meta(const Tensor& self, const Tensor& other) { OP_CHECK(false, "structured_maximum: not implemented yet"); }
void meta::structured_mean_dim::meta(const Tensor& self, std::optional<IntArrayRef> dim, bool keepdim, std::optional<ScalarType> dtype) { OP_CHECK(false, "structured_mean_dim: not implemented yet"); }
void meta::structured_minimum::meta(const Tensor& self, const Tensor& other) { OP_CHECK(false, "structured_minimum: not implemented yet"); }
void meta::structured_ne_Tensor::meta(const Tensor& self, const Tensor& other) { OP_CHECK(false, "structured_ne_Tensor: not implemented yet"); }
void meta::structured_pow_Tensor_Tensor::meta(const Tensor& self, const Tensor& exponent) { OP_CHECK(false, "structured_pow_Tensor_Tensor: not implemented yet"); }
void meta::structured_sigmoid::meta(const Tensor& self) { OP_CHECK(false, "structured_sigmoid: not implemented yet"); }
void meta::structured_sin::meta(const Tensor& self) { OP_CHECK(false, "structured_sin: not implemented yet"); }
void meta::structured_sqrt::meta(const Tensor& self) { OP_CHECK(false, "structured_sqrt: not implemented yet"); }
void meta::structured_sub_Tensor::meta(const Tensor& self, const Tensor& other, const Scalar& alpha) { OP_CHECK(false, "structured_sub_Tensor: not implemented yet"); }
void meta::structured_tanh::meta(const Tensor& self) { OP_CHECK(false, "structured_tanh: not implemented yet"); }
void meta::structured_where_self::meta(const Tensor& condition, const Tensor& self, const Tensor& other) { OP_CHECK(false, "structured_where_self: not implemented yet"); }

}  // namespace op
