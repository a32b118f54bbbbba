// Element types of tensors and how they combine.
#pragma once

#include <cstdint>
#include <string>

#include "core/error.h"

namespace op {

// Declared in promotion order: within our five types, "larger" is always the result of
// combining two (bool < int32 < int64 < float32 < float64), which is what PyTorch's
// category-then-width rule gives for tensor-tensor operations on these types.
enum class ScalarType : int8_t { Bool = 0, Int32, Int64, Float32, Float64 };
constexpr int kNumScalarTypes = 5;

// 0 = bool, 1 = integral, 2 = floating: type promotion only looks past a tensor's own
// type when another operand belongs to a higher category.
enum class TypeCategory : int8_t { Bool = 0, Integral = 1, Floating = 2 };

constexpr TypeCategory category(ScalarType t) {
  return t == ScalarType::Bool ? TypeCategory::Bool
         : (t == ScalarType::Int32 || t == ScalarType::Int64) ? TypeCategory::Integral
                                                               : TypeCategory::Floating;
}
constexpr bool is_floating(ScalarType t) { return category(t) == TypeCategory::Floating; }
constexpr bool is_integral(ScalarType t, bool include_bool = false) {
  return category(t) == TypeCategory::Integral || (include_bool && t == ScalarType::Bool);
}

constexpr size_t element_size(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return 1;
    case ScalarType::Int32: return 4;
    case ScalarType::Int64: return 8;
    case ScalarType::Float32: return 4;
    case ScalarType::Float64: return 8;
  }
  return 0;
}

// The smallest type both a and b convert to without losing their category.
constexpr ScalarType promote_types(ScalarType a, ScalarType b) { return a < b ? b : a; }

// The type a Python-style number of this category becomes (int -> int64, float -> float32).
constexpr ScalarType default_type_for(TypeCategory c) {
  return c == TypeCategory::Bool ? ScalarType::Bool
         : c == TypeCategory::Integral ? ScalarType::Int64
                                       : ScalarType::Float32;
}

const char* to_string(ScalarType t);  // "float32"
ScalarType scalar_type_from_string(const std::string& name);  // accepts "float32", "float", "long", ...

template <class T> struct CppTypeToScalarType;
template <> struct CppTypeToScalarType<bool> { static constexpr ScalarType value = ScalarType::Bool; };
template <> struct CppTypeToScalarType<int32_t> { static constexpr ScalarType value = ScalarType::Int32; };
template <> struct CppTypeToScalarType<int64_t> { static constexpr ScalarType value = ScalarType::Int64; };
template <> struct CppTypeToScalarType<float> { static constexpr ScalarType value = ScalarType::Float32; };
template <> struct CppTypeToScalarType<double> { static constexpr ScalarType value = ScalarType::Float64; };
template <class T>
constexpr ScalarType scalar_type_of = CppTypeToScalarType<T>::value;

}  // namespace op

// Runs the statement block once with `scalar_t` bound to the C++ type of TYPE, e.g.
//   OP_DISPATCH_ALL_TYPES(t.dtype(), "fill_", { fill<scalar_t>(t, v); });
#define OP_DTYPE_CASE(ENUM, CPP, ...) \
  case ::op::ScalarType::ENUM: {      \
    using scalar_t = CPP;             \
    __VA_ARGS__;                      \
    break;                            \
  }
// The cases of every dtype but bool, and the end of the switch, shared by both dispatchers.
#define OP_NUMERIC_CASES_AND_DEFAULT(NAME, ...)                                 \
  OP_DTYPE_CASE(Int32, int32_t, __VA_ARGS__)                                    \
  OP_DTYPE_CASE(Int64, int64_t, __VA_ARGS__)                                    \
  OP_DTYPE_CASE(Float32, float, __VA_ARGS__)                                    \
  OP_DTYPE_CASE(Float64, double, __VA_ARGS__)                                   \
  default: ::op::fail(::op::str(NAME, ": unsupported dtype"));
#define OP_DISPATCH_ALL_TYPES(TYPE, NAME, ...)                                  \
  do {                                                                          \
    switch (TYPE) {                                                             \
      OP_DTYPE_CASE(Bool, bool, __VA_ARGS__)                                    \
      OP_NUMERIC_CASES_AND_DEFAULT(NAME, __VA_ARGS__)                           \
    }                                                                           \
  } while (0)
// The same for kernels with no bool version (arithmetic such as gemm): bool is an error.
#define OP_DISPATCH_NUMERIC_TYPES(TYPE, NAME, ...)                              \
  do {                                                                          \
    switch (TYPE) {                                                             \
      case ::op::ScalarType::Bool:                                              \
        ::op::fail(::op::str(NAME, ": bool tensors are not supported"));        \
        break;                                                                  \
      OP_NUMERIC_CASES_AND_DEFAULT(NAME, __VA_ARGS__)                           \
    }                                                                           \
  } while (0)
