// Types of the schema language (`Tensor`, `int[2]`, `Scalar?`, `Tensor?[]`), how they box
// into IValues, and their default values. Mirrors opgen/model/types.py and defaults.py.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/ivalue.h"

namespace op {

enum class BaseTy : uint8_t {
  Tensor, Int, SymInt, SymBool, Float, Bool, Str, Scalar, ScalarType, Layout, Device, DeviceIndex,
  MemoryFormat, Generator, Dimname, Storage, Stream, QScheme, GraphModule, DimVector,
};

const char* to_string(BaseTy t);

// A value type: a base type, an optional (`T?`) or a list (`T[]`, fixed-size `T[N]`).
class Type {
 public:
  enum class Kind : uint8_t { Base, Optional, List };

  static Type base(BaseTy t) { return Type(Kind::Base, t, nullptr, std::nullopt); }
  static Type optional(Type elem);
  static Type list(Type elem, std::optional<int64_t> size = std::nullopt);

  Kind kind() const { return kind_; }
  bool is_base() const { return kind_ == Kind::Base; }
  bool is_optional() const { return kind_ == Kind::Optional; }
  bool is_list() const { return kind_ == Kind::List; }
  BaseTy base_ty() const { return base_; }            // meaningful for Base only
  const Type& elem() const { return *elem_; }         // Optional and List only
  std::optional<int64_t> list_size() const { return size_; }
  BaseTy innermost() const { return is_base() ? base_ : elem_->innermost(); }
  bool is_tensor_like() const { return innermost() == BaseTy::Tensor; }

  std::string str() const;  // canonical text; parse_type(t.str()) == t
  // The C++/boxed "kind" used to match kernel signatures: SymInt -> int, int[2] -> int[], ...
  std::string boxed_kind() const;
  bool operator==(const Type& o) const { return str() == o.str(); }
  bool operator!=(const Type& o) const { return !(*this == o); }

 private:
  Type(Kind kind, BaseTy base, std::shared_ptr<const Type> elem, std::optional<int64_t> size)
      : kind_(kind), base_(base), elem_(std::move(elem)), size_(size) {}
  Kind kind_;
  BaseTy base_;
  std::shared_ptr<const Type> elem_;
  std::optional<int64_t> size_;
};

// Throws op::Error for unknown types or malformed list sizes.
Type parse_type(const std::string& text);

// nullopt when `text` is a valid default for `type` in the schema language, else why not.
std::optional<std::string> default_problem(const Type& type, const std::string& text);
// The boxed value of a (valid) default. Throws op::Error for defaults this runtime cannot
// represent (e.g. `ScalarType dtype=half`).
IValue default_ivalue(const Type& type, const std::string& text);

// Whether a boxed value can be passed for an argument of this type.
bool ivalue_matches(const IValue& value, const Type& type);

}  // namespace op
