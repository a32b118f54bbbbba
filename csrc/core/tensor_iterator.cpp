#include "core/tensor_iterator.h"

#include <string>

#include "core/broadcast.h"
#include "core/error.h"
#include "core/host_ops.h"
#include "core/type_promotion.h"

namespace op {

namespace {

std::string prefix(const char* op_name) { return op_name ? std::string(op_name) + ": " : std::string(); }

// A 0-d cpu tensor may join tensors on any device, like a plain number.
bool is_cpu_scalar(const Tensor& t) { return t.dim() == 0 && t.device().is_cpu(); }

// "tensor a", "tensor b", ...: the names the broadcast error uses too.
std::string operand_name(size_t i) { return std::string("tensor ") + static_cast<char>('a' + i); }

}  // namespace

void TensorIteratorBase::build_borrowing_binary_op(const Tensor& out, const Tensor& a, const Tensor& b,
                                                   const char* op_name) {
  build(out, {a, b}, ResultDtype::Common, op_name);
}

void TensorIteratorBase::build_borrowing_comparison_op(const Tensor& out, const Tensor& a, const Tensor& b,
                                                       const char* op_name) {
  build(out, {a, b}, ResultDtype::Bool, op_name);
}

void TensorIteratorBase::build_borrowing_unary_op(const Tensor& out, const Tensor& a, const char* op_name) {
  build(out, {a}, ResultDtype::Common, op_name);
}

void TensorIteratorBase::build_borrowing_unary_float_op(const Tensor& out, const Tensor& a, const char* op_name) {
  build(out, {a}, ResultDtype::FloatForIntegral, op_name);
}

void TensorIteratorBase::build(const Tensor& out, std::vector<Tensor> inputs, ResultDtype rule, const char* op_name) {
  op_name_ = op_name;
  for (size_t i = 0; i < inputs.size(); ++i)
    OP_CHECK(inputs[i].defined(), prefix(op_name), operand_name(i), " is undefined");

  // Shape: every input broadcast together.
  shape_ = inputs[0].sizes().vec();
  try {
    for (size_t i = 1; i < inputs.size(); ++i) shape_ = broadcast_shapes(shape_, inputs[i].sizes());
  } catch (const Error& e) {
    fail(prefix(op_name) + e.what());
  }

  // Device: the first input that is not a cpu scalar decides; the rest must agree.
  size_t lead = 0;
  while (lead + 1 < inputs.size() && is_cpu_scalar(inputs[lead])) ++lead;
  device_ = inputs[lead].device();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Device d = inputs[i].device();
    OP_CHECK(d == device_ || is_cpu_scalar(inputs[i]), prefix(op_name),
             "expected all tensors on the same device, but ", operand_name(lead), " is on ", device_.str(),
             " and ", operand_name(i), " is on ", d.str());
  }

  // Dtypes: compute in the promoted type; the output follows the rule.
  common_dtype_ = result_type(inputs);
  ScalarType out_dtype = common_dtype_;
  if (rule == ResultDtype::FloatForIntegral && !is_floating(common_dtype_)) {
    common_dtype_ = ScalarType::Float32;
    out_dtype = ScalarType::Float32;
  } else if (rule == ResultDtype::Bool) {
    // Comparisons fill any out tensor (bool converts to every dtype).
    out_dtype = out.defined() ? out.dtype() : ScalarType::Bool;
  }

  inputs_ = std::move(inputs);
  set_output_raw_strided(0, shape_, {}, TensorOptions(out_dtype).with_device(device_));
  output_ = maybe_get_output(0);
  OP_CHECK(output_.defined(), prefix(op_name), "the kernel wrapper set no output tensor");
}

const Tensor& TensorIteratorBase::input(int64_t i) const {
  OP_CHECK(i >= 0 && i < ninputs(), "TensorIteratorBase: input ", i, " out of range (", ninputs(), " inputs)");
  return inputs_[static_cast<size_t>(i)];
}

const Tensor& TensorIteratorBase::output(int64_t i) const {
  OP_CHECK(i == 0 && output_.defined(), "TensorIteratorBase: output ", i,
           " does not exist (one output, set by a build_* call in meta())");
  return output_;
}

void TensorIteratorBase::check_loop(size_t arity, const char* what) const {
  OP_CHECK(output_.defined(), prefix(op_name_), what, ": meta() has not built the iterator");
  OP_CHECK(arity == inputs_.size(), prefix(op_name_), what, ": the function takes ", arity, " values but there are ",
           inputs_.size(), " inputs");
  const std::string where = prefix(op_name_) + what;
  output_.check_host_data(where.c_str());
  for (const Tensor& t : inputs_) t.check_host_data(where.c_str());
}

Tensor TensorIteratorBase::loop_input(size_t i, ScalarType dtype) const {
  const Tensor& t = inputs_[i];
  return host::expand(host::to(t, dtype), shape_);
}

Tensor TensorIteratorBase::loop_output(ScalarType dtype, ArrayRef<Tensor> inputs) const {
  bool direct = output_.dtype() == dtype && output_.sizes() == IntArrayRef(shape_);
  for (const Tensor& in : inputs) {
    // Reading and writing the same element in one step is fine; anything else could read a
    // value this loop already overwrote.
    if (direct && in.is_alias_of(output_))
      direct = in.strides() == output_.strides() && in.storage_offset() == output_.storage_offset();
  }
  return direct ? output_ : Tensor::empty(shape_, TensorOptions(dtype).with_device(output_.device()));
}

void TensorIteratorBase::finish_loop(const Tensor& written) const {
  if (written.unsafe_impl() != output_.unsafe_impl()) host::copy_(output_, written);
}

}  // namespace op
