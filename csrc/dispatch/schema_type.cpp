#include "dispatch/schema_type.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "core/error.h"
#include "dispatch/lexical.h"

namespace op {

namespace {

const char* const kBaseNames[] = {
    "Tensor", "int", "SymInt", "SymBool", "float", "bool", "str", "Scalar", "ScalarType", "Layout", "Device",
    "DeviceIndex", "MemoryFormat", "Generator", "Dimname", "Storage", "Stream", "QScheme", "GraphModule", "DimVector",
};
constexpr int kNumBaseTypes = sizeof(kBaseNames) / sizeof(kBaseNames[0]);

// Symbolic defaults the C++ API understands, per base type (as in opgen/model/defaults.py),
// with the value each boxes to; -1 marks names this runtime cannot represent.
struct Named {
  BaseTy type;
  const char* name;
  int64_t value;
};
const Named kNamed[] = {
    {BaseTy::Int, "Mean", 1}, {BaseTy::Int, "Sum", 2},
    {BaseTy::ScalarType, "bool", -1}, {BaseTy::ScalarType, "int", -1}, {BaseTy::ScalarType, "long", -1},
    {BaseTy::ScalarType, "float", -1}, {BaseTy::ScalarType, "double", -1}, {BaseTy::ScalarType, "half", -1},
    {BaseTy::ScalarType, "bfloat16", -1}, {BaseTy::ScalarType, "byte", -1}, {BaseTy::ScalarType, "char", -1},
    {BaseTy::ScalarType, "short", -1},
    {BaseTy::Layout, "strided", 0}, {BaseTy::Layout, "sparse_coo", -1}, {BaseTy::Layout, "sparse_csr", -1},
    {BaseTy::Layout, "sparse_csc", -1}, {BaseTy::Layout, "sparse_bsr", -1}, {BaseTy::Layout, "sparse_bsc", -1},
    {BaseTy::Layout, "mkldnn", -1}, {BaseTy::Layout, "jagged", -1},
    {BaseTy::MemoryFormat, "contiguous_format", 0}, {BaseTy::MemoryFormat, "preserve_format", 1},
    {BaseTy::MemoryFormat, "channels_last", 2}, {BaseTy::MemoryFormat, "channels_last_3d", 3},
    {BaseTy::QScheme, "per_tensor_affine", 0}, {BaseTy::QScheme, "per_channel_affine", 1},
    {BaseTy::QScheme, "per_tensor_symmetric", 2}, {BaseTy::QScheme, "per_channel_symmetric", 3},
};

const Named* find_named(BaseTy type, const std::string& text) {
  for (const Named& n : kNamed)
    if (n.type == type && text == n.name) return &n;
  return nullptr;
}

bool is_int_like(BaseTy t) { return t == BaseTy::Int || t == BaseTy::SymInt || t == BaseTy::DeviceIndex; }

bool fits_base(BaseTy ty, const std::string& text) {
  if (find_named(ty, text)) return true;
  if (is_int_like(ty)) return lexical::is_int_literal(text);
  if (ty == BaseTy::Float) return lexical::is_float_literal(text);
  if (ty == BaseTy::Bool || ty == BaseTy::SymBool) return text == "True" || text == "False";
  if (ty == BaseTy::Scalar) return lexical::is_float_literal(text) || text == "True" || text == "False";
  if (ty == BaseTy::Str) return lexical::is_quoted_string(text);
  return false;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::string inner = text.substr(1, text.size() - 2);
  auto trim = [](std::string s) {
    size_t a = s.find_first_not_of(' '), b = s.find_last_not_of(' ');
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
  };
  if (trim(inner).empty()) return items;
  size_t start = 0;
  for (size_t comma; (comma = inner.find(',', start)) != std::string::npos; start = comma + 1)
    items.push_back(trim(inner.substr(start, comma - start)));
  items.push_back(trim(inner.substr(start)));
  return items;
}

double parse_double(const std::string& text) {
  if (text == "inf") return INFINITY;
  if (text == "-inf") return -INFINITY;
  if (text == "nan") return NAN;
  return std::strtod(text.c_str(), nullptr);
}

std::string unquote(const std::string& text) {
  std::string out;
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 2 < text.size()) {
      char n = text[++i];
      out += n == 'n' ? '\n' : n == 't' ? '\t' : n;
    } else {
      out += c;
    }
  }
  return out;
}

