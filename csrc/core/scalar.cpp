#include "core/scalar.h"

#include <cmath>
#include <sstream>

namespace op {

std::string Scalar::to_string() const {
  switch (kind_) {
    case Kind::Bool: return v_.b ? "True" : "False";
    case Kind::Int: return std::to_string(v_.i);
    case Kind::Double: {
      std::ostringstream out;
      out.precision(17);
      out << v_.d;
      std::string s = out.str();
      // Keep floats recognisable as floats in dumps: 1 -> 1.0.
      if (std::isfinite(v_.d) && s.find_first_of(".e") == std::string::npos) s += ".0";
      return s;
    }
  }
  return "?";
}

bool Scalar::operator==(const Scalar& other) const {
  if (kind_ != other.kind_) return false;
  switch (kind_) {
    case Kind::Bool: return v_.b == other.v_.b;
    case Kind::Int: return v_.i == other.v_.i;
    case Kind::Double: return v_.d == other.v_.d;
  }
  return false;
}

}  // namespace op
