#include "dispatch/schema.h"

#include <algorithm>
#include <set>

#include "core/error.h"
#include "dispatch/lexical.h"

namespace op {

namespace {

// Names that would compile to broken C++ as a function or parameter name.
const std::set<std::string>& cpp_keywords() {
  static const std::set<std::string> words = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
      "char", "char16_t", "char32_t", "char8_t", "class", "compl", "concept", "const", "consteval", "constexpr",
      "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
      "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
      "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
      "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
      "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
      "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
      "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq"};
  return words;
}

const char* const kAugmented[] = {"add", "sub", "mul", "div", "mod", "pow", "lshift", "rshift", "and", "xor", "or"};

bool is_identifier(const std::string& s) { return lexical::is_identifier(s); }

// __add__, __iadd__: a dunder's base has no underscores (as opgen's `^__([^_]+)__$`).
bool is_dunder(const std::string& name) {
  return name.size() > 4 && name.compare(0, 2, "__") == 0 && name.compare(name.size() - 2, 2, "__") == 0 &&
         name.find('_', 2) == name.size() - 2;
}

bool is_augmented(const std::string& base) {
  return std::find(std::begin(kAugmented), std::end(kAugmented), base) != std::end(kAugmented);
}

// rpartition / partition as in Python: split at the last / first occurrence.
bool rpartition(const std::string& s, const std::string& sep, std::string& head, std::string& tail) {
  size_t at = s.rfind(sep);
  if (at == std::string::npos) return false;
  head = s.substr(0, at);
  tail = s.substr(at + sep.size());
  return true;
}

std::vector<std::string> split_on(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t at; (at = s.find(sep, start)) != std::string::npos; start = at + 1) parts.push_back(s.substr(start, at - start));
  parts.push_back(s.substr(start));
  return parts;
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

AliasAnnotation parse_annotation(const std::string& text) {
  // SET, SET!, or either followed by " -> SET" or " -> *"
  std::string before = text, after;
  bool has_after = rpartition(text, " -> ", before, after);
  bool is_write = !before.empty() && before.back() == '!';
  std::string set = is_write ? before.substr(0, before.size() - 1) : before;
  OP_CHECK(lexical::is_alias_set(set) && (!has_after || after == "*" || lexical::is_alias_set(after)),
           "bad alias annotation '(", text, ")'; expected e.g. (a), (a!) or (a -> *)");
  AliasAnnotation a;
  a.alias_set = split_on(set, '|');
  a.is_write = is_write;
  if (has_after) a.alias_set_after = split_on(after, '|');
  return a;
}

// "Tensor(a!)" -> (Tensor, a!); other types carry no annotation.
std::pair<Type, std::optional<AliasAnnotation>> parse_annotated_type(const std::string& text) {
  // As opgen's `^Tensor\((.+)\)(.*)$`: anything else is parsed (and refused) as a plain type.
  size_t close = text.rfind(')');
  if (text.rfind("Tensor(", 0) != 0 || close == std::string::npos || close < 8) return {parse_type(text), std::nullopt};
  Type type = parse_type("Tensor" + text.substr(close + 1));
  std::string ty = type.str();
  OP_CHECK(ty == "Tensor" || ty == "Tensor?" || ty == "Tensor[]",
           "alias annotations are only allowed on Tensor, Tensor? and Tensor[], not '", text, "'");
  return {type, parse_annotation(text.substr(7, close - 7))};
}

std::string annotated_type_str(const Type& type, const std::optional<AliasAnnotation>& annotation) {
  std::string text = type.str();
  return annotation ? "Tensor(" + annotation->str() + ")" + text.substr(6) : text;
}

Argument parse_argument(const std::string& text) {
  size_t eq = text.find('=');
  std::string decl = eq == std::string::npos ? text : text.substr(0, eq);
  std::string type_text, name;
  OP_CHECK(rpartition(decl, " ", type_text, name) && !type_text.empty(), "argument '", text,
           "' needs a type and a name, e.g. 'Tensor self'");
  OP_CHECK(is_identifier(name), "argument name '", name, "' is not an identifier");
  OP_CHECK(!cpp_keywords().count(name), "argument name '", name, "' is a C++ keyword; rename it");
  auto [type, annotation] = parse_annotated_type(type_text);
  Argument arg{name, type, std::nullopt, annotation};
  if (eq != std::string::npos) {
    std::string value = text.substr(eq + 1);
    if (auto problem = default_problem(type, value)) fail(str("default of argument '", name, "': ", *problem));
    arg.default_text = value;
  }
  return arg;
}

Return parse_return(const std::string& text) {
  std::string type_text, name;
  bool named = rpartition(text, " ", type_text, name) &&
               !(type_text.size() >= 2 && type_text.compare(type_text.size() - 2, 2, "->") == 0);
  if (named) {
    OP_CHECK(is_identifier(name), "return name '", name, "' is not an identifier");
  } else {
    type_text = text;
  }
  auto [type, annotation] = parse_annotated_type(type_text);
  return Return{named ? std::optional<std::string>(name) : std::nullopt, type, annotation};
}

std::vector<Return> parse_returns(const std::string& text) {
  if (text.size() >= 2 && text.front() == '(' && text.back() == ')') {
    std::vector<std::string> items = split_top_level(text.substr(1, text.size() - 2));
    for (const std::string& item : items) OP_CHECK(!item.empty(), "empty return in '", text, "'");
    std::vector<Return> returns;
    for (const std::string& item : items) returns.push_back(parse_return(item));
    return returns;
  }
  OP_CHECK(!text.empty(), "missing return type after '->'; write '()' for no return");
  return {parse_return(text)};
}

std::vector<Argument> parse_arguments(const std::string& text) {
  std::vector<Argument> args;
  bool seen_star = false, seen_out = false;
  size_t after_star = 0;
  for (const std::string& item : split_top_level(text)) {
    if (item == "*") {
      OP_CHECK(!seen_star, "the keyword-only marker '*' may appear only once");
      seen_star = true;
      continue;
    }
    OP_CHECK(!item.empty(), "empty argument (two commas in a row?)");
    Argument arg = parse_argument(item);
    if (seen_star) {
      ++after_star;
      arg.kwarg_only = true;
      arg.is_out = arg.is_write();
      OP_CHECK(arg.is_out || !seen_out, "keyword-only argument '", arg.name,
               "' follows an out argument; out arguments (mutable keyword-only) must come last");
      seen_out = seen_out || arg.is_out;
    }
    args.push_back(std::move(arg));
  }
  OP_CHECK(!seen_star || after_star > 0, "'*' must be followed by at least one keyword-only argument");
  return args;
}

}  // namespace

