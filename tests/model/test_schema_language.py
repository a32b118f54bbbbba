"""The schema language on its own: what parses (and prints back exactly), and what is refused, and why."""
import pytest

from opgen.errors import OpgenError, SchemaError
from opgen.model import FunctionSchema, OperatorName, SchemaKind
from opgen.model.schema import Argument
from opgen.model.types import parse_type

VALID = [
    ("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", SchemaKind.functional),
    ("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", SchemaKind.inplace),
    ("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)", SchemaKind.out),
    ("__iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", SchemaKind.inplace),
    ("__and__.Scalar(Tensor self, Scalar other) -> Tensor", SchemaKind.functional),
    ("max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)", SchemaKind.functional),
    ("split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]", SchemaKind.functional),
    ("_foreach_add_.List(Tensor(a!)[] self, Tensor[] other, *, Scalar alpha=1) -> ()", SchemaKind.inplace),
    ("conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0, "
     "SymInt[2] dilation=1, SymInt groups=1) -> Tensor", SchemaKind.functional),
    ("index.Tensor(Tensor self, Tensor?[] indices) -> Tensor", SchemaKind.functional),
    ("cat.names_out(Tensor[] tensors, Dimname dim, *, Tensor(a!) out) -> Tensor(a!)", SchemaKind.out),
    ("var_mean.correction_out(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False, "
     "Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))", SchemaKind.out),
    ('foo(Tensor self, str reduce="mean", float eps=1e-05, float lo=-inf, ScalarType? dtype=None, '
     "MemoryFormat memory_format=contiguous_format, int reduction=Mean) -> Tensor", SchemaKind.functional),
    ("empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
     "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor", SchemaKind.functional),
    ("foo(Generator? generator, Storage source, Stream stream, QScheme q, int[]? sizes=None, Device? d=None) -> "
     "(Tensor, int, float, bool, str, SymInt[])", SchemaKind.functional),
    ("_fused_foo(Tensor self, Tensor(a!) running_mean) -> Tensor", SchemaKind.mutable),
    ("_fused_foo_functional(Tensor self, Tensor running_mean) -> (Tensor, Tensor running_mean_out)",
     SchemaKind.functional),
    ("resize_(Tensor(a!) self, SymInt[] size) -> Tensor(a!)", SchemaKind.inplace),
    ("_amp_foreach_non_finite_check_and_unscale_(Tensor(a!)[] self, Tensor(b!) found_inf, Tensor inv_scale) -> ()",
     SchemaKind.inplace),
    ("set_.source_Storage(Tensor(a!) self, Storage source) -> Tensor(a!)", SchemaKind.inplace),
]


@pytest.mark.parametrize("schema, kind", VALID, ids=[s.split("(")[0] for s, _ in VALID])
def test_valid_schema_round_trips_and_has_its_kind(schema, kind):
    parsed = FunctionSchema.parse(schema)
    assert str(parsed) == schema
    assert parsed.kind() is kind
    assert FunctionSchema.parse(str(parsed)) == parsed


INVALID = [
    ("foo(Tensor self, int[2 x) -> Tensor", "unbalanced brackets or quotes"),
    ('foo(Tensor self, str s="x) -> Tensor', "unbalanced brackets or quotes"),
    ("foo(Tensor(A) self) -> Tensor", "bad alias annotation '(A)'; expected e.g. (a), (a!) or (a -> *)"),
    ("foo(Tensor(a)?[] self) -> Tensor", "alias annotations are only allowed on Tensor, Tensor? and Tensor[]"),
    ("foo(Tensor) -> Tensor", "argument 'Tensor' needs a type and a name"),
    ("foo(Tensor 1x) -> Tensor", "argument name '1x' is not an identifier"),
    ("foo(Tensor self, int x=) -> Tensor", "default of argument 'x': '' is not a valid int value"),
    ("foo(Tensor self) -> (Tensor values, Tensor 1x)", "return name '1x' is not an identifier"),
    ("foo(Tensor self, *, int a, *, int b) -> Tensor", "the keyword-only marker '*' may appear only once"),
    ("foo(Tensor self, , int a) -> Tensor", "empty argument (two commas in a row?)"),
    ("foo(Tensor self, *, Tensor(a!) out, int k) -> Tensor(a!)", "keyword-only argument 'k' follows an out argument"),
    ("foo(Tensor self, *) -> Tensor", "'*' must be followed by at least one keyword-only argument"),
    ("1foo(Tensor self) -> Tensor", "operator name '1foo' must be an identifier with an optional '.overload'"),
    ("__ifoo__(Tensor(a!) self) -> Tensor(a!)", "dunder name '__ifoo__' starts with 'i' but is not an augmented"),
    ("foo_functional_(Tensor(a!) self) -> Tensor(a!)", "a _functional name cannot be dunder or in-place"),
    ("foo.bar-baz(Tensor self) -> Tensor", "operator name 'foo.bar-baz' must be an identifier with an optional '.overload'"),
    ("foo -> Tensor", "must look like 'name.overload(ARGS) -> RETURNS'"),
    ("(Tensor self) -> Tensor", "must look like 'name.overload(ARGS) -> RETURNS'"),
    ("foo(Tensor self)->Tensor", "must look like 'name.overload(ARGS) -> RETURNS'"),
    ("foo(Tensor self) -> (Tensor a, Tensor a)", "duplicate return names"),
    ("foo_(Tensor(a!) self, *, Tensor(b!) out) -> Tensor(b!)", "an in-place operator (trailing '_') cannot also have out="),
    ("foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(b!)", "out argument 'out' must be returned with the same alias"),
    ("foo(Tensor self, Tensor(a!) buf) -> Tensor(a!)", "mutable positional argument 'buf' must not be returned"),
    ("foo.out(Tensor self, *, Tensor(a!) out) -> (Tensor(a!), Tensor)", "returns must be all mutable or all immutable"),
    ("foo.out(Tensor self, *, Tensor(a!)[] out) -> Tensor(a!)[]", "non-Tensor out arguments (e.g. Tensor[]) must return ()"),
    ("foo_(Tensor self) -> Tensor", "an in-place operator needs a mutable 'self' argument"),
    ("foo_(Tensor(a!)[] self) -> Tensor(a!)[]", "an in-place operator whose self is not a Tensor must return ()"),
    ("foo_.functional(Tensor(a!) self) -> Tensor(a!)", "overload names containing 'functional' are reserved"),
    ("foo(Tensor self) -> (Tensor, )", "empty return in '(Tensor, )'"),
    ("foo(Tensor self) -> ", "missing return type after '->'; write '()' for no return"),
    ("foo(int[0] x) -> Tensor", "list size must be a positive number without leading zeros in 'int[0]'"),
    ("foo(int[02] x) -> Tensor", "list size must be a positive number without leading zeros in 'int[02]'"),
    ("foo(Tensor self) -> Tensr", "unknown type 'Tensr'"),
]