IValue base_default(BaseTy ty, const std::string& text) {
  if (const Named* n = find_named(ty, text)) {
    if (ty == BaseTy::ScalarType) return IValue(scalar_type_from_string(text));  // throws for half, ...
    OP_CHECK(n->value >= 0, "default '", text, "' of type ", to_string(ty), " is not supported by this runtime");
    return IValue(n->value);
  }
  switch (ty) {
    case BaseTy::Int:
    case BaseTy::SymInt:
    case BaseTy::DeviceIndex: return IValue(static_cast<int64_t>(std::strtoll(text.c_str(), nullptr, 10)));
    case BaseTy::Float: return IValue(parse_double(text));
    case BaseTy::Bool:
    case BaseTy::SymBool: return IValue(text == "True");
    case BaseTy::Scalar:
      if (text == "True" || text == "False") return IValue(Scalar(text == "True"));
      if (lexical::is_int_literal(text)) return IValue(Scalar(static_cast<int64_t>(std::strtoll(text.c_str(), nullptr, 10))));
      return IValue(Scalar(parse_double(text)));
    case BaseTy::Str: return IValue(unquote(text));
    default: fail(str("default '", text, "' of type ", to_string(ty), " is not supported by this runtime"));
  }
}

}  // namespace

const char* to_string(BaseTy t) { return kBaseNames[static_cast<int>(t)]; }

Type Type::optional(Type elem) {
  const BaseTy inner = elem.innermost();  // before elem is moved from
  return Type(Kind::Optional, inner, std::make_shared<const Type>(std::move(elem)), std::nullopt);
}

Type Type::list(Type elem, std::optional<int64_t> size) {
  const BaseTy inner = elem.innermost();
  return Type(Kind::List, inner, std::make_shared<const Type>(std::move(elem)), size);
}

std::string Type::str() const {
  switch (kind_) {
    case Kind::Base: return to_string(base_);
    case Kind::Optional: return elem_->str() + "?";
    case Kind::List: return elem_->str() + "[" + (size_ ? std::to_string(*size_) : "") + "]";
  }
  return "?";
}

std::string Type::boxed_kind() const {
  switch (kind_) {
    case Kind::Optional: return elem_->boxed_kind() + "?";
    case Kind::List: return elem_->boxed_kind() + "[]";
    case Kind::Base: break;
  }
  if (is_int_like(base_)) return "int";
  if (base_ == BaseTy::SymBool) return "bool";
  return to_string(base_);
}

Type parse_type(const std::string& text) {
  if (!text.empty() && text.back() == '?') return Type::optional(parse_type(text.substr(0, text.size() - 1)));
  if (!text.empty() && text.back() == ']') {
    size_t open = text.rfind('[');
    std::string size = open == std::string::npos ? "x" : text.substr(open + 1, text.size() - open - 2);
    if (open > 0 && size.find_first_not_of("0123456789") == std::string::npos) {
      OP_CHECK(size.empty() || (size[0] != '0' && size.size() < 10), "list size must be a positive number without leading zeros in '", text, "'");
      Type elem = parse_type(text.substr(0, open));
      return size.empty() ? Type::list(elem) : Type::list(elem, std::atoll(size.c_str()));
    }
  }
  for (int i = 0; i < kNumBaseTypes; ++i)
    if (text == kBaseNames[i]) return Type::base(static_cast<BaseTy>(i));
  // Sorted like opgen's message (byte order: upper case first) so both parsers say the same thing.
  std::vector<std::string> known(std::begin(kBaseNames), std::end(kBaseNames));
  std::sort(known.begin(), known.end());
  std::string list;
  for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
  fail(str("unknown type '", text, "'; known types: ", list));
}

std::optional<std::string> default_problem(const Type& type, const std::string& text) {
  if (type.is_optional()) return text == "None" ? std::nullopt : default_problem(type.elem(), text);
  if (type.is_list()) {
    if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
      for (const std::string& item : split_list(text))
        if (auto problem = default_problem(type.elem(), item)) return problem;
      return std::nullopt;
    }
    // A single value broadcasts to every element (int[2] stride=1).
    if (type.elem().is_base() && (type.elem().base_ty() == BaseTy::Int || type.elem().base_ty() == BaseTy::SymInt))
      return default_problem(type.elem(), text);
    return str("'", text, "' is not a list; write e.g. [] or [0, 1]");
  }
  if (fits_base(type.base_ty(), text)) return std::nullopt;
  if (text == "None")
    return str("None is only a valid default for optional types; write ", type.str(), "? instead of ", type.str());
  return str("'", text, "' is not a valid ", type.str(), " value");
}

