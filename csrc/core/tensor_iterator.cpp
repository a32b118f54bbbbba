#include "core/tensor_iterator.h"

#include <string>

#include "core/broadcast.h"
#include "core/error.h"
#include "core/host_ops.h"
#include "core/memory_overlap.h"
#include "core/type_promotion.h"

namespace op {

namespace {

std::string prefix(const char* op_name) { return op_name ? std::string(op_name) + ": " : std::string(); }

// A 0-d cpu tensor may join tensors on any device, like a plain number.
bool is_cpu_scalar(const TensorBase& t) { return t.dim() == 0 && t.device().is_cpu(); }

// "tensor a", "tensor b", ...: the names the broadcast error uses too.
std::string operand_name(size_t i) { return std::string("tensor ") + static_cast<char>('a' + i); }

}  // namespace

// ----- building: shapes, devices, dtypes -----

void TensorIteratorBase::build_borrowing_binary_op(const TensorBase& out, const TensorBase& a, const TensorBase& b,
                                                   const char* op_name) {
  build(out, {a, b}, 0, {}, ResultDtype::Common, op_name);
}

void TensorIteratorBase::build_borrowing_binary_float_op(const TensorBase& out, const TensorBase& a, const TensorBase& b,
                                                         const char* op_name) {
  build(out, {a, b}, 0, {}, ResultDtype::FloatForIntegral, op_name);
}

void TensorIteratorBase::build_borrowing_comparison_op(const TensorBase& out, const TensorBase& a, const TensorBase& b,
                                                       const char* op_name) {
  build(out, {a, b}, 0, {}, ResultDtype::Bool, op_name);
}

void TensorIteratorBase::build_borrowing_unary_op(const TensorBase& out, const TensorBase& a, const char* op_name) {
  build(out, {a}, 0, {}, ResultDtype::Common, op_name);
}

void TensorIteratorBase::build_borrowing_unary_float_op(const TensorBase& out, const TensorBase& a, const char* op_name) {
  build(out, {a}, 0, {}, ResultDtype::FloatForIntegral, op_name);
}

void TensorIteratorBase::build_borrowing_unary_op_with_numbers(const TensorBase& out, const TensorBase& a,
                                                               ArrayRef<Scalar> numbers, const char* op_name) {
  build(out, {a}, 0, numbers, ResultDtype::Common, op_name);
}

void TensorIteratorBase::build_borrowing_select_op(const TensorBase& out, const TensorBase& condition, const TensorBase& a,
                                                   const TensorBase& b, const char* op_name) {
  build(out, {condition, a, b}, 1, {}, ResultDtype::Common, op_name);
}

void TensorIteratorBase::build(const TensorBase& out, std::vector<TensorBase> inputs, size_t first_promoted,
                               ArrayRef<Scalar> numbers, ResultDtype rule, const char* op_name) {
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

  // Dtypes: compute in the promoted type of the inputs that promote; the output follows the rule.
  common_dtype_ = result_type(ArrayRef<TensorBase>(inputs.data() + first_promoted, inputs.size() - first_promoted),
                              numbers);
  ScalarType result = common_dtype_;
  if (rule == ResultDtype::FloatForIntegral && !is_floating(common_dtype_)) {
    common_dtype_ = ScalarType::Float32;
    result = ScalarType::Float32;
  } else if (rule == ResultDtype::Bool) {
    result = ScalarType::Bool;
  }

  inputs_ = std::move(inputs);
  announce_output(out, result);
  output_ = maybe_get_output(0);
  OP_CHECK(output_.defined(), prefix(op_name), "the kernel wrapper set no output tensor");
  // In-place and out=: the loops (host and CUDA) write every element of the output once.
  if (out.defined()) assert_no_internal_overlap(output_);
}

// An out= or in-place tensor keeps its dtype when the result casts into it (PyTorch's rule:
// never down a category); the wrapper then checks its shape and device or resizes it.
void TensorIteratorBase::announce_output(const TensorBase& out, ScalarType result_dtype) {
  const std::string where = prefix(op_name_);
  ScalarType dtype = result_dtype;
  if (out.defined()) {
    OP_CHECK(can_cast(result_dtype, out.dtype()), where, "result type ", to_string(result_dtype),
             " can't be cast to the desired output type ", to_string(out.dtype()));
    dtype = out.dtype();
  }
  try {
    set_output_raw_strided(0, shape_, {}, TensorOptions(dtype).with_device(device_));
  } catch (const Error& e) {
    const std::string message = e.what();
    if (where.empty() || message.rfind(where, 0) == 0) throw;
    fail(where + message);
  }
}

const TensorBase& TensorIteratorBase::input(int64_t i) const {
  OP_CHECK(i >= 0 && i < ninputs(), "TensorIteratorBase: input ", i, " out of range (", ninputs(), " inputs)");
  return inputs_[static_cast<size_t>(i)];
}

const TensorBase& TensorIteratorBase::output(int64_t i) const {
  OP_CHECK(i == 0 && output_.defined(), "TensorIteratorBase: output ", i,
           " does not exist (one output, set by a build_* call in meta())");
  return output_;
}

// ----- the host loop -----

void TensorIteratorBase::check_loop(size_t arity, const char* what) const {
  OP_CHECK(output_.defined(), prefix(op_name_), what, ": meta() has not built the iterator");
  OP_CHECK(arity == inputs_.size(), prefix(op_name_), what, ": the function takes ", arity, " values but there are ",
           inputs_.size(), " inputs");
  const std::string where = prefix(op_name_) + what;
  output_.check_host_data(where.c_str());
  for (const TensorBase& t : inputs_) t.check_host_data(where.c_str());
}

TensorBase TensorIteratorBase::loop_input(size_t i, ScalarType dtype) const { return host::to(inputs_[i], dtype); }

TensorBase TensorIteratorBase::loop_output(ScalarType dtype, ArrayRef<TensorBase> inputs) const {
  bool direct = output_.dtype() == dtype && output_.sizes() == IntArrayRef(shape_);
  for (const TensorBase& in : inputs) {
    // Reading and writing the same element in one step is fine; anything else could read a
    // value this loop already overwrote.
    if (direct && in.is_alias_of(output_))
      direct = in.sizes() == output_.sizes() && in.strides() == output_.strides() &&
               in.storage_offset() == output_.storage_offset();
  }
  return direct ? output_ : TensorBase::empty(shape_, TensorOptions(dtype).with_device(output_.device()));
}

TensorIteratorBase::LoopPlan TensorIteratorBase::plan_loop(const TensorBase& out, ArrayRef<TensorBase> inputs) const {
  const size_t nops = inputs.size() + 1;
  const size_t ndim = shape_.size();
  auto operand = [&](size_t k) -> const TensorBase& { return k == 0 ? out : inputs[k - 1]; };
  // Element stride of operand k in dimension d of shape_: broadcast dimensions (missing or of
  // size 1) have stride 0.
  auto broadcast_stride = [&](size_t k, size_t d) -> int64_t {
    const TensorBase& t = operand(k);
    const size_t lead = ndim - static_cast<size_t>(t.dim());
    if (d < lead || t.sizes()[d - lead] == 1) return 0;
    return t.strides()[d - lead];
  };

  // The dimensions that matter, outermost first.
  std::vector<size_t> dims;
  for (size_t d = 0; d < ndim; ++d)
    if (shape_[d] != 1) dims.push_back(d);

  // Order them so the output (then each input) walks memory forwards: a dimension moves
  // inwards past one with a larger stride. Stride-0 (broadcast) dimensions give no opinion.
  auto should_swap = [&](size_t outer, size_t inner) {
    for (size_t k = 0; k < nops; ++k) {
      const int64_t so = broadcast_stride(k, outer), si = broadcast_stride(k, inner);
      if (so == 0 || si == 0 || so == si) continue;
      return si > so;
    }
    return false;
  };
  for (size_t i = 1; i < dims.size(); ++i)
    for (size_t j = i; j > 0 && should_swap(dims[j - 1], dims[j]); --j) std::swap(dims[j - 1], dims[j]);

  LoopPlan plan;
  plan.noperands = nops;
  for (size_t d : dims) {
    std::vector<int64_t> strides(nops);
    for (size_t k = 0; k < nops; ++k) strides[k] = broadcast_stride(k, d);
    // Merge with the dimension outside it when each operand steps evenly across both.
    bool merge = !plan.sizes.empty();
    for (size_t k = 0; merge && k < nops; ++k)
      merge = plan.strides[(plan.sizes.size() - 1) * nops + k] == strides[k] * shape_[d];
    if (merge) {
      plan.sizes.back() *= shape_[d];
      for (size_t k = 0; k < nops; ++k) plan.strides[(plan.sizes.size() - 1) * nops + k] = strides[k];
    } else {
      plan.sizes.push_back(shape_[d]);
      plan.strides.insert(plan.strides.end(), strides.begin(), strides.end());
    }
  }
  plan.data.resize(nops);
  for (size_t k = 0; k < nops; ++k) plan.data[k] = operand(k).data_ptr();
  return plan;
}

void TensorIteratorBase::finish_loop(const TensorBase& written) const {
  if (written.unsafe_impl() != output_.unsafe_impl()) host::copy_(output_, written);
}

}  // namespace op
