// The losses of a training step: mse_loss (structured over TensorIteratorBase) and
// mse_loss_backward, nll_loss_forward / nll_loss_backward (structured, two outputs forward), and
// the composites nll_loss (its out=) and nll_loss_nd. `reduction` is PyTorch's number: 0 none,
// 1 mean, 2 sum. Inputs are floating point; nll_loss's targets are int64 class indices.
//
// meta() checks the inputs and announces the outputs; the device-generic impl() hands
// contiguous operands to a stub (native/stubs.h), whose loops live in cpu/ and cuda/.
#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "core/broadcast.h"
#include "core/error.h"
#include "core/host_ops.h"
#include "core/scalar_type.h"
#include "core/structured_out.h"
#include "core/type_promotion.h"
#include "native/dense_operands.h"
#include "native/stubs.h"
#include "ops/copy_ops.h"
#include "ops/mean.h"
#include "ops/mse_loss_backward_native.h"
#include "ops/mse_loss_native.h"
#include "ops/nll_loss.h"
#include "ops/nll_loss_backward_native.h"
#include "ops/nll_loss_forward.h"
#include "ops/nll_loss_forward_native.h"
#include "ops/nll_loss_native.h"
#include "ops/nll_loss_nd_native.h"
#include "ops/permute.h"
#include "ops/reshape.h"
#include "ops/sum.h"