IValue default_ivalue(const Type& type, const std::string& text) {
  if (auto problem = default_problem(type, text)) fail(*problem);
  if (type.is_optional()) return text == "None" ? IValue() : default_ivalue(type.elem(), text);
  if (type.is_base()) return base_default(type.base_ty(), text);
  const Type& elem = type.elem();
  std::vector<std::string> items;
  if (text.front() == '[') {
    items = split_list(text);
  } else {  // broadcast a single int
    items.assign(static_cast<size_t>(type.list_size().value_or(1)), text);
  }
  std::string kind = elem.boxed_kind();
  if (kind == "int") {
    std::vector<int64_t> v;
    for (const auto& item : items) v.push_back(base_default(BaseTy::Int, item).to_int());
    return IValue(std::move(v));
  }
  if (kind == "float") {
    std::vector<double> v;
    for (const auto& item : items) v.push_back(parse_double(item));
    return IValue(std::move(v));
  }
  if (kind == "bool") {
    std::vector<bool> v;
    for (const auto& item : items) v.push_back(item == "True");
    return IValue(std::move(v));
  }
  if (kind == "Scalar") {
    std::vector<Scalar> v;
    for (const auto& item : items) v.push_back(base_default(BaseTy::Scalar, item).to_scalar());
    return IValue(std::move(v));
  }
  if (kind == "Tensor" && items.empty()) return IValue(std::vector<TensorBase>{});
  if (kind == "Tensor?" && items.empty()) return IValue(std::vector<std::optional<TensorBase>>{});
  fail(str("default '", text, "' of type ", type.str(), " is not supported by this runtime"));
}

bool ivalue_matches(const IValue& value, const Type& type) {
  using Tag = IValue::Tag;
  const Tag tag = value.tag();
  if (type.is_optional()) return tag == Tag::None || ivalue_matches(value, type.elem());
  if (type.is_list()) {
    const std::string elem = type.elem().boxed_kind();
    // A list size (int[2]) only says how many copies a bare int expands to, as in PyTorch:
    // lists of any length match (sum's `int[1]? dim` takes [0, 2], amax's `int[1] dim=[]` is empty).
    if (elem == "Tensor") return tag == Tag::TensorList;
    if (elem == "Tensor?") return tag == Tag::OptionalTensorList;
    if (elem == "int") return tag == Tag::IntList;
    if (elem == "float") return tag == Tag::DoubleList;
    if (elem == "bool") return tag == Tag::BoolList;
    if (elem == "Scalar")  // numbers of one kind box as their own list; Unbox takes them as Scalars
      return tag == Tag::ScalarList || tag == Tag::IntList || tag == Tag::DoubleList || tag == Tag::BoolList;
    if (elem == "Dimname") return tag == Tag::DimnameList;
    return false;
  }
  switch (type.base_ty()) {
    case BaseTy::Tensor: return tag == Tag::Tensor;
    case BaseTy::Int:
    case BaseTy::SymInt:
    case BaseTy::DeviceIndex:
    case BaseTy::Layout:
    case BaseTy::MemoryFormat:
    case BaseTy::QScheme: return tag == Tag::Int;
    case BaseTy::Float: return tag == Tag::Double || tag == Tag::Int;
    case BaseTy::Bool:
    case BaseTy::SymBool: return tag == Tag::Bool;
    case BaseTy::Str: return tag == Tag::String;
    case BaseTy::Scalar: return value.is_scalar_like();
    case BaseTy::ScalarType: return tag == Tag::ScalarType;
    case BaseTy::Device: return tag == Tag::Device;
    case BaseTy::Generator: return tag == Tag::Generator;
    case BaseTy::Storage: return tag == Tag::Storage;
    case BaseTy::Stream: return tag == Tag::Stream;
    case BaseTy::Dimname: return tag == Tag::Dimname;
    default: return false;  // GraphModule and DimVector: no boxed form (only None, through an optional)
  }
}

}  // namespace op
