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
 public:
  // Same order as the variant below: tag() is the variant index.
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
  // Out of line (ivalue.cpp): copying, moving and destroying the variant instantiate its
  // visitation tables, which every generated unit would otherwise compile again.
  IValue(const IValue& other);
  IValue(IValue&& other) noexcept;
  IValue& operator=(const IValue& other);
  IValue& operator=(IValue&& other) noexcept;
  ~IValue();
  IValue(std::nullopt_t) {}  // NOLINT
  IValue(TensorBase t) : v_(std::move(t)) {}  // NOLINT
  IValue(std::optional<TensorBase> t);  // NOLINT: None or Tensor (out of line, as the copies)
  IValue(std::vector<TensorBase> v) : v_(std::move(v)) {}                  // NOLINT
  IValue(std::vector<std::optional<TensorBase>> v) : v_(std::move(v)) {}   // NOLINT
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  IValue(T v) : v_(static_cast<int64_t>(v)) {}  // NOLINT
  IValue(double v) : v_(v) {}                    // NOLINT
  IValue(bool v) : v_(v) {}                      // NOLINT
  IValue(std::string v) : v_(std::move(v)) {}    // NOLINT
  IValue(const char* v) : v_(std::string(v)) {}  // NOLINT
  IValue(Scalar v) : v_(v) {}                    // NOLINT
  IValue(std::vector<int64_t> v) : v_(std::move(v)) {}  // NOLINT
  IValue(std::vector<double> v) : v_(std::move(v)) {}   // NOLINT
  IValue(std::vector<bool> v) : v_(std::move(v)) {}     // NOLINT
  IValue(ScalarType v) : v_(v) {}                       // NOLINT
  IValue(Device v) : v_(v) {}                           // NOLINT
  IValue(Generator v) : v_(std::move(v)) {}             // NOLINT
  IValue(std::optional<Generator> v);                   // NOLINT: None or Generator
  IValue(std::vector<Scalar> v) : v_(std::move(v)) {}   // NOLINT
  IValue(Storage v) : v_(std::move(v)) {}               // NOLINT
  IValue(Stream v) : v_(v) {}                           // NOLINT
  IValue(Dimname v) : v_(v) {}                          // NOLINT
  IValue(std::vector<Dimname> v) : v_(std::move(v)) {}  // NOLINT

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

  const TensorBase& to_tensor() const { return get<TensorBase>(Tag::Tensor); }
  TensorBase& to_tensor_mut() { return get_mut<TensorBase>(Tag::Tensor); }
  std::optional<TensorBase> to_optional_tensor() const;  // None or Tensor
  const std::vector<TensorBase>& to_tensor_list() const { return get<std::vector<TensorBase>>(Tag::TensorList); }
  const std::vector<std::optional<TensorBase>>& to_optional_tensor_list() const {
    return get<std::vector<std::optional<TensorBase>>>(Tag::OptionalTensorList);
  }
  int64_t to_int() const { return get<int64_t>(Tag::Int); }
  double to_double() const;  // also accepts an int
  bool to_bool() const { return get<bool>(Tag::Bool); }
  const std::string& to_str() const { return get<std::string>(Tag::String); }
  Scalar to_scalar() const;
  const std::vector<int64_t>& to_int_list() const { return get<std::vector<int64_t>>(Tag::IntList); }
  const std::vector<double>& to_double_list() const { return get<std::vector<double>>(Tag::DoubleList); }
  const std::vector<bool>& to_bool_list() const { return get<std::vector<bool>>(Tag::BoolList); }
  ScalarType to_scalar_type() const { return get<ScalarType>(Tag::ScalarType); }
  Device to_device() const { return get<Device>(Tag::Device); }
  const Generator& to_generator() const { return get<Generator>(Tag::Generator); }
  const std::vector<Scalar>& to_scalar_list() const { return get<std::vector<Scalar>>(Tag::ScalarList); }
  // A Scalar[], or an int, float or bool list as Scalars of its kind (a copy).
  std::vector<Scalar> as_scalar_list() const;
  const Storage& to_storage() const { return get<Storage>(Tag::Storage); }
  Stream to_stream() const { return get<Stream>(Tag::Stream); }
  Dimname to_dimname() const { return get<Dimname>(Tag::Dimname); }
  const std::vector<Dimname>& to_dimname_list() const { return get<std::vector<Dimname>>(Tag::DimnameList); }

  // A short, deterministic description: "None", "3", "[1, 2]", "Tensor(float32[2, 3] on cpu)".
  std::string repr() const;
  // Values compare by value; tensors by identity (the same TensorImpl).
  bool operator==(const IValue& other) const;
  bool operator!=(const IValue& other) const { return !(*this == other); }

 private:
  [[noreturn]] void type_error(Tag expected) const;
  template <class T>
  const T& get(Tag expected) const {
    if (tag() != expected) type_error(expected);
    return *std::get_if<T>(&v_);
  }
  template <class T>
  T& get_mut(Tag expected) {
    if (tag() != expected) type_error(expected);
    return *std::get_if<T>(&v_);
  }

  std::variant<std::monostate, TensorBase, std::vector<TensorBase>, std::vector<std::optional<TensorBase>>, int64_t, double, bool,
               std::string, Scalar, std::vector<int64_t>, std::vector<double>, std::vector<bool>, ScalarType, Device,
               Generator, std::vector<Scalar>, Storage, Stream, Dimname, std::vector<Dimname>>
      v_;
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