namespace op {

namespace {

constexpr int64_t kNone = 0, kMean = 1, kSum = 2;

void check_reduction(int64_t reduction, const char* op_name) {
  OP_CHECK(reduction == kNone || reduction == kMean || reduction == kSum, op_name, ": reduction ", reduction,
           " is not one of 0 (none), 1 (mean) and 2 (sum)");
}

TensorOptions options_of(const TensorBase& t) { return TensorOptions(t.dtype()).with_device(t.device()); }

void check_same_device(const TensorBase& a, const TensorBase& b, const char* a_name, const char* b_name,
                       const char* op_name) {
  OP_CHECK(a.device() == b.device(), op_name, ": expected ", a_name, " and ", b_name,
           " to be on the same device, but got ", a.device().str(), " and ", b.device().str());
}

std::vector<int64_t> broadcast_or_fail(IntArrayRef a, IntArrayRef b, const char* op_name) {
  try {
    return broadcast_shapes(a, b);
  } catch (const Error&) {
    fail(str(op_name, ": the shapes ", str_list(a), " and ", str_list(b), " cannot be broadcast together"));
  }
}

// The dtype mse_loss and its backward compute in: the promoted one, floating point.
ScalarType mse_dtype(ArrayRef<TensorBase> tensors, const char* op_name) {
  for (const TensorBase& t : tensors) OP_CHECK(t.defined(), op_name, ": undefined tensor");
  const ScalarType dtype = result_type(tensors);
  OP_CHECK(is_floating(dtype), op_name, ": expected floating point inputs, but they compute in ", to_string(dtype));
  return dtype;
}

// The elementwise squared errors of a reducing mse_loss, before their mean or sum: an
// iterator that allocates its own output.
struct SquaredErrors final : TensorIteratorBase {
  void set_output_raw_strided(int64_t, IntArrayRef sizes, IntArrayRef strides, TensorOptions options) override {
    result = impl::create_out(sizes, strides, options);
  }
  const TensorBase& maybe_get_output(int64_t) override { return result; }
  TensorBase result;
};

// ----- nll_loss's shapes: self [N, C] or [C], target [N] (or 0-d with a 1-d self) -----

void check_nll_inputs(const TensorBase& self, const TensorBase& target, const std::optional<TensorBase>& weight,
                      int64_t reduction, const char* op_name) {
  OP_CHECK(self.defined() && target.defined(), op_name, ": self and target must be defined");
  OP_CHECK(self.dim() > 0 && self.dim() <= 2, op_name, ": input tensor should be 1D or 2D, but got a ", self.dim(),
           "-d tensor of shape ", str_list(self.sizes()));
  OP_CHECK(target.dim() <= 1, op_name, ": 0D or 1D target tensor expected, multi-target not supported (got target of shape ",
           str_list(target.sizes()), ")");
  const bool no_batch_dim = self.dim() == 1 && target.dim() == 0;
  OP_CHECK(no_batch_dim || self.size(0) == target.size(0), op_name, ": size mismatch (got input: ",
           str_list(self.sizes()), ", target: ", str_list(target.sizes()), ")");
  OP_CHECK(is_floating(self.dtype()), op_name, ": expected self to have a floating point dtype, but got ",
           to_string(self.dtype()));
  OP_CHECK(target.dtype() == ScalarType::Int64, op_name, ": expected target to hold int64 class indices, but got dtype ",
           to_string(target.dtype()));
  check_same_device(self, target, "self", "target", op_name);
  if (weight && weight->defined()) {
    const int64_t classes = self.size(-1);
    OP_CHECK(weight->dim() == 1 && weight->numel() == classes, op_name,
             ": weight tensor should be defined either for all ", classes,
             " classes or no classes but got weight tensor of shape: ", str_list(weight->sizes()));
    OP_CHECK(weight->dtype() == self.dtype(), op_name, ": expected weight to have self's dtype ", to_string(self.dtype()),
             ", but got ", to_string(weight->dtype()));
    check_same_device(self, *weight, "self", "weight", op_name);
  }
  check_reduction(reduction, op_name);
}

// The operands as the stubs take them: self as rows [N, C], target [N], weight or undefined.
TensorBase as_rows(const TensorBase& self) {
  return self.dim() == 1 ? host::unsqueeze(self, 0) : self;
}

TensorBase as_batch(const TensorBase& target) {
  return target.dim() == 0 ? host::unsqueeze(target, 0) : target;
}

TensorBase dense_weight(const std::optional<TensorBase>& weight) {
  return weight && weight->defined() ? native::dense(*weight) : TensorBase();
}

}  // namespace

// ----- mse_loss -----

void meta::structured_mse_loss::meta(const TensorBase& self, const TensorBase& target, int64_t reduction) {
  check_reduction(reduction, "mse_loss");
  const ScalarType dtype = mse_dtype({self, target}, "mse_loss");
  if (reduction == kNone) {
    build_borrowing_binary_op(maybe_get_output(), self, target, "mse_loss");
    return;
  }
  check_same_device(self, target, "self", "target", "mse_loss");
  broadcast_or_fail(self.sizes(), target.sizes(), "mse_loss");
  const TensorBase& out = maybe_get_output();
  if (out.defined())
    OP_CHECK(out.dtype() == dtype, "mse_loss: expected out= to have dtype ", to_string(dtype), ", but got ",
             to_string(out.dtype()));
  set_output_contiguous(0, {}, TensorOptions(dtype).with_device(self.device()));
}

void native::structured_mse_loss_out::impl(const TensorBase& self, const TensorBase& target, int64_t reduction,
                                           const TensorBase& out) {
  if (reduction == kNone) {
    mse_stub(device().type(), *this);
    return;
  }
  SquaredErrors errors;
  errors.build_borrowing_binary_op(TensorBase(), self, target, "mse_loss");
  mse_stub(errors.device().type(), errors);
  TensorBase result = out;
  if (reduction == kMean)
    op::mean_out(result, errors.result, std::optional<IntArrayRef>(), /*keepdim=*/false);
  else
    op::sum_out(result, errors.result, std::optional<IntArrayRef>(), /*keepdim=*/false);
}

// ----- mse_loss_backward: norm * (self - target) * grad_output, norm 2 (mean: 2 / the number
// of errors averaged, the elements of self and target broadcast together) -----

TensorBase& native::mse_loss_backward_out(const TensorBase& grad_output, const TensorBase& self,
                                          const TensorBase& target, int64_t reduction, TensorBase& grad_input) {
  const char* name = "mse_loss_backward";
  check_reduction(reduction, name);
  const ScalarType dtype = mse_dtype({grad_output, self, target}, name);
  check_same_device(self, target, "self", "target", name);
  check_same_device(self, grad_output, "self", "grad_output", name);
  OP_CHECK(grad_input.defined(), name, ": grad_input is undefined");
  OP_CHECK(grad_input.dtype() == dtype, name, ": expected grad_input to have dtype ", to_string(dtype), ", but got ",
           to_string(grad_input.dtype()));
  const std::vector<int64_t> errors = broadcast_or_fail(self.sizes(), target.sizes(), name);
  const std::vector<int64_t> shape = broadcast_or_fail(errors, grad_output.sizes(), name);
  impl::resize_out(grad_input, shape, {}, TensorOptions(dtype).with_device(self.device()));
  if (grad_input.numel() == 0) return grad_input;
  const double norm = reduction == kMean ? 2.0 / static_cast<double>(numel_of(errors)) : 2.0;
  auto operand = [&](const TensorBase& t) { return host::expand(dense(t, dtype), shape); };
  compute_into(grad_input, {grad_output, self, target}, [&](const TensorBase& dst) {
    mse_backward_stub(dst.device().type(), dst, operand(self), operand(target), operand(grad_output), norm);
  });
  return grad_input;
}

TensorBase native::mse_loss_backward(const TensorBase& grad_output, const TensorBase& self, const TensorBase& target,
                                     int64_t reduction) {
  const ScalarType dtype = mse_dtype({grad_output, self, target}, "mse_loss_backward");
  TensorBase grad_input = TensorBase::empty({0}, TensorOptions(dtype).with_device(self.device()));
  return native::mse_loss_backward_out(grad_output, self, target, reduction, grad_input);
}

// ----- nll_loss_forward -----

void meta::structured_nll_loss_forward::meta(const TensorBase& self, const TensorBase& target,
                                             const std::optional<TensorBase>& weight, int64_t reduction,
                                             int64_t ignore_index) {
  (void)ignore_index;
  check_nll_inputs(self, target, weight, reduction, "nll_loss_forward");
  for (int64_t i = 0; i < 2; ++i) {
    const TensorBase& out = maybe_get_output(i);
    if (out.defined())
      OP_CHECK(out.dtype() == self.dtype(), "nll_loss_forward: expected ", i == 0 ? "output" : "total_weight",
               " to have dtype ", to_string(self.dtype()), ", but got ", to_string(out.dtype()));
  }
  // One loss per row for none; a 1-d self (one row, no batch dimension) or a reduction: 0-d.
  if (reduction == kNone && self.dim() == 2)
    set_output_contiguous(0, {self.size(0)}, options_of(self));
  else
    set_output_contiguous(0, {}, options_of(self));
  set_output_contiguous(1, {}, options_of(self));
}

void native::structured_nll_loss_forward_out::impl(const TensorBase& self, const TensorBase& target,
                                                   const std::optional<TensorBase>& weight, int64_t reduction,
                                                   int64_t ignore_index, const TensorBase& output,
                                                   const TensorBase& total_weight) {
  const TensorBase rows = dense(as_rows(self)), indices = dense(as_batch(target)), w = dense_weight(weight);
  compute_into(output, {self, target, w, total_weight}, [&](const TensorBase& out) {
    compute_into(total_weight, {self, target, w, out}, [&](const TensorBase& total) {
      nll_loss_forward_stub(out.device().type(), out, total, rows, indices, w, reduction, ignore_index);
    });
  });
}

// ----- nll_loss_backward -----

void meta::structured_nll_loss_backward::meta(const TensorBase& grad_output, const TensorBase& self,
                                              const TensorBase& target, const std::optional<TensorBase>& weight,
                                              int64_t reduction, int64_t ignore_index, const TensorBase& total_weight) {
  (void)ignore_index;
  const char* name = "nll_loss_backward";
  check_nll_inputs(self, target, weight, reduction, name);
  OP_CHECK(grad_output.defined() && total_weight.defined(), name, ": grad_output and total_weight must be defined");
  OP_CHECK(grad_output.dtype() == self.dtype() && total_weight.dtype() == self.dtype(), name,
           ": expected grad_output and total_weight to have self's dtype ", to_string(self.dtype()), ", but got ",
           to_string(grad_output.dtype()), " and ", to_string(total_weight.dtype()));
  check_same_device(self, grad_output, "self", "grad_output", name);
  check_same_device(self, total_weight, "self", "total_weight", name);
  OP_CHECK(total_weight.numel() == 1, name, ": expected total_weight to be a single element tensor, got: ",
           str_list(total_weight.sizes()), " (", total_weight.numel(), " elements)");
  if (reduction == kNone && self.dim() == 2)
    OP_CHECK(grad_output.dim() == 1 && grad_output.size(0) == self.size(0), name,
             ": expected grad_output of shape [", self.size(0), "] (one loss per row), but got ",
             str_list(grad_output.sizes()));
  else
    OP_CHECK(grad_output.dim() <= 1 && grad_output.numel() == 1, name,
             ": Expected a single element grad_output tensor, but got: ", str_list(grad_output.sizes()));
  const TensorBase& out = maybe_get_output();
  if (out.defined())
    OP_CHECK(out.dtype() == self.dtype(), name, ": expected grad_input to have dtype ", to_string(self.dtype()),
             ", but got ", to_string(out.dtype()));
  set_output_contiguous(0, self.sizes(), options_of(self));
}

void native::structured_nll_loss_backward_out::impl(const TensorBase& grad_output, const TensorBase& self,
                                                    const TensorBase& target, const std::optional<TensorBase>& weight,
                                                    int64_t reduction, int64_t ignore_index,
                                                    const TensorBase& total_weight, const TensorBase& grad_input) {
  if (grad_input.numel() == 0) return;
  const TensorBase indices = dense(as_batch(target)), w = dense_weight(weight);
  const TensorBase grad = dense(grad_output), total = dense(total_weight);
  compute_into(grad_input, {grad_output, self, target, w, total_weight}, [&](const TensorBase& dst) {
    nll_loss_backward_stub(dst.device().type(), as_rows(dst), grad, indices, w, total, reduction, ignore_index);
  });
}

// ----- the composites: autograd sees nll_loss_forward -----

TensorBase native::nll_loss(const TensorBase& self, const TensorBase& target, const std::optional<TensorBase>& weight,
                            int64_t reduction, int64_t ignore_index) {
  return std::get<0>(op::nll_loss_forward(self, target, weight, reduction, ignore_index));
}

TensorBase& native::nll_loss_out(const TensorBase& self, const TensorBase& target,
                                 const std::optional<TensorBase>& weight, int64_t reduction, int64_t ignore_index,
                                 TensorBase& out) {
  OP_CHECK(out.defined(), "nll_loss: out= is undefined");
  const TensorBase result = native::nll_loss(self, target, weight, reduction, ignore_index);
  OP_CHECK(out.dtype() == result.dtype(), "nll_loss: expected out= to have dtype ", to_string(result.dtype()),
           ", but got ", to_string(out.dtype()));
  impl::resize_out(out, result.sizes(), {}, options_of(result));
  ops::copy_::call(out, result, false);
  return out;
}

// 1-d and 2-d inputs are nll_loss's; an input [N, C, d1, ..., dk] with target [N, d1, ..., dk]
// becomes rows [N * d1 * ... * dk, C] (the class dimension moved last), and a loss per element
// is shaped back to [N, d1, ..., dk]. A reduction over the rows is the reduction over elements.
TensorBase native::nll_loss_nd(const TensorBase& self, const TensorBase& target,
                               const std::optional<TensorBase>& weight, int64_t reduction, int64_t ignore_index) {
  OP_CHECK(self.defined() && target.defined(), "nll_loss_nd: self and target must be defined");
  OP_CHECK(self.dim() >= 1, "nll_loss_nd: Expected 1 or more dimensions (got ", self.dim(), ")");
  OP_CHECK(self.dim() == 1 || (target.dim() >= 1 && self.size(0) == target.size(0)),
           "nll_loss_nd: Expected input batch_size (", self.size(0), ") to match target batch_size (",
           target.dim() >= 1 ? target.size(0) : 0, ").");
  if (self.dim() <= 2) return op::nll_loss(self, target, weight, reduction, ignore_index);
  std::vector<int64_t> loss_shape{self.size(0)};
  for (int64_t d = 2; d < self.dim(); ++d) loss_shape.push_back(self.size(d));
  OP_CHECK(target.sizes() == IntArrayRef(loss_shape), "nll_loss_nd: Expected target size ", str_list(loss_shape),
           ", got ", str_list(target.sizes()));
  std::vector<int64_t> classes_last{0};
  for (int64_t d = 2; d < self.dim(); ++d) classes_last.push_back(d);
  classes_last.push_back(1);
  const int64_t classes = self.size(1);
  const TensorBase rows = op::reshape(op::permute(self, classes_last), {numel_of(loss_shape), classes});
  const TensorBase loss = op::nll_loss(rows, op::reshape(target, {numel_of(loss_shape)}), weight, reduction, ignore_index);
  return reduction == kNone ? op::reshape(loss, loss_shape) : loss;
}

}  // namespace op
