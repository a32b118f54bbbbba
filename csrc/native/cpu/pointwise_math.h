// Element functions shared by the cpu pointwise kernels: dtype visitors that bind the C++ type
// as a template parameter (so `if constexpr` can skip code that does not apply to a type),
// integer arithmetic that wraps instead of overflowing (signed overflow is undefined in C++,
// PyTorch and numpy wrap), and NaN-propagating max / min.
//
// The kernel files start with `#pragma GCC optimize(...)` before any include (see
// binary_kernels.cpp) so that the row loops of TensorIteratorBase::for_each_element vectorize;
// everything they inline must be compiled under the same options, which is why the pragma
// comes first.
#pragma once

#include <cmath>
#include <type_traits>

#include "core/error.h"
#include "core/scalar_type.h"

namespace op::native::cpu {

// fn(T{}) with T the C++ type of `dtype`.
template <class Fn>
void visit_dtype(ScalarType dtype, const char* op_name, Fn&& fn) {
  switch (dtype) {
    case ScalarType::Bool: fn(bool{}); return;
    case ScalarType::Int32: fn(int32_t{}); return;
    case ScalarType::Int64: fn(int64_t{}); return;
    case ScalarType::Float32: fn(float{}); return;
    case ScalarType::Float64: fn(double{}); return;
  }
  fail(str(op_name, ": unsupported dtype"));
}

template <class Fn>
void visit_floating_dtype(ScalarType dtype, const char* op_name, Fn&& fn) {
  if (dtype == ScalarType::Float32) return fn(float{});
  if (dtype == ScalarType::Float64) return fn(double{});
  fail(str(op_name, ": expected a floating point dtype to compute in, got ", to_string(dtype)));
}

template <class T>
constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Integers wrap around; bools add as "or" and multiply as "and".
template <class T>
T wrapping_add(T x, T y) {
  if constexpr (std::is_same_v<T, bool>) {
    return x || y;
  } else if constexpr (is_int_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(x) + static_cast<U>(y));
  } else {
    return x + y;
  }
}

template <class T>
T wrapping_mul(T x, T y) {
  if constexpr (std::is_same_v<T, bool>) {
    return x && y;
  } else if constexpr (is_int_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(x) * static_cast<U>(y));
  } else {
    return x * y;
  }
}

template <class T>
T wrapping_neg(T x) {
  if constexpr (is_int_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(U(0) - static_cast<U>(x));
  } else {
    return -x;
  }
}

template <class T>
bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return x != x;
  else
    return false;
}

// NaN in either operand gives NaN (numpy's maximum / minimum; PyTorch's too).
template <class T>
T max_propagating(T a, T b) {
  return (is_nan(a) || a > b) ? a : b;
}
template <class T>
T min_propagating(T a, T b) {
  return (is_nan(a) || a < b) ? a : b;
}

// Integer powers by squaring (wrapping); a negative exponent leaves 1 and -1 as the only
// bases with an integral result, everything else truncates to 0.
template <class T>
T integer_power(T base, T exponent) {
  if (exponent < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exponent % 2 == 0) ? 1 : -1;
    return 0;
  }
  using U = std::make_unsigned_t<T>;
  U result = 1, b = static_cast<U>(base);
  for (T e = exponent; e != 0; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return static_cast<T>(result);
}

}  // namespace op::native::cpu
