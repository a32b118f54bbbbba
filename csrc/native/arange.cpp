// arange: the functional overloads are composites that pick the dtype, allocate the result on
// the requested device and hand it to arange.start_out, the one device-generic kernel (CPU,
// CUDA and Meta) that checks the range, resizes out and runs the device's loop.
#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/host_ops.h"
#include "native/stubs.h"
#include "ops/arange.h"
#include "ops/arange_native.h"
#include "ops/copy.h"
#include "ops/empty.h"

namespace op {

namespace {

// The number of values start, start + step, ... below end (above it for a negative step).
int64_t arange_length(const Scalar& start, const Scalar& end, const Scalar& step) {
  const double first = start.to<double>(), last = end.to<double>(), delta = step.to<double>();
  OP_CHECK(std::isfinite(first) && std::isfinite(last), "arange: unsupported range ", start.to_string(), " -> ",
           end.to_string(), " (the bounds must be finite)");
  OP_CHECK(std::isfinite(delta) && delta != 0, "arange: step must be a finite nonzero number, got ", step.to_string());
  OP_CHECK((delta > 0 && last >= first) || (delta < 0 && last <= first), "arange: the range ", start.to_string(),
           " -> ", end.to_string(), " is inconsistent with the sign of step ", step.to_string());
  if (!start.is_floating_point() && !end.is_floating_point() && !step.is_floating_point()) {
    // Exact in integers: ceil((end - start) / step) with both of the same sign.
    const int64_t span = end.to<int64_t>() - start.to<int64_t>(), by = step.to<int64_t>();
    return span / by + (span % by != 0 ? 1 : 0);
  }
  const double length = std::ceil((last - first) / delta);
  OP_CHECK(length < static_cast<double>(std::numeric_limits<int64_t>::max()), "arange: the range ",
           start.to_string(), " -> ", end.to_string(), " with step ", step.to_string(), " has too many values");
  return static_cast<int64_t>(length);
}

// Integral bounds and step give int64, anything else float32 (the default floating type).
ScalarType arange_dtype(const Scalar& start, const Scalar& end, const Scalar& step) {
  const bool floating = start.is_floating_point() || end.is_floating_point() || step.is_floating_point();
  return floating ? ScalarType::Float32 : ScalarType::Int64;
}

}  // namespace

TensorBase native::arange_start_step(const Scalar& start, const Scalar& end, const Scalar& step,
                                 std::optional<ScalarType> dtype, std::optional<Layout> layout,
                                 std::optional<Device> device, std::optional<bool> pin_memory) {
  const int64_t length = arange_length(start, end, step);
  TensorBase out = op::empty({length}, dtype.value_or(arange_dtype(start, end, step)), layout, device, pin_memory);
  op::arange_outf(start, end, step, out);
  return out;
}

TensorBase native::arange_start(const Scalar& start, const Scalar& end, std::optional<ScalarType> dtype,
                            std::optional<Layout> layout, std::optional<Device> device,
                            std::optional<bool> pin_memory) {
  return native::arange_start_step(start, end, 1, dtype, layout, device, pin_memory);
}

TensorBase native::arange(const Scalar& end, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                      std::optional<Device> device, std::optional<bool> pin_memory) {
  return native::arange_start_step(0, end, 1, dtype, layout, device, pin_memory);
}

TensorBase& native::arange_out(const Scalar& end, TensorBase& out) { return op::arange_outf(0, end, 1, out); }

TensorBase& native::arange_start_out(const Scalar& start, const Scalar& end, const Scalar& step, TensorBase& out) {
  OP_CHECK(out.dtype() != ScalarType::Bool, "arange: a bool output is not supported");
  const int64_t length = arange_length(start, end, step);
  if (out.sizes() != IntArrayRef({length})) host::resize_(out, {length});
  if (out.is_meta() || length == 0) return out;
  if (out.is_contiguous()) {
    native::arange_stub(out.device().type(), out, start, step);
  } else {  // the loops write contiguous memory
    TensorBase values = op::empty({length}, out.dtype(), std::nullopt, out.device());
    native::arange_stub(out.device().type(), values, start, step);
    ops::copy_::call(out, values, false);
  }
  return out;
}

}  // namespace op
