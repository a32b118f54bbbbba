#include "core/ivalue.h"

namespace op {

IValue::IValue(const IValue& other) = default;
IValue::IValue(IValue&& other) noexcept = default;
IValue& IValue::operator=(const IValue& other) = default;
IValue& IValue::operator=(IValue&& other) noexcept = default;
IValue::~IValue() = default;
IValue::IValue(TensorBase t) : v_(std::move(t)) {}
IValue::IValue(std::vector<TensorBase> v) : v_(std::move(v)) {}
IValue::IValue(std::vector<std::optional<TensorBase>> v) : v_(std::move(v)) {}
IValue::IValue(Int v) : v_(v.value) {}
IValue::IValue(double v) : v_(v) {}
IValue::IValue(bool v) : v_(v) {}
IValue::IValue(std::string v) : v_(std::move(v)) {}
IValue::IValue(const char* v) : v_(std::string(v)) {}
IValue::IValue(Scalar v) : v_(v) {}
IValue::IValue(std::vector<int64_t> v) : v_(std::move(v)) {}
IValue::IValue(std::vector<double> v) : v_(std::move(v)) {}
IValue::IValue(std::vector<bool> v) : v_(std::move(v)) {}
IValue::IValue(ScalarType v) : v_(v) {}
IValue::IValue(Device v) : v_(v) {}
IValue::IValue(Generator v) : v_(std::move(v)) {}
IValue::IValue(std::vector<Scalar> v) : v_(std::move(v)) {}
IValue::IValue(Storage v) : v_(std::move(v)) {}
IValue::IValue(Stream v) : v_(v) {}
IValue::IValue(Dimname v) : v_(v) {}
IValue::IValue(std::vector<Dimname> v) : v_(std::move(v)) {}

IValue::IValue(std::optional<TensorBase> t) {
  if (t) v_ = std::move(*t);
}

IValue::IValue(std::optional<Generator> v) {
  if (v) v_ = std::move(*v);
}

const char* IValue::tag_name(Tag tag) {
  switch (tag) {
    case Tag::None: return "None";
    case Tag::Tensor: return "Tensor";
    case Tag::TensorList: return "Tensor[]";
    case Tag::OptionalTensorList: return "Tensor?[]";
    case Tag::Int: return "int";
    case Tag::Double: return "float";
    case Tag::Bool: return "bool";
    case Tag::String: return "str";
    case Tag::Scalar: return "Scalar";
    case Tag::IntList: return "int[]";
    case Tag::DoubleList: return "float[]";
    case Tag::BoolList: return "bool[]";
    case Tag::ScalarType: return "ScalarType";
    case Tag::Device: return "Device";
    case Tag::Generator: return "Generator";
    case Tag::ScalarList: return "Scalar[]";
    case Tag::Storage: return "Storage";
    case Tag::Stream: return "Stream";
    case Tag::Dimname: return "Dimname";
    case Tag::DimnameList: return "Dimname[]";
  }
  return "<invalid tag>";
}

void IValue::type_error(Tag expected) const {
  fail(str("expected a value of type ", tag_name(expected), " but got ", tag_name(), " (", repr(), ")"));
}

bool IValue::is_scalar_like() const {
  Tag t = tag();
  return t == Tag::Scalar || t == Tag::Int || t == Tag::Double || t == Tag::Bool;
}

std::optional<TensorBase> IValue::to_optional_tensor() const {
  if (is_none()) return std::nullopt;
  if (!is_tensor()) fail(str("expected a value of type Tensor? but got ", tag_name(), " (", repr(), ")"));
  const TensorBase& t = to_tensor();
  return t.defined() ? std::optional<TensorBase>(t) : std::nullopt;
}

double IValue::to_double() const {
  if (is_int()) return static_cast<double>(to_int());
  return get<Tag::Double>();
}

Scalar IValue::to_scalar() const {
  switch (tag()) {
    case Tag::Scalar: return *std::get_if<Scalar>(&v_);
    case Tag::Int: return Scalar(to_int());
    case Tag::Double: return Scalar(*std::get_if<double>(&v_));
    case Tag::Bool: return Scalar(to_bool());
    default: fail(str("expected a value of type Scalar (a number or bool) but got ", tag_name(), " (", repr(), ")"));
  }
}

std::vector<Scalar> IValue::as_scalar_list() const {
  switch (tag()) {
    case Tag::ScalarList: return to_scalar_list();
    case Tag::IntList: return std::vector<Scalar>(to_int_list().begin(), to_int_list().end());
    case Tag::DoubleList: return std::vector<Scalar>(to_double_list().begin(), to_double_list().end());
    case Tag::BoolList: {
      std::vector<Scalar> out;
      for (bool b : to_bool_list()) out.emplace_back(b);
      return out;
    }
    default: type_error(Tag::ScalarList);
  }
}

namespace {

std::string tensor_repr(const TensorBase& t) {
  if (!t.defined()) return "Tensor(undefined)";
  return str("Tensor(", to_string(t.dtype()), str_list(t.sizes()), " on ", t.device().str(), ")");
}

template <class T, class F>
std::string list_repr(const std::vector<T>& items, F&& each) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + each(items[i]);
  return out + "]";
}

}  // namespace

