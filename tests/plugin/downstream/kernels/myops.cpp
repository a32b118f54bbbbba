// Kernels of the myops operators: scale (a CPU loop), axpby (structured: meta() once for every
// device and variant, impl() for CPU) and sumsq (a composite of the runtime's own operators).
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "core/scalar_type.h"
#include "core/tensor_options.h"
#include "ops/axpby_native.h"
#include "ops/mul.h"
#include "ops/scale_native.h"
#include "ops/sum.h"
#include "ops/sumsq_native.h"

namespace op {

namespace {

// Writes `values` (row-major) into the contiguous tensor `out`, converted to its dtype.
void write_values(const TensorBase& out, const std::vector<double>& values) {
  OP_CHECK(out.is_contiguous(), "myops: expected a contiguous output");
  OP_DISPATCH_NUMERIC_TYPES(out.dtype(), "myops", {
    scalar_t* data = out.data_ptr<scalar_t>();
    for (size_t i = 0; i < values.size(); ++i) data[i] = static_cast<scalar_t>(values[i]);
  });
}

}  // namespace

TensorBase native::scale_cpu(const TensorBase& x, double f) {
  std::vector<double> values = x.to_vector<double>();
  for (double& v : values) v *= f;
  TensorBase out = TensorBase::empty(x.sizes(), TensorOptions(x.dtype()));
  write_values(out, values);
  return out;
}

void meta::structured_axpby::meta(const TensorBase& self, const TensorBase& other, double a, double b) {
  OP_CHECK(self.sizes() == other.sizes(), "axpby: self and other must have one shape");
  OP_CHECK(self.dtype() == other.dtype(), "axpby: self and other must have one dtype");
  set_output_raw_strided(0, self.sizes(), {}, TensorOptions(self.dtype()).with_device(self.device()));
}

void native::structured_axpby_out::impl(const TensorBase& self, const TensorBase& other, double a, double b,
                                         const TensorBase& out) {
  std::vector<double> x = self.to_vector<double>(), y = other.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) x[i] = a * x[i] + b * y[i];
  write_values(out, x);
}

TensorBase native::sumsq(const TensorBase& x) { return op::sum(op::mul(x, x)); }

}  // namespace op