@pytest.mark.parametrize("schema, fragment", INVALID, ids=[f for _, f in INVALID])
def test_invalid_schema_is_refused_with_a_reason(schema, fragment):
    with pytest.raises(SchemaError) as info:
        FunctionSchema.parse(schema)
    assert isinstance(info.value, OpgenError)
    (diagnostic,) = info.value.diagnostics
    assert diagnostic.location is None  # the loader adds FILE:LINE of the func: key
    assert fragment in diagnostic.message


@pytest.mark.parametrize("argument", [
    "int x=-1", "SymInt x=0", "float x=inf", "float x=-inf", "float x=nan", "float x=.5", "float x=1e-05",
    "Scalar x=True", "Scalar x=0.5", "int[] x=[]", "int[2] x=[0, 1]", "int[2] x=1", "SymInt[] x=[-1]",
    "str? s=None", "Tensor? t=None", "ScalarType dtype=float", "int reduction=Mean", "str s='x'", 'str s="a\\"b"',
    "bool b=False", "Layout l=strided", "MemoryFormat m=channels_last", "float[]? w=None", "bool[3] mask=[True, True, True]",
])
def test_default_that_fits_its_type_is_accepted(argument):
    assert str(Argument.parse(argument)) == argument


@pytest.mark.parametrize("argument, problem", [
    ("int x=1.5", "'1.5' is not a valid int value"),
    ("bool b=yes", "'yes' is not a valid bool value"),
    ("bool b=true", "'true' is not a valid bool value"),
    ("Tensor t=None", "None is only a valid default for optional types; write Tensor? instead of Tensor"),
    ("str s=mean", "'mean' is not a valid str value"),
    ("float f=abc", "'abc' is not a valid float value"),
    ("int[] x=[1, 2.5]", "'2.5' is not a valid int value"),
    ("int[] x=1.5", "'1.5' is not a valid int value"),
    ("bool[2] x=True", "'True' is not a list; write e.g. [] or [0, 1]"),
    ("Layout l=diagonal", "'diagonal' is not a valid Layout value"),
    ("ScalarType dtype=float32", "'float32' is not a valid ScalarType value"),
    ("Tensor[] t=[1]", "'1' is not a valid Tensor value"),
])
def test_default_that_does_not_fit_its_type_is_refused(argument, problem):
    name = argument.split("=")[0].split()[-1]
    with pytest.raises(SchemaError) as info:
        Argument.parse(argument)
    assert info.value.diagnostics[0].message == f"default of argument '{name}': {problem}"


@pytest.mark.parametrize("text", ["Tensor", "Tensor?", "Tensor[]", "Tensor?[]", "int[2]", "SymInt[]?", "float[3]?"])
def test_type_round_trips(text):
    assert str(parse_type(text)) == text


@pytest.mark.parametrize("text, base, inplace, dunder, overload", [
    ("add", "add", False, False, ""),
    ("add_.Tensor", "add", True, False, "Tensor"),
    ("__iand__.Scalar", "and", True, True, "Scalar"),
    ("__and__", "and", False, True, ""),
    ("_fused_functional.out", "_fused", False, False, "out"),
])
def test_operator_name_parts(text, base, inplace, dunder, overload):
    name = OperatorName.parse(text)
    assert (name.name.base, name.name.inplace, name.name.dunder_method, name.overload_name) == (base, inplace, dunder, overload)
    assert str(name) == text