std::string IValue::repr() const {
  switch (tag()) {
    case Tag::None: return "None";
    case Tag::Tensor: return tensor_repr(to_tensor());
    case Tag::TensorList: return list_repr(to_tensor_list(), tensor_repr);
    case Tag::OptionalTensorList:
      return list_repr(to_optional_tensor_list(),
                       [](const std::optional<TensorBase>& t) { return t ? tensor_repr(*t) : std::string("None"); });
    case Tag::Int: return std::to_string(to_int());
    case Tag::Double: return Scalar(to_double()).to_string();
    case Tag::Bool: return to_bool() ? "True" : "False";
    case Tag::String: return "'" + to_str() + "'";
    case Tag::Scalar: return to_scalar().to_string();
    case Tag::IntList: return str_list(to_int_list());
    case Tag::DoubleList: return list_repr(to_double_list(), [](double d) { return Scalar(d).to_string(); });
    case Tag::BoolList: return list_repr(to_bool_list(), [](bool b) { return std::string(b ? "True" : "False"); });
    case Tag::ScalarType: return to_string(to_scalar_type());
    case Tag::Device: return to_device().str();
    case Tag::Generator: return str("Generator(", to_generator().device().str(), ")");
    case Tag::ScalarList: return list_repr(to_scalar_list(), [](const Scalar& s) { return s.to_string(); });
    case Tag::Storage: {
      const Storage& s = to_storage();
      return s.defined() ? str("Storage(", s.nbytes(), " bytes on ", s.device().str(), ")") : "Storage(undefined)";
    }
    case Tag::Stream: return to_stream().str();
    case Tag::Dimname: return to_dimname().str();
    case Tag::DimnameList: return list_repr(to_dimname_list(), [](const Dimname& d) { return d.str(); });
  }
  return "?";
}

bool IValue::operator==(const IValue& other) const {
  if (tag() != other.tag()) return false;
  auto same = [](const TensorBase& a, const TensorBase& b) { return a.unsafe_impl() == b.unsafe_impl(); };
  switch (tag()) {
    case Tag::Tensor: return same(to_tensor(), other.to_tensor());
    case Tag::TensorList: {
      const auto &a = to_tensor_list(), &b = other.to_tensor_list();
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i)
        if (!same(a[i], b[i])) return false;
      return true;
    }
    case Tag::OptionalTensorList: {
      const auto &a = to_optional_tensor_list(), &b = other.to_optional_tensor_list();
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i)
        if (a[i].has_value() != b[i].has_value() || (a[i] && !same(*a[i], *b[i]))) return false;
      return true;
    }
    case Tag::None: return true;
    case Tag::Int: return to_int() == other.to_int();
    case Tag::Double: return to_double() == other.to_double();
    case Tag::Bool: return to_bool() == other.to_bool();
    case Tag::String: return to_str() == other.to_str();
    case Tag::Scalar: return to_scalar() == other.to_scalar();
    case Tag::IntList: return to_int_list() == other.to_int_list();
    case Tag::DoubleList: return to_double_list() == other.to_double_list();
    case Tag::BoolList: return to_bool_list() == other.to_bool_list();
    case Tag::ScalarType: return to_scalar_type() == other.to_scalar_type();
    case Tag::Device: return to_device() == other.to_device();
    case Tag::Generator: return to_generator() == other.to_generator();
    case Tag::ScalarList: return to_scalar_list() == other.to_scalar_list();
    case Tag::Storage: {  // identity: the same memory, or both undefined
      const Storage &a = to_storage(), &b = other.to_storage();
      return a.is_alias_of(b) || (!a.defined() && !b.defined());
    }
    case Tag::Stream: return to_stream() == other.to_stream();
    case Tag::Dimname: return to_dimname() == other.to_dimname();
    case Tag::DimnameList: return to_dimname_list() == other.to_dimname_list();
  }
  return false;
}

}  // namespace op
