// The C++ schema parser: the same language, canonical forms and errors as opgen's.
#include "dispatch/lexical.h"
#include "dispatch/schema.h"
#include "tests/harness.h"

using namespace op;

TEST(schema_round_trips) {
  const char* schemas[] = {
      "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
      "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
      "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
      "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
      "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
      "aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
      "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
      "aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
      "aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
      "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0) -> Tensor",
      "aten::_foreach_add_.List(Tensor(a!)[] self, Tensor[] other, *, Scalar alpha=1) -> ()",
      "aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
      "aten::bernoulli(Tensor self, *, Generator? generator=None) -> Tensor",
      "aten::__iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
      "aten::native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> "
      "(Tensor, Tensor, Tensor)",
      "nll(Tensor self, int reduction=Mean, float eps=1e-05, str mode=\"sum\") -> Tensor",
  };
  for (const char* text : schemas) CHECK_EQ(FunctionSchema::parse(text).str(), std::string(text));
}

TEST(schema_structure) {
  FunctionSchema s = FunctionSchema::parse("ns::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
  CHECK_EQ(s.name().ns, "ns");
  CHECK_EQ(s.name().name, "add");
  CHECK_EQ(s.name().overload, "out");
  CHECK_EQ(s.arguments().size(), size_t{4});
  CHECK_EQ(s.num_positional(), size_t{2});
  CHECK(s.arguments()[2].kwarg_only && !s.arguments()[2].is_out);
  CHECK(s.arguments()[3].is_out && s.arguments()[3].is_write());
  CHECK(s.kind() == SchemaKind::Out);
  CHECK(s.returns()[0].is_write());
  CHECK(s.arguments()[2].default_value().to_scalar() == Scalar(1));
  CHECK(FunctionSchema::parse("ns::relu_(Tensor(a!) self) -> Tensor(a!)").kind() == SchemaKind::Inplace);
  FunctionSchema m = FunctionSchema::parse("ns::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)");
  CHECK_EQ(*m.returns()[1].name, "indices");
  CHECK_EQ(m.arguments()[1].type.boxed_kind(), "int");
}

TEST(schema_defaults_become_ivalues) {
  FunctionSchema s = FunctionSchema::parse(
      "ns::f(Tensor a, int[2] stride=1, int[] pad=[0, 1], float eps=1e-05, float big=-inf, bool b=True, "
      "Scalar s=2.5, Scalar t=False, str mode='max', ScalarType dt=long, int r=Mean, Tensor? bias=None, "
      "MemoryFormat mf=contiguous_format, Layout l=strided, int? n=None, Tensor[] ts=[]) -> Tensor");
  auto d = [&](const char* name) { return s.find_argument(name)->default_value(); };
  CHECK_EQ(d("stride").to_int_list(), (std::vector<int64_t>{1, 1}));
  CHECK_EQ(d("pad").to_int_list(), (std::vector<int64_t>{0, 1}));
  CHECK_EQ(d("eps").to_double(), 1e-05);
  CHECK(d("big").to_double() < -1e308);
  CHECK_EQ(d("b").to_bool(), true);
  CHECK(d("s").to_scalar() == Scalar(2.5));
  CHECK(d("t").to_scalar() == Scalar(false));
  CHECK_EQ(d("mode").to_str(), "max");
  CHECK_EQ(d("dt").to_scalar_type(), ScalarType::Int64);
  CHECK_EQ(d("r").to_int(), 1);
  CHECK(d("bias").is_none());
  CHECK_EQ(d("mf").to_int(), 0);
  CHECK_EQ(d("l").to_int(), 0);
  CHECK(d("n").is_none());
  CHECK(d("ts").to_tensor_list().empty());
  CHECK_THROWS(s.find_argument("a")->default_value(), "has no default");
  FunctionSchema h = FunctionSchema::parse("ns::g(Tensor a, ScalarType dt=half) -> Tensor");
  CHECK_THROWS(h.find_argument("dt")->default_value(), "unsupported dtype 'half'");
}

TEST(schema_errors_match_opgen) {
  struct Case {
    const char* schema;
    const char* message;
  } cases[] = {
      {"ns::f(Tensor self) -> Tensor ", "return name '' is not an identifier"},
      {"ns::f(Tensor  self) -> Tensor", "unknown type 'Tensor '"},
      {"ns::f(Tensor self) -> (Tensor)", "not in canonical form; write it as 'ns::f(Tensor self) -> Tensor'"},
      {"ns::f(Tensor self)", "must look like"},
      {"ns::f(Tensr self) -> Tensor", "unknown type 'Tensr'"},
      {"ns::f(Tensor self, Tensor self) -> Tensor", "duplicate argument name(s): self"},
      {"ns::f(Tensor self, *) -> Tensor", "'*' must be followed"},
      {"ns::f(Tensor self, *, Tensor(a!) out, int x) -> Tensor(a!)", "follows an out argument"},
      {"ns::f(int[0] x) -> Tensor", "positive number"},
      {"ns::f(int x=1.5) -> Tensor", "'1.5' is not a valid int value"},
      {"ns::f(int x=None) -> Tensor", "None is only a valid default for optional types"},
      {"ns::f(int(a) x) -> Tensor", "unknown type"},
      {"ns::f(Tensor(A) x) -> Tensor", "bad alias annotation"},
      {"ns::f(Tensor class) -> Tensor", "C++ keyword"},
      {"ns::f_out(Tensor x) -> Tensor", "reserved"},
      {"ns::f.a-b(Tensor x) -> Tensor", "operator name 'ns::f.a-b' must be an identifier with an optional '.overload'"},
      {"ns::f_(Tensor self) -> Tensor", "mutable 'self'"},
      {"ns::f_(Tensor(a!) self) -> Tensor", "must return self"},
      {"ns::f.out(Tensor self, *, Tensor(a!) out) -> Tensor", "same alias annotation"},
      {"ns::f(Tensor self, Tensor(a!) x) -> Tensor(a!)", "must not be returned"},
      {"1ns::f(Tensor self) -> Tensor", "namespace '1ns'"},
      {"ns::f(Tensor self, int[) -> Tensor", "unbalanced"},
  };
  for (const Case& c : cases) CHECK_THROWS(FunctionSchema::parse(c.schema), c.message);
}

TEST(schema_types_match_ivalues) {
  TensorBase t = TensorBase::zeros({1});
  CHECK(ivalue_matches(IValue(t), parse_type("Tensor")));
  CHECK(ivalue_matches(IValue(), parse_type("Tensor?")));
  CHECK(!ivalue_matches(IValue(), parse_type("Tensor")));
  CHECK(ivalue_matches(IValue(3), parse_type("float")));
  CHECK(!ivalue_matches(IValue(3.0), parse_type("int")));
  CHECK(ivalue_matches(IValue(std::vector<int64_t>{1, 2}), parse_type("int[2]")));
  CHECK(ivalue_matches(IValue(std::vector<int64_t>{1}), parse_type("int[2]")));  // the size is for bare ints
  CHECK(ivalue_matches(IValue(true), parse_type("Scalar")));
  CHECK(ivalue_matches(IValue(std::vector<std::optional<TensorBase>>{t}), parse_type("Tensor?[]")));
  CHECK(ivalue_matches(IValue(0), parse_type("MemoryFormat?")));
  CHECK(!ivalue_matches(IValue(0), parse_type("Generator?")));
  CHECK_EQ(parse_type("SymInt[]?").boxed_kind(), "int[]?");
  // PyTorch's other types
  CHECK(ivalue_matches(IValue(std::vector<Scalar>{Scalar(1)}), parse_type("Scalar[]")));
  CHECK(ivalue_matches(IValue(std::vector<double>{0.5}), parse_type("Scalar[]")));  // numbers of one kind
  CHECK(ivalue_matches(IValue(t.storage()), parse_type("Storage")));
  CHECK(ivalue_matches(IValue(Stream()), parse_type("Stream")));
  CHECK(ivalue_matches(IValue(Dimname("N")), parse_type("Dimname")));
  CHECK(!ivalue_matches(IValue("N"), parse_type("Dimname")));
  CHECK(ivalue_matches(IValue(std::vector<Dimname>{Dimname("N")}), parse_type("Dimname[]")));
  CHECK(ivalue_matches(IValue(2), parse_type("QScheme")));
  CHECK(ivalue_matches(IValue(0), parse_type("DeviceIndex")));
  FunctionSchema s = FunctionSchema::parse("ns::q(Tensor a, QScheme q=per_channel_symmetric, Scalar[] s=[1, 2.5]) -> Tensor");
  CHECK_EQ(s.find_argument("q")->default_value().to_int(), 3);
  CHECK(s.find_argument("s")->default_value().to_scalar_list() == (std::vector<Scalar>{Scalar(1), Scalar(2.5)}));
}

// The parser's token checks (dispatch/lexical.h), case by case: they replaced regular
// expressions, so each accepts exactly what the expression did.
TEST(lexical_token_shapes) {
  using namespace op::lexical;
  CHECK(is_identifier("add") && is_identifier("_foo9") && !is_identifier("9a") && !is_identifier("") &&
        !is_identifier("a-b"));
  CHECK(is_word("9a") && is_word("Tensor_mode") && !is_word("") && !is_word("a.b"));
  CHECK(is_qualified_name("add.Tensor") && is_qualified_name("add") && is_qualified_name("add.9") &&
        !is_qualified_name("add.") && !is_qualified_name(".Tensor") && !is_qualified_name("a.b.c"));
  CHECK(is_int_literal("0") && is_int_literal("-12") && !is_int_literal("-") && !is_int_literal("1.0") &&
        !is_int_literal(""));
  const char* floats[] = {"1", "-1", "1.", "1.5", ".5", "-.5", "1e-05", "2E+3", "1.5e3", "inf", "-inf", "nan"};
  for (const char* text : floats) CHECK(is_float_literal(text));
  const char* not_floats[] = {"", ".", "-", "e5", "1e", "1e+", "--1", "-nan", "1.5.2", "infinity", "1f"};
  for (const char* text : not_floats) CHECK(!is_float_literal(text));
  CHECK(is_quoted_string("\"sum\"") && is_quoted_string("'a'") && is_quoted_string("\"\"") &&
        is_quoted_string("\"a\\\"b\""));
  CHECK(!is_quoted_string("\"a") && !is_quoted_string("'a\"") && !is_quoted_string("\"a\"b\"") &&
        !is_quoted_string("\"a\\\"") && !is_quoted_string("\""));
  CHECK(is_alias_set("a") && is_alias_set("a|b") && !is_alias_set("a|") && !is_alias_set("A") &&
        !is_alias_set("ab") && !is_alias_set(""));
}

TEST(alias_annotations_parse_without_regex) {
  auto annotation_of = [](const std::string& text) { return FunctionSchema::parse(text).arguments()[0].annotation; };
  auto write = annotation_of("f(Tensor(a!) self) -> Tensor(a!)");
  CHECK(write && write->is_write && write->alias_set == std::vector<std::string>{"a"} && write->alias_set_after.empty());
  auto after = annotation_of("f(Tensor(a -> *) self) -> Tensor(a)[]");
  CHECK(after && !after->is_write && after->alias_set_after == std::vector<std::string>{"*"});
  auto both = annotation_of("f(Tensor(a|b! -> b) self) -> Tensor(a)");
  CHECK(both && both->is_write && both->alias_set == (std::vector<std::string>{"a", "b"}) &&
        both->alias_set_after == std::vector<std::string>{"b"});
  const char* bad[] = {"f(Tensor(A) self) -> Tensor", "f(Tensor(a -> ) self) -> Tensor", "f(Tensor(a!!) self) -> Tensor",
                       "f(Tensor(a|) self) -> Tensor"};
  for (const char* text : bad) CHECK_THROWS(FunctionSchema::parse(text), "bad alias annotation");
}
