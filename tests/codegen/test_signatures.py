"""The C++ conventions of opgen/api: types, defaults, free functions and method overloads."""
import pytest

from opgen.api import cpp, dispatcher, structured
from opgen.api.bindings import params
from opgen.api.defaults import cpp_default
from opgen.model.loader import build_model
from opgen.model.types import parse_type
from opgen.yamlio import load_located


def model_of(yaml_text):
    return build_model(load_located(yaml_text.encode(), "test.yaml"), "test.yaml", frozenset({"core", "pointwise"}))


@pytest.mark.parametrize("value, type_text, expected", [
    ("None", "Tensor?", "std::nullopt"),
    ("False", "bool", "false"),
    ("[]", "int[]", "{}"),
    ("[0,1]", "int[]", "{0, 1}"),
    ("1", "SymInt[2]", "{1, 1}"),
    ("long", "ScalarType?", "ScalarType::Int64"),
    ("contiguous_format", "MemoryFormat", "MemoryFormat::Contiguous"),
    ("Mean", "int", "1"),
    ("'fro'", "str", '"fro"'),
    ('"a\\"b"', "str", '"a\\"b"'),
    ("1e-05", "float", "1e-05"),
])
def test_defaults(value, type_text, expected):
    assert cpp_default(value, parse_type(type_text)) == expected


SOURCE = """
- func: foo.Tensor(Tensor self, Tensor other, int[1]? dim=None, *, Scalar alpha=1) -> Tensor
  variants: function, method
  dispatch:
    CPU: foo
- func: foo_.Tensor(Tensor(a!) self, Tensor other, int[1]? dim=None, *, Scalar alpha=1) -> Tensor(a!)
  variants: method
  dispatch:
    CPU: foo_
- func: foo.out(Tensor self, Tensor other, int[1]? dim=None, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU: foo_out
- func: bar(Tensor self, int x=0, Tensor? t=None) -> (Tensor, Tensor)
  cpp_no_default_args: ['x']
"""


@pytest.fixture(scope="module")
def fns():
    return model_of(SOURCE).by_name


def by(fns, name):
    return next(f for n, f in fns.items() if str(n) == name)


def test_dispatcher_convention(fns):
    foo_, out, bar = by(fns, "foo_.Tensor"), by(fns, "foo.out"), by(fns, "bar")
    assert dispatcher.signature_type(foo_) == "TensorBase&(TensorBase&, const TensorBase&, std::optional<IntArrayRef>, const Scalar&)"
    assert dispatcher.signature_type(out) == "TensorBase&(const TensorBase&, const TensorBase&, std::optional<IntArrayRef>, const Scalar&, TensorBase&)"
    assert dispatcher.signature_type(bar) == "std::tuple<TensorBase, TensorBase>(const TensorBase&, int64_t, const std::optional<TensorBase>&)"
    assert dispatcher.handle_name(foo_) == "foo__Tensor"
    assert dispatcher.qualified_name(out) == "aten::foo.out"


def test_out_functions_put_out_first_and_keep_defaults(fns):
    out_fn, outf = cpp.functions(by(fns, "foo.out"))
    assert (out_fn.name, outf.name) == ("foo_out", "foo_outf")
    assert params(out_fn.params) == ("TensorBase& out, const TensorBase& self, const TensorBase& other, "
                                     "std::optional<IntArrayRef> dim = std::nullopt, const Scalar& alpha = 1")
    assert "=" not in params(outf.params)
    assert out_fn.call_args == outf.call_args == ("self", "other", "dim", "alpha", "out")


def test_cpp_no_default_args_and_trailing_rule(fns):
    (bar,) = cpp.functions(by(fns, "bar"))
    assert params(bar.params) == "const TensorBase& self, int64_t x, const std::optional<TensorBase>& t = std::nullopt"


def test_methods_expand_defaults_into_overloads(fns):
    overloads = cpp.methods(by(fns, "foo.Tensor"))
    assert [params(m.params) for m in overloads] == [
        "const TensorBase& other",
        "const TensorBase& other, std::optional<IntArrayRef> dim",
        "const TensorBase& other, std::optional<IntArrayRef> dim, const Scalar& alpha",
    ]
    assert overloads[0].call_args == ("*this", "other", "std::nullopt", "1")
    # Methods return op::Tensor, so calls chain; in-place ones return *this, not the handle's TensorBase&.
    assert overloads[0].returns == "Tensor" and not overloads[0].returns_self
    inplace = cpp.methods(by(fns, "foo_.Tensor"))
    assert inplace[0].returns == "Tensor&" and inplace[0].call_args[0] == "const_cast<Tensor&>(*this)"
    assert inplace[0].returns_self
    assert cpp.methods(by(fns, "foo.out")) == [] and cpp.methods(by(fns, "bar")) == []


def test_structured_names():
    model = model_of("""
- func: baz(Tensor self) -> Tensor
  structured_delegate: baz.out
- func: baz.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CPU: baz_out
""")
    out = by(model.by_name, "baz.out")
    assert structured.impl_class("baz_out") == "structured_baz_out"
    assert structured.meta_base(out) == "impl::MetaBase"
    assert params(structured.meta_bindings(out)) == "const TensorBase& self"
    assert params(structured.impl_bindings(out)) == "const TensorBase& self, const TensorBase& out"


def test_headers_of_runtime_types_beside_the_tensor():
    from opgen.api import types
    assert types.headers([parse_type("Tensor"), parse_type("Generator?"), parse_type("Storage")]) == []
    assert types.headers([parse_type("Stream"), parse_type("Dimname[]?"), parse_type("QScheme"), parse_type("Stream")]) == [
        "core/dimname.h", "core/qscheme.h", "core/stream.h"]


def test_generated_headers_include_the_types_their_schemas_use():
    from opgen.gen.engine.config import CodegenConfig
    from opgen.gen.group import GroupCodegen
    model = model_of("""
- func: record_stream(Tensor(a!) self, Stream s) -> ()
  dispatch:
    CPU: record_stream_cpu
- func: plain(Tensor self) -> Tensor
  dispatch:
    CPU: plain_cpu
""")
    files = {g.name: GroupCodegen(g, model.indices, CodegenConfig()).render() for g in model.operator_groups}
    assert '#include "core/stream.h"' in files["record_stream"]["ops/record_stream_ops.h"]
    assert '#include "core/stream.h"' in files["record_stream"]["ops/record_stream_native.h"]
    assert "core/stream.h" not in files["plain"]["ops/plain_ops.h"]
