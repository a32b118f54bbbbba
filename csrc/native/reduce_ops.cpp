// Reductions: sum, mean, amax, amin, argmax. meta() works out which dimensions are reduced,
// the result's shape and dtype; the device-generic impl() views the out= tensor with self's
// rank (size 1 along the reduced dimensions), converts self to the result dtype and calls
// the device's loop through a stub (native/stubs.h). The composites sum(x) and mean(x)
// reduce every dimension through the structured kernels.
#include <optional>
#include <vector>

#include "core/error.h"
#include "core/host_ops.h"
#include "core/scalar_type.h"
#include "native/stubs.h"
#include "ops/amax_native.h"
#include "ops/amin_native.h"
#include "ops/argmax_native.h"
#include "ops/mean.h"
#include "ops/mean_native.h"
#include "ops/sum.h"
#include "ops/sum_native.h"

namespace op {

namespace {

// Which of self's dimensions a reduction folds: the listed ones, or all of them when the
// list is absent or empty. A 0-d tensor accepts dim 0 and -1 (and reduces nothing).
std::vector<bool> reduced_dims(const TensorBase& self, std::optional<IntArrayRef> dims, const char* op_name) {
  const int64_t n = self.dim();
  std::vector<bool> reduced(static_cast<size_t>(n), !dims || dims->empty());
  if (!dims) return reduced;
  const int64_t range = n == 0 ? 1 : n;
  std::vector<bool> seen(static_cast<size_t>(range), false);
  for (int64_t d : *dims) {
    OP_CHECK(d >= -range && d < range, op_name, ": dimension ", d, " is out of range for a ", n,
             "-d tensor (expected a dimension in [", -range, ", ", range - 1, "])");
    const int64_t w = d < 0 ? d + range : d;
    OP_CHECK(!seen[w], op_name, ": dimension ", w, " appears more than once in the dims ", str_list(*dims));
    seen[w] = true;
    if (n > 0) reduced[w] = true;
  }
  return reduced;
}

std::vector<int64_t> reduced_shape(const TensorBase& self, const std::vector<bool>& reduced, bool keepdim) {
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!reduced[d])
      shape.push_back(self.size(d));
    else if (keepdim)
      shape.push_back(1);
  }
  return shape;
}

// max/min/argmax have no value for an empty set.
void check_nonempty_reduction(const TensorBase& self, const std::vector<bool>& reduced, const char* op_name) {
  for (int64_t d = 0; d < self.dim(); ++d)
    OP_CHECK(!reduced[d] || self.size(d) != 0, op_name, ": cannot reduce over dimension ", d,
             " of size 0 (input of shape ", str_list(self.sizes()), "); the operation has no identity");
}

// An out= tensor (maybe_get_output() of an out= call) must have the result dtype and must not
// share memory with the input, whose values it would overwrite while they are being read.
void check_out(const TensorBase& out, const TensorBase& self, ScalarType result, const char* op_name) {
  if (!out.defined()) return;
  OP_CHECK(out.dtype() == result, op_name, ": expected out= to have dtype ", to_string(result), ", but got ",
           to_string(out.dtype()));
  OP_CHECK(!out.is_alias_of(self), op_name, ": out= shares memory with the input; pass a separate tensor");
}

TensorOptions result_options(const TensorBase& self, ScalarType dtype) {
  return TensorOptions(dtype).with_device(self.device());
}

// out (shape reduced_shape(self, reduced, keepdim)) viewed with self's rank: size 1 along the
// reduced dimensions. This is what the stubs write through.
TensorBase result_view(const TensorBase& out, const TensorBase& self, const std::vector<bool>& reduced) {
  if (out.dim() == self.dim()) return out;  // keepdim, or nothing reduced
  std::vector<int64_t> sizes, strides;
  int64_t next = 0;  // out's dimension matching the next kept dimension of self
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (reduced[d]) {
      sizes.push_back(1);
      strides.push_back(0);
    } else {
      sizes.push_back(out.size(next));
      strides.push_back(out.stride(next));
      ++next;
    }
  }
  return host::as_strided(out, sizes, strides, out.storage_offset());
}

// self in another dtype, converted by the device's copy loop (no-op when it already matches).
TensorBase converted(const TensorBase& self, ScalarType dtype) {
  if (self.dtype() == dtype) return self;
  TensorBase result = TensorBase::empty(self.sizes(), result_options(self, dtype));
  native::copy_stub(self.device().type(), result, self);
  return result;
}

// Runs a reduction stub: out is the out= tensor, already shaped and typed by meta().
template <class Stub>
void run_reduction(const Stub& stub, const TensorBase& out, const TensorBase& self, const std::vector<bool>& reduced,
                   ScalarType input_dtype) {
  if (out.numel() == 0) return;
  stub(out.device().type(), result_view(out, self, reduced), converted(self, input_dtype));
}

// sum: an explicit dtype wins, then an out= tensor's dtype; integers and bools sum to int64
// so they do not overflow their own type.
ScalarType sum_dtype(const TensorBase& self, std::optional<ScalarType> dtype, const TensorBase& out) {
  if (dtype) return *dtype;
  if (out.defined()) return out.dtype();
  return is_integral(self.dtype(), /*include_bool=*/true) ? ScalarType::Int64 : self.dtype();
}

