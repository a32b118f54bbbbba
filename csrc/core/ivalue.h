// IValue: one boxed value of any argument or return type an operator can have. Boxed kernels
// and fallbacks see a call as a stack (vector) of IValues; accessors check the held type and
// throw op::Error naming what was expected and what was there. Enums (Layout, MemoryFormat,
// QScheme) and DeviceIndex box as Int, SymInt as Int and SymBool as Bool, as in PyTorch; every
// other schema type has its own tag (docs/runtime.md has the table).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/device.h"
#include "core/dimname.h"
#include "core/scalar.h"
#include "core/scalar_type.h"
#include "core/storage.h"
#include "core/stream.h"
#include "core/tensor.h"

namespace op {

class IValue {
  // What an IValue holds: one of these, in Tag's order.
  using Value = std::variant<std::monostate, TensorBase, std::vector<TensorBase>, std::vector<std::optional<TensorBase>>, int64_t, double, bool,
                 std::string, Scalar, std::vector<int64_t>, std::vector<double>, std::vector<bool>, ScalarType, Device,
                 Generator, std::vector<Scalar>, Storage, Stream, Dimname, std::vector<Dimname>>;

 public:
  // Same order as the variant above: tag() is the variant index.
  enum class Tag : uint8_t {
    None,
    Tensor,
    TensorList,
    OptionalTensorList,  // Tensor?[]
    Int,
    Double,
    Bool,
    String,
    Scalar,
    IntList,
    DoubleList,
    BoolList,
    ScalarType,
    Device,
    Generator,
    ScalarList,   // Scalar[]
    Storage,
    Stream,
    Dimname,
    DimnameList,  // Dimname[]
  };

  IValue() = default;
  // Out of line (ivalue.cpp), as are the constructors below: copying, moving, destroying and
  // assigning the variant instantiate its visitation tables and its converting constructor's
  // overload set over twenty types, work every generated unit (and the precompiled header's
  // pending instantiations) would otherwise do again (docs/benchmarks.md, unit compile time).
  IValue(const IValue& other);
  IValue(IValue&& other) noexcept;
  IValue& operator=(const IValue& other);
  IValue& operator=(IValue&& other) noexcept;
  ~IValue();
  IValue(std::nullopt_t) {}  // NOLINT
  IValue(TensorBase t);  // NOLINT
  IValue(std::optional<TensorBase> t);  // NOLINT: None or Tensor
  IValue(std::vector<TensorBase> v);  // NOLINT
  IValue(std::vector<std::optional<TensorBase>> v);  // NOLINT
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  IValue(T v) : IValue(Int{static_cast<int64_t>(v)}) {}  // NOLINT
  IValue(double v);  // NOLINT
  IValue(bool v);  // NOLINT
  IValue(std::string v);  // NOLINT
  IValue(const char* v);  // NOLINT
  IValue(Scalar v);  // NOLINT
  IValue(std::vector<int64_t> v);  // NOLINT
  IValue(std::vector<double> v);  // NOLINT
  IValue(std::vector<bool> v);  // NOLINT
  IValue(ScalarType v);  // NOLINT
  IValue(Device v);  // NOLINT
  IValue(Generator v);  // NOLINT
  IValue(std::optional<Generator> v);  // NOLINT: None or Generator
  IValue(std::vector<Scalar> v);  // NOLINT
  IValue(Storage v);  // NOLINT
  IValue(Stream v);  // NOLINT
  IValue(Dimname v);  // NOLINT
  IValue(std::vector<Dimname> v);  // NOLINT

  Tag tag() const { return static_cast<Tag>(v_.index()); }
  static const char* tag_name(Tag tag);  // "Tensor", "int", "int[]", ...
  const char* tag_name() const { return tag_name(tag()); }

  bool is_none() const { return tag() == Tag::None; }
  bool is_tensor() const { return tag() == Tag::Tensor; }
  bool is_tensor_list() const { return tag() == Tag::TensorList; }
  bool is_int() const { return tag() == Tag::Int; }
  bool is_double() const { return tag() == Tag::Double; }
  bool is_bool() const { return tag() == Tag::Bool; }
  bool is_string() const { return tag() == Tag::String; }
  // Anything to_scalar() accepts: a Scalar, int, float or bool.
  bool is_scalar_like() const;

