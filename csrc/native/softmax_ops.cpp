// log_softmax: the structured _log_softmax (self - log(sum(exp(self), dim))) and its backward
// _log_softmax_backward_data (grad_output - exp(output) * sum(grad_output, dim)), and the
// composites log_softmax(self, dim, dtype) and its out=. meta() checks the dimension and the
// dtypes and announces a result shaped like its input; the device-generic impl() hands
// contiguous operands to a stub (native/stubs.h), computing through a buffer when the out=
// tensor is strided or is an input.
#include <algorithm>
#include <optional>

#include "core/error.h"
#include "core/scalar_type.h"
#include "native/dense_operands.h"
#include "native/stubs.h"
#include "ops/_log_softmax.h"
#include "ops/_log_softmax_backward_data_native.h"
#include "ops/_log_softmax_native.h"
#include "ops/log_softmax_native.h"
#include "ops/to_ops.h"

namespace op {

namespace {

// The softmax dimension, wrapped; a 0-d tensor takes 0 and -1 (it is one element).
int64_t softmax_dim(const TensorBase& self, int64_t dim, const char* op_name) {
  const int64_t range = std::max<int64_t>(self.dim(), 1);
  OP_CHECK(dim >= -range && dim < range, op_name, ": dimension ", dim, " is out of range for a ", self.dim(),
           "-d tensor (expected a dimension in [", -range, ", ", range - 1, "])");
  return dim < 0 ? dim + range : dim;
}

void check_floating(const TensorBase& t, const char* what, const char* op_name) {
  OP_CHECK(t.defined(), op_name, ": ", what, " is undefined");
  OP_CHECK(is_floating(t.dtype()), op_name, ": expected ", what, " to have a floating point dtype, but got ",
           to_string(t.dtype()));
}

void check_out_dtype(const TensorBase& out, ScalarType dtype, const char* op_name) {
  if (out.defined())
    OP_CHECK(out.dtype() == dtype, op_name, ": expected out= to have dtype ", to_string(dtype), ", but got ",
             to_string(out.dtype()));
}

TensorOptions options_of(const TensorBase& t) { return TensorOptions(t.dtype()).with_device(t.device()); }

// log_softmax's dtype= converts the input first (log_softmax(x, 1, dtype=float64)).
TensorBase with_dtype(const TensorBase& self, std::optional<ScalarType> dtype) {
  if (!dtype) return self;
  return ops::to_dtype::call(self, *dtype, /*non_blocking=*/false, /*copy=*/false, std::nullopt);
}

}  // namespace

// ----- _log_softmax -----

void meta::structured__log_softmax::meta(const TensorBase& self, int64_t dim, bool half_to_float) {
  check_floating(self, "self", "_log_softmax");
  OP_CHECK(!half_to_float, "_log_softmax: half_to_float=True converts float16 inputs, which this runtime does not "
                           "have; pass False");
  softmax_dim(self, dim, "_log_softmax");
  check_out_dtype(maybe_get_output(), self.dtype(), "_log_softmax");
  set_output_contiguous(0, self.sizes(), options_of(self));
}

void native::structured__log_softmax_out::impl(const TensorBase& self, int64_t dim, bool half_to_float,
                                               const TensorBase& out) {
  (void)half_to_float;  // meta() refused true
  if (out.numel() == 0) return;
  const int64_t d = softmax_dim(self, dim, "_log_softmax");
  compute_into(out, {self}, [&](const TensorBase& dst) { log_softmax_stub(dst.device().type(), dst, dense(self), d); });
}

// ----- _log_softmax_backward_data -----

void meta::structured__log_softmax_backward_data::meta(const TensorBase& grad_output, const TensorBase& output,
                                                       int64_t dim, ScalarType input_dtype) {
  const char* name = "_log_softmax_backward_data";
  check_floating(grad_output, "grad_output", name);
  check_floating(output, "output", name);
  OP_CHECK(grad_output.sizes() == output.sizes(), name, ": grad_output of shape ", str_list(grad_output.sizes()),
           " does not match output of shape ", str_list(output.sizes()));
  OP_CHECK(grad_output.dtype() == output.dtype(), name, ": expected grad_output and output to have the same dtype, but got ",
           to_string(grad_output.dtype()), " and ", to_string(output.dtype()));
  OP_CHECK(grad_output.device() == output.device(), name, ": expected grad_output and output on the same device, but got ",
           grad_output.device().str(), " and ", output.device().str());
  // PyTorch lets input_dtype differ only for a float16 input whose log_softmax was float32.
  OP_CHECK(input_dtype == grad_output.dtype(), name, ": expected input_dtype (", to_string(input_dtype),
           ") to be grad_output's dtype (", to_string(grad_output.dtype()), ")");
  softmax_dim(output, dim, name);
  check_out_dtype(maybe_get_output(), grad_output.dtype(), name);
  set_output_contiguous(0, grad_output.sizes(), options_of(grad_output));
}

void native::structured_log_softmax_backward_out::impl(const TensorBase& grad_output, const TensorBase& output,
                                                       int64_t dim, ScalarType input_dtype, const TensorBase& out) {
  (void)input_dtype;
  if (out.numel() == 0) return;
  const int64_t d = softmax_dim(output, dim, "_log_softmax_backward_data");
  compute_into(out, {grad_output, output}, [&](const TensorBase& dst) {
    log_softmax_backward_stub(dst.device().type(), dst, dense(grad_output), dense(output), d);
  });
}

// ----- log_softmax: the composite (autograd sees _log_softmax) -----

TensorBase native::log_softmax(const TensorBase& self, int64_t dim, std::optional<ScalarType> dtype) {
  OP_CHECK(self.defined(), "log_softmax: self is undefined");
  return op::_log_softmax(with_dtype(self, dtype), dim, /*half_to_float=*/false);
}

TensorBase& native::log_softmax_out(const TensorBase& self, int64_t dim, std::optional<ScalarType> dtype,
                                    TensorBase& out) {
  OP_CHECK(self.defined(), "log_softmax: self is undefined");
  return op::_log_softmax_out(out, with_dtype(self, dtype), dim, /*half_to_float=*/false);
}

}  // namespace op
