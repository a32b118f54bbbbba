#include "core/scalar_type.h"

namespace op {

const char* to_string(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "bool";
    case ScalarType::Int32: return "int32";
    case ScalarType::Int64: return "int64";
    case ScalarType::Float32: return "float32";
    case ScalarType::Float64: return "float64";
  }
  return "<invalid dtype>";
}

ScalarType scalar_type_from_string(const std::string& name) {
  // Canonical names plus the schema language's spellings (`ScalarType dtype=long`).
  if (name == "bool") return ScalarType::Bool;
  if (name == "int32" || name == "int") return ScalarType::Int32;
  if (name == "int64" || name == "long") return ScalarType::Int64;
  if (name == "float32" || name == "float") return ScalarType::Float32;
  if (name == "float64" || name == "double") return ScalarType::Float64;
  fail(str("unknown or unsupported dtype '", name, "'; supported: bool, int32, int64, float32, float64"));
}

}  // namespace op