std::vector<std::string> split_top_level(const std::string& text) {
  std::vector<std::string> parts;
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  auto trim = [](const std::string& s) {
    size_t a = s.find_first_not_of(" \t\n"), b = s.find_last_not_of(" \t\n");
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    if (quote) {
      if (ch == '\\')
        ++i;
      else if (ch == quote)
        quote = 0;
    } else if (ch == '"' || ch == '\'') {
      quote = ch;
    } else if (ch == '(' || ch == '[') {
      ++depth;
    } else if (ch == ')' || ch == ']') {
      --depth;
    } else if (ch == ',' && depth == 0) {
      parts.push_back(trim(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  OP_CHECK(!quote && depth == 0, "unbalanced brackets or quotes in '", text, "'");
  std::string tail = trim(text.substr(start));
  if (!tail.empty() || !parts.empty()) parts.push_back(tail);
  return parts;
}

std::string AliasAnnotation::str() const {
  std::string text = join(alias_set, "|") + (is_write ? "!" : "");
  return alias_set_after.empty() ? text : text + " -> " + join(alias_set_after, "|");
}

IValue Argument::default_value() const {
  OP_CHECK(default_text.has_value(), "argument '", name, "' has no default value");
  return default_ivalue(type, *default_text);
}

std::string Argument::str() const {
  std::string text = annotated_type_str(type, annotation) + " " + name;
  return default_text ? text + "=" + *default_text : text;
}

std::string Return::str() const {
  std::string text = annotated_type_str(type, annotation);
  return name ? text + " " + *name : text;
}

OperatorName OperatorName::parse(const std::string& text) {
  OperatorName result;
  std::string rest = text;
  size_t colons = text.find("::");
  if (colons != std::string::npos) {
    result.ns = text.substr(0, colons);
    rest = text.substr(colons + 2);
    OP_CHECK(is_identifier(result.ns), "namespace '", result.ns, "' in '", text, "' is not an identifier");
  }
  size_t dot = rest.find('.');
  result.name = rest.substr(0, dot);
  if (dot != std::string::npos) {
    result.overload = rest.substr(dot + 1);
    OP_CHECK(lexical::is_word(result.overload), "overload name '", result.overload, "' in '", text,
             "' must be letters, digits and '_'");
  }
  const std::string& name = result.name;
  OP_CHECK(is_identifier(name), "operator name '", name,
           "' is not an identifier (letters, digits and '_', not starting with a digit)");
  if (is_dunder(name)) {
    std::string base = name.substr(2, name.size() - 4);
    OP_CHECK(base[0] != 'i' || is_augmented(base.substr(1)), "dunder name '", name,
             "' starts with 'i' but is not an augmented assignment");
  } else {
    std::string base = name.back() == '_' ? name.substr(0, name.size() - 1) : name;
    OP_CHECK(!cpp_keywords().count(base), "operator name '", name, "' is a C++ keyword; rename it");
  }
  OP_CHECK(name.size() < 4 || name.compare(name.size() - 4, 4, "_out") != 0, "operator name '", name,
           "' ends in '_out', which is reserved; use an 'out' overload name instead");
  return result;
}

std::string OperatorName::str() const { return ns.empty() ? unqualified() : ns + "::" + unqualified(); }
std::string OperatorName::unqualified() const { return overload.empty() ? name : name + "." + overload; }

bool OperatorName::is_inplace() const {
  if (is_dunder(name)) return name[2] == 'i' && is_augmented(name.substr(3, name.size() - 5));
  return !name.empty() && name.back() == '_';
}

FunctionSchema FunctionSchema::parse(const std::string& text) {
  size_t open = text.find('(');
  size_t close = text.rfind(") -> ");
  OP_CHECK(open != std::string::npos && open > 0 && close != std::string::npos && close >= open, "schema '", text,
           "' must look like 'name.overload(ARGS) -> RETURNS'");
  // An optional "ns::" prefix, then exactly what opgen accepts as a name.
  std::string head = text.substr(0, open);
  size_t colons = head.find("::");
  std::string unqualified = colons == std::string::npos ? head : head.substr(colons + 2);
  OP_CHECK(lexical::is_qualified_name(unqualified), "operator name '", head,
           "' must be an identifier with an optional '.overload' (letters, digits, '_')");
  FunctionSchema schema;
  schema.name_ = OperatorName::parse(head);
  schema.arguments_ = parse_arguments(text.substr(open + 1, close - open - 1));
  schema.returns_ = parse_returns(text.substr(close + 5));
  std::string canonical = schema.str();
  OP_CHECK(canonical == text, "schema is not in canonical form; write it as '", canonical, "'");
  schema.check();
  return schema;
}

size_t FunctionSchema::num_positional() const {
  return static_cast<size_t>(std::count_if(arguments_.begin(), arguments_.end(), [](const Argument& a) { return !a.kwarg_only; }));
}

const Argument* FunctionSchema::find_argument(const std::string& name) const {
  for (const Argument& a : arguments_)
    if (a.name == name) return &a;
  return nullptr;
}

std::string FunctionSchema::str() const {
  std::vector<std::string> args;
  bool star = false;
  for (const Argument& a : arguments_) {
    if (a.kwarg_only && !star) {
      args.push_back("*");
      star = true;
    }
    args.push_back(a.str());
  }
  std::vector<std::string> rets;
  for (const Return& r : returns_) rets.push_back(r.str());
  std::string ret = join(rets, ", ");
  if (returns_.size() != 1) ret = "(" + ret + ")";
  return name_.str() + "(" + join(args, ", ") + ") -> " + ret;
}

FunctionSchema FunctionSchema::with_namespace(const std::string& ns) const {
  FunctionSchema copy = *this;
  copy.name_.ns = ns;
  return copy;
}

std::optional<size_t> FunctionSchema::written_argument_of(const Return& ret) const {
  if (!ret.is_write()) return std::nullopt;
  for (size_t i = 0; i < arguments_.size(); ++i)
    if (arguments_[i].is_write() && arguments_[i].annotation->alias_set == ret.annotation->alias_set) return i;
  return std::nullopt;
}

SchemaKind FunctionSchema::kind() const {
  if (name_.is_inplace()) return SchemaKind::Inplace;
  bool any_out = false;
  for (const Argument& a : arguments_) {
    if (a.is_out && a.name.rfind("_scratch_", 0) == 0) return SchemaKind::Scratch;
    any_out = any_out || a.is_out;
  }
  if (any_out) return SchemaKind::Out;
  bool after_self = std::none_of(arguments_.begin(), arguments_.end(), [](const Argument& a) { return !a.kwarg_only && a.name == "self"; });
  for (const Argument& a : arguments_) {
    if (a.kwarg_only) break;
    if (after_self && a.is_write()) return SchemaKind::Mutable;
    after_self = after_self || a.name == "self";
  }
  return SchemaKind::Functional;
}

// The well-formedness rules of opgen's FunctionSchema.check(), in the same order.
void FunctionSchema::check() const {
  std::vector<std::string> names, duplicates;
  for (const Argument& a : arguments_) names.push_back(a.name);
  for (const std::string& n : names)
    if (std::count(names.begin(), names.end(), n) > 1 && !std::count(duplicates.begin(), duplicates.end(), n))
      duplicates.push_back(n);
  std::sort(duplicates.begin(), duplicates.end());
  OP_CHECK(duplicates.empty(), "duplicate argument name(s): ", join(duplicates, ", "));
  std::set<std::string> return_names;
  for (const Return& r : returns_)
    if (r.name) OP_CHECK(return_names.insert(*r.name).second, "duplicate return names");

  std::vector<const Argument*> out, positional, post_self;
  const Argument* self = nullptr;
  for (const Argument& a : arguments_) {
    if (a.is_out) out.push_back(&a);
    if (!a.kwarg_only) positional.push_back(&a);
  }
  for (const Argument* a : positional)
    if (a->name == "self") self = a;
  bool past_self = self == nullptr;
  for (const Argument* a : positional) {
    if (past_self) post_self.push_back(a);
    past_self = past_self || a == self;
  }

  OP_CHECK(out.empty() || !name_.is_inplace(), "an in-place operator (trailing '_') cannot also have out= arguments");
  for (size_t i = 0; i < out.size() && i < returns_.size(); ++i)
    OP_CHECK(out[i]->annotation == returns_[i].annotation, "out argument '", out[i]->name,
             "' must be returned with the same alias annotation, in order");
  for (const Argument* a : post_self)
    for (const Return& r : returns_)
      OP_CHECK(!(a->is_write() && a->annotation == r.annotation), "mutable positional argument '", a->name,
               "' must not be returned");
  size_t mutable_returns = static_cast<size_t>(std::count_if(returns_.begin(), returns_.end(), [](const Return& r) { return r.is_write(); }));
  OP_CHECK(mutable_returns == 0 || mutable_returns == returns_.size(), "returns must be all mutable or all immutable");
  for (const Return& r : returns_) {
    if (!r.is_write()) continue;
    bool aliased = self && self->annotation == r.annotation;
    for (const Argument* a : out) aliased = aliased || a->annotation == r.annotation;
    OP_CHECK(aliased, "every mutable return must alias an out argument or 'self'; did you forget to make an out "
                      "argument keyword-only?");
  }
  if (!out.empty()) {
    bool all_tensor = std::all_of(out.begin(), out.end(), [](const Argument* a) { return a->type.str() == "Tensor"; });
    if (!all_tensor) {
      OP_CHECK(returns_.empty(), "out= operators with non-Tensor out arguments (e.g. Tensor[]) must return ()");
    } else {
      size_t real = static_cast<size_t>(std::count_if(out.begin(), out.end(), [](const Argument* a) { return a->name.rfind("_scratch_", 0) != 0; }));
      OP_CHECK(real == returns_.size(), "an out= operator must return each out argument (or nothing)");
    }
  }
  if (name_.is_inplace()) {
    OP_CHECK(self && self->is_write(), "an in-place operator needs a mutable 'self' argument, e.g. 'Tensor(a!) self'");
    if (self->type.str() == "Tensor") {
      OP_CHECK(returns_.size() == 1 && returns_[0].annotation == self->annotation,
               "an in-place operator must return self, e.g. '-> Tensor(", self->annotation->str(), ")'");
    } else {
      OP_CHECK(returns_.empty(), "an in-place operator whose self is not a Tensor must return ()");
    }
  }
  // dtype, layout, device, pin_memory as a keyword-only run: only functional operators take them.
  static const char* const kOptions[4][2] = {{"dtype", "ScalarType"}, {"layout", "Layout"}, {"device", "Device"}, {"pin_memory", "bool"}};
  std::vector<const Argument*> kwargs;
  for (const Argument& a : arguments_)
    if (a.kwarg_only && !a.is_out) kwargs.push_back(&a);
  bool has_options = false;
  for (size_t i = 0; i + 4 <= kwargs.size() && !has_options; ++i) {
    has_options = true;
    for (size_t j = 0; j < 4; ++j) {
      std::string ty = kwargs[i + j]->type.str();
      has_options = has_options && kwargs[i + j]->name == kOptions[j][0] &&
                    (ty == kOptions[j][1] || ty == std::string(kOptions[j][1]) + "?");
    }
  }
  SchemaKind k = kind();
  OP_CHECK(!has_options || k == SchemaKind::Functional,
           "tensor options (dtype, layout, device, pin_memory) are only allowed on functional operators");
  OP_CHECK(name_.overload.find("functional") == std::string::npos || k == SchemaKind::Functional,
           "overload names containing 'functional' are reserved for functional operators");
}

}  // namespace op
