// Function schemas: `ns::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor`.
// The same language and rules as opgen/model/schema.py; parse() accepts only canonical text,
// so str(parse(s)) == s and the C++ and Python sides cannot disagree about a schema.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dispatch/schema_type.h"

namespace op {

// `(a)`, `(a!)`, `(a|b -> *)` after Tensor.
struct AliasAnnotation {
  std::vector<std::string> alias_set;
  bool is_write = false;
  std::vector<std::string> alias_set_after;

  std::string str() const;
  bool operator==(const AliasAnnotation& o) const {
    return alias_set == o.alias_set && is_write == o.is_write && alias_set_after == o.alias_set_after;
  }
};

struct Argument {
  std::string name;
  Type type;
  std::optional<std::string> default_text;  // as written, e.g. "1", "[0, 1]", "None"
  std::optional<AliasAnnotation> annotation;
  bool kwarg_only = false;
  bool is_out = false;  // mutable keyword-only: an out= argument

  bool is_write() const { return annotation && annotation->is_write; }
  bool has_default() const { return default_text.has_value(); }
  IValue default_value() const;  // throws op::Error when there is none or it is unsupported
  std::string str() const;
};

struct Return {
  std::optional<std::string> name;
  Type type;
  std::optional<AliasAnnotation> annotation;

  bool is_write() const { return annotation && annotation->is_write; }
  std::string str() const;
};

// `ns::name.overload`; the namespace and the overload may be empty.
struct OperatorName {
  std::string ns;
  std::string name;
  std::string overload;

  static OperatorName parse(const std::string& text);  // validates like opgen
  std::string str() const;            // "ns::name.overload"
  std::string unqualified() const;    // "name.overload"
  bool is_inplace() const;            // add_, __iadd__
  bool operator==(const OperatorName& o) const { return ns == o.ns && name == o.name && overload == o.overload; }
  bool operator<(const OperatorName& o) const { return str() < o.str(); }
};

enum class SchemaKind { Functional, Inplace, Out, Mutable, Scratch };

class FunctionSchema {
 public:
  // Throws op::Error with a message in opgen's words when `text` is not a valid, canonical schema.
  static FunctionSchema parse(const std::string& text);

  const OperatorName& name() const { return name_; }
  const std::vector<Argument>& arguments() const { return arguments_; }  // positional, kwarg-only, out
  const std::vector<Return>& returns() const { return returns_; }
  size_t num_positional() const;
  const Argument* find_argument(const std::string& name) const;
  SchemaKind kind() const;
  // The argument a return aliases through a write annotation (`-> Tensor(a!)`), if any.
  std::optional<size_t> written_argument_of(const Return& ret) const;
  std::string str() const;
  FunctionSchema with_namespace(const std::string& ns) const;

 private:
  void check() const;
  OperatorName name_;
  std::vector<Argument> arguments_;
  std::vector<Return> returns_;
};

// Splits on commas outside brackets, parentheses and quotes.
std::vector<std::string> split_top_level(const std::string& text);

}  // namespace op