// mean divides, so it needs a floating type: the explicit dtype, or self's. Integer inputs
// without a dtype are an error rather than a silent choice.
ScalarType mean_dtype(const TensorBase& self, std::optional<ScalarType> dtype, const TensorBase& out) {
  const ScalarType input = dtype.value_or(self.dtype());
  OP_CHECK(is_floating(input), "mean: could not infer output dtype. The input dtype must be floating point, but got ",
           to_string(input), "; pass dtype= (e.g. dtype=float32) to choose one");
  if (dtype || !out.defined()) return input;
  OP_CHECK(is_floating(out.dtype()), "mean: out= must have a floating point dtype, but got ", to_string(out.dtype()));
  return out.dtype();
}

// argmax(dim=None) flattens: every dimension is reduced and the index counts row-major.
std::vector<bool> argmax_dims(const TensorBase& self, std::optional<int64_t> dim) {
  if (!dim) return std::vector<bool>(static_cast<size_t>(self.dim()), true);
  const int64_t d = *dim;
  return reduced_dims(self, IntArrayRef(&d, 1), "argmax");
}

}  // namespace

// ----- sum -----

void meta::structured_sum_dim_IntList::meta(const TensorBase& self, std::optional<IntArrayRef> dim, bool keepdim,
                                            std::optional<ScalarType> dtype) {
  OP_CHECK(self.defined(), "sum: self is undefined");
  const std::vector<bool> reduced = reduced_dims(self, dim, "sum");
  const ScalarType result = sum_dtype(self, dtype, maybe_get_output());
  check_out(maybe_get_output(), self, result, "sum");
  set_output_contiguous(0, reduced_shape(self, reduced, keepdim), result_options(self, result));
}

void native::structured_sum_out::impl(const TensorBase& self, std::optional<IntArrayRef> dim, bool keepdim,
                                      std::optional<ScalarType> dtype, const TensorBase& out) {
  (void)keepdim, (void)dtype;  // meta() shaped and typed out
  run_reduction(sum_stub, out, self, reduced_dims(self, dim, "sum"), out.dtype());
}

TensorBase native::sum(const TensorBase& self, std::optional<ScalarType> dtype) {
  return op::sum(self, std::optional<IntArrayRef>(), /*keepdim=*/false, dtype);
}

// ----- mean -----

void meta::structured_mean_dim::meta(const TensorBase& self, std::optional<IntArrayRef> dim, bool keepdim,
                                     std::optional<ScalarType> dtype) {
  OP_CHECK(self.defined(), "mean: self is undefined");
  const std::vector<bool> reduced = reduced_dims(self, dim, "mean");
  const ScalarType result = mean_dtype(self, dtype, maybe_get_output());
  check_out(maybe_get_output(), self, result, "mean");
  set_output_contiguous(0, reduced_shape(self, reduced, keepdim), result_options(self, result));
}

void native::structured_mean_out::impl(const TensorBase& self, std::optional<IntArrayRef> dim, bool keepdim,
                                       std::optional<ScalarType> dtype, const TensorBase& out) {
  (void)keepdim, (void)dtype;
  run_reduction(mean_stub, out, self, reduced_dims(self, dim, "mean"), out.dtype());
}

TensorBase native::mean(const TensorBase& self, std::optional<ScalarType> dtype) {
  return op::mean(self, std::optional<IntArrayRef>(), /*keepdim=*/false, dtype);
}

// ----- amax / amin: dim=[] reduces everything -----

void meta::structured_amax::meta(const TensorBase& self, IntArrayRef dim, bool keepdim) {
  OP_CHECK(self.defined(), "amax: self is undefined");
  const std::vector<bool> reduced = reduced_dims(self, dim, "amax");
  check_nonempty_reduction(self, reduced, "amax");
  check_out(maybe_get_output(), self, self.dtype(), "amax");
  set_output_contiguous(0, reduced_shape(self, reduced, keepdim), result_options(self, self.dtype()));
}

void native::structured_amax_out::impl(const TensorBase& self, IntArrayRef dim, bool keepdim, const TensorBase& out) {
  (void)keepdim;
  run_reduction(amax_stub, out, self, reduced_dims(self, dim, "amax"), out.dtype());
}

void meta::structured_amin::meta(const TensorBase& self, IntArrayRef dim, bool keepdim) {
  OP_CHECK(self.defined(), "amin: self is undefined");
  const std::vector<bool> reduced = reduced_dims(self, dim, "amin");
  check_nonempty_reduction(self, reduced, "amin");
  check_out(maybe_get_output(), self, self.dtype(), "amin");
  set_output_contiguous(0, reduced_shape(self, reduced, keepdim), result_options(self, self.dtype()));
}

void native::structured_amin_out::impl(const TensorBase& self, IntArrayRef dim, bool keepdim, const TensorBase& out) {
  (void)keepdim;
  run_reduction(amin_stub, out, self, reduced_dims(self, dim, "amin"), out.dtype());
}

// ----- argmax: int64 indices; dim=None gives the index into the flattened tensor -----

void meta::structured_argmax::meta(const TensorBase& self, std::optional<int64_t> dim, bool keepdim) {
  OP_CHECK(self.defined(), "argmax: self is undefined");
  const std::vector<bool> reduced = argmax_dims(self, dim);
  check_nonempty_reduction(self, reduced, "argmax");
  check_out(maybe_get_output(), self, ScalarType::Int64, "argmax");
  // Flattening with keepdim keeps self's rank, all ones (torch.argmax(x, keepdim=True)).
  set_output_contiguous(0, reduced_shape(self, reduced, keepdim), result_options(self, ScalarType::Int64));
}

void native::structured_argmax_out::impl(const TensorBase& self, std::optional<int64_t> dim, bool keepdim,
                                         const TensorBase& out) {
  (void)keepdim;
  run_reduction(argmax_stub, out, self, argmax_dims(self, dim), self.dtype());
}

}  // namespace op