  const TensorBase& to_tensor() const { return get<Tag::Tensor>(); }
  TensorBase& to_tensor_mut() { return get_mut<Tag::Tensor>(); }
  std::optional<TensorBase> to_optional_tensor() const;  // None or Tensor
  const std::vector<TensorBase>& to_tensor_list() const { return get<Tag::TensorList>(); }
  const std::vector<std::optional<TensorBase>>& to_optional_tensor_list() const {
    return get<Tag::OptionalTensorList>();
  }
  int64_t to_int() const { return get<Tag::Int>(); }
  double to_double() const;  // also accepts an int
  bool to_bool() const { return get<Tag::Bool>(); }
  const std::string& to_str() const { return get<Tag::String>(); }
  Scalar to_scalar() const;
  const std::vector<int64_t>& to_int_list() const { return get<Tag::IntList>(); }
  const std::vector<double>& to_double_list() const { return get<Tag::DoubleList>(); }
  const std::vector<bool>& to_bool_list() const { return get<Tag::BoolList>(); }
  ScalarType to_scalar_type() const { return get<Tag::ScalarType>(); }
  Device to_device() const { return get<Tag::Device>(); }
  const Generator& to_generator() const { return get<Tag::Generator>(); }
  const std::vector<Scalar>& to_scalar_list() const { return get<Tag::ScalarList>(); }
  // A Scalar[], or an int, float or bool list as Scalars of its kind (a copy).
  std::vector<Scalar> as_scalar_list() const;
  const Storage& to_storage() const { return get<Tag::Storage>(); }
  Stream to_stream() const { return get<Tag::Stream>(); }
  Dimname to_dimname() const { return get<Tag::Dimname>(); }
  const std::vector<Dimname>& to_dimname_list() const { return get<Tag::DimnameList>(); }

  // A short, deterministic description: "None", "3", "[1, 2]", "Tensor(float32[2, 3] on cpu)".
  std::string repr() const;
  // Values compare by value; tensors by identity (the same TensorImpl).
  bool operator==(const IValue& other) const;
  bool operator!=(const IValue& other) const { return !(*this == other); }

 private:
  struct Int {  // an integer of any width, widened (the template constructor)
    int64_t value;
  };
  explicit IValue(Int v);
  [[noreturn]] void type_error(Tag expected) const;
  // By index, not by type: finding a type among the variant's twenty costs every unit compile time.
  template <Tag expected>
  const std::variant_alternative_t<static_cast<size_t>(expected), Value>& get() const {
    if (tag() != expected) type_error(expected);
    return *std::get_if<static_cast<size_t>(expected)>(&v_);
  }
  template <Tag expected>
  std::variant_alternative_t<static_cast<size_t>(expected), Value>& get_mut() {
    if (tag() != expected) type_error(expected);
    return *std::get_if<static_cast<size_t>(expected)>(&v_);
  }

  Value v_;
};

using Stack = std::vector<IValue>;

// Calls visit(const TensorBase&) for every tensor a value holds: a Tensor, or the defined
// elements of a Tensor[] / Tensor?[] (boxed fallbacks walk their arguments with it).
template <class Visit>
void for_each_tensor(const IValue& value, Visit visit) {
  if (value.is_tensor()) {
    visit(value.to_tensor());
  } else if (value.is_tensor_list()) {
    for (const TensorBase& t : value.to_tensor_list()) visit(t);
  } else if (value.tag() == IValue::Tag::OptionalTensorList) {
    for (const auto& t : value.to_optional_tensor_list())
      if (t) visit(*t);
  }
}

// The value with every tensor it holds replaced by map(tensor): a Tensor, or the elements of a
// Tensor[] / Tensor?[] (None stays None); any other value as it is.
template <class Map>
IValue map_tensors(const IValue& value, Map map) {
  if (value.is_tensor()) return IValue(map(value.to_tensor()));
  if (value.is_tensor_list()) {
    std::vector<TensorBase> list;
    for (const TensorBase& t : value.to_tensor_list()) list.push_back(map(t));
    return IValue(std::move(list));
  }
  if (value.tag() == IValue::Tag::OptionalTensorList) {
    std::vector<std::optional<TensorBase>> list;
    for (const auto& t : value.to_optional_tensor_list()) list.push_back(t ? std::optional<TensorBase>(map(*t)) : t);
    return IValue(std::move(list));
  }
  return value;
}

}  // namespace op
