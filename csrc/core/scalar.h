// A single number (bool, integer or floating point) passed to kernels, e.g. `alpha` in add.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "core/scalar_type.h"

namespace op {

class Scalar {
 public:
  enum class Kind : int8_t { Bool, Int, Double };

  Scalar() : Scalar(int64_t{0}) {}
  Scalar(bool v) : kind_(Kind::Bool) { v_.b = v; }  // NOLINT: implicit like a literal
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::Int) { v_.i = static_cast<int64_t>(v); }  // NOLINT
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind_(Kind::Double) { v_.d = static_cast<double>(v); }  // NOLINT

  Kind kind() const { return kind_; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_floating_point() const { return kind_ == Kind::Double; }
  // The natural dtype: bool, int64 or float64.
  ScalarType type() const {
    return kind_ == Kind::Bool ? ScalarType::Bool : kind_ == Kind::Int ? ScalarType::Int64 : ScalarType::Float64;
  }

  template <class T>
  T to() const {
    switch (kind_) {
      case Kind::Bool: return static_cast<T>(v_.b);
      case Kind::Int: return static_cast<T>(v_.i);
      case Kind::Double: return static_cast<T>(v_.d);
    }
    return T{};
  }

  std::string to_string() const;
  bool operator==(const Scalar& other) const;
  bool operator!=(const Scalar& other) const { return !(*this == other); }

 private:
  Kind kind_;
  union {
    bool b;
    int64_t i;
    double d;
  } v_;
};

}  // namespace op
