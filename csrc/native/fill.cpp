// fill_ (one device-generic kernel calling the device's loop), its Meta kernel and zero_.
// Like a C++ conversion, a fractional value truncates into an integral tensor and any nonzero
// value is true for bool; a value outside the dtype's range is an error, not a wraparound.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/error.h"
#include "native/stubs.h"
#include "ops/fill.h"
#include "ops/fill_native.h"
#include "ops/zero_native.h"

namespace op {

namespace {

template <class T>
bool fits(const Scalar& value) {
  using limits = std::numeric_limits<T>;
  if (value.is_bool()) return true;
  if (value.is_integral()) {
    const int64_t v = value.to<int64_t>();
    if constexpr (std::is_floating_point_v<T>) return true;  // rounds, never overflows
    else return v >= static_cast<int64_t>(limits::min()) && v <= static_cast<int64_t>(limits::max());
  }
  const double v = value.to<double>();
  if constexpr (std::is_floating_point_v<T>) {
    return !std::isfinite(v) || std::fabs(v) <= static_cast<double>(limits::max());  // inf and nan stay as they are
  } else {
    // Truncation toward zero must land in range: (min - 1, max + 1).
    return std::isfinite(v) && v > static_cast<double>(limits::min()) - 1.0 &&
           v < static_cast<double>(limits::max()) + 1.0;
  }
}

void check_fill_value(const TensorBase& self, const Scalar& value) {
  bool ok = true;
  switch (self.dtype()) {
    case ScalarType::Bool: ok = true; break;
    case ScalarType::Int32: ok = fits<int32_t>(value); break;
    case ScalarType::Int64: ok = fits<int64_t>(value); break;
    case ScalarType::Float32: ok = fits<float>(value); break;
    case ScalarType::Float64: ok = true; break;
  }
  OP_CHECK(ok, "fill_: value ", value.to_string(), " cannot be converted to ", to_string(self.dtype()),
           " without overflow");
}

}  // namespace

TensorBase& native::fill_(TensorBase& self, const Scalar& value) {
  check_fill_value(self, value);
  // No internal-overlap check (PyTorch has none either): an expanded self gets the same value
  // at every location, whatever the order of the writes.
  if (self.numel() > 0) fill_stub(self.device().type(), self, value);
  return self;
}

TensorBase& native::fill_meta_(TensorBase& self, const Scalar& value) {
  check_fill_value(self, value);
  return self;
}

TensorBase& native::zero_(TensorBase& self) { return op::fill_(self, 0); }

}  // namespace op
