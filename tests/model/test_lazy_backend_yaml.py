"""Lazy backend yaml (PyTorch's ts_native_functions.yaml format): ir_gen, non_native, IR node classes.

Rule cases mark the line the error must point at with a trailing ``#<`` comment.
"""
import json
import os

import pytest

from opgen import cli
from opgen.errors import OpgenError
from opgen.model import DispatchKey, OperatorName, parse_backend_yaml
from opgen.model.lazy_ir import PROPERTIES, ir_class_name

MARK = "#<"
NATIVE_FUNCTIONS = """
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  dispatch:
    CPU: add
- func: relu(Tensor self) -> Tensor
  dispatch:
    CPU: relu
- func: sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
  dispatch:
    CPU: sum_dim
- func: view_copy(Tensor self, SymInt[] size) -> Tensor
  dispatch:
    CPU: view_copy
- func: _log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor
  dispatch:
    CPU: log_softmax
"""
HEADER = "# lazy\nbackend: Lazy\ncpp_namespace: torch::lazy\n"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def model(yaml_files):
    return yaml_files.load(NATIVE_FUNCTIONS)


def _expected_line(text: str) -> int:
    lines = [i for i, line in enumerate(text.splitlines(), 1) if line.rstrip().endswith(MARK)]
    assert len(lines) == 1, "each case marks exactly one line"
    return lines[0]


CASES = [
    pytest.param(HEADER + "ir_gen:\n  - rellu  #<\n", "native_functions.yaml; did you mean 'relu'?",
                 id="ir-gen-unknown-operator"),
    pytest.param(HEADER + "ir_gen:\n  - relu\n  - relu  #<\n", "relu is listed twice (first under 'ir_gen' at line 5)",
                 id="ir-gen-twice"),
    pytest.param(HEADER + "full_codegen:\n  - relu\nir_gen:\n  - relu  #<\n",
                 "relu is listed twice (first under 'full_codegen' at line 5); full_codegen already generates its IR node",
                 id="ir-gen-and-full-codegen"),
    pytest.param(HEADER + "full_codegen:\n  - relu\nsupported:\n  - relu  #<\n", "relu is listed twice (first under 'full_codegen'",
                 id="full-codegen-and-supported"),
    pytest.param(HEADER + "non_native: scalar  #<\n", "'non_native' must be a list of entries", id="non-native-not-a-list"),
    pytest.param(HEADER + "non_native:\n  - scalar(Scalar value) -> Tensor  #<\n",
                 "a 'non_native' entry must be a mapping with 'func:', got str", id="non-native-entry-not-a-mapping"),
    pytest.param(HEADER + "non_native:\n  - opkind: ltc_cast  #<\n", "a 'non_native' entry needs 'func:'", id="non-native-missing-func"),
    pytest.param(HEADER + "non_native:\n  - func: cast(Tensor input -> Tensor  #<\n", "'cast(Tensor input -> Tensor' is not a function schema",
                 id="non-native-malformed-func"),
    pytest.param(HEADER + "non_native:\n  - func: [cast]  #<\n", "'func' must be a schema string, got a list", id="non-native-func-not-a-string"),
    pytest.param(HEADER + "non_native:\n  - func: sink(Tensor input) -> ()  #<\n", "non_native sink returns nothing",
                 id="non-native-no-returns"),
    pytest.param(HEADER + "non_native:\n  - func: cast(Tensor input) -> Tensor\n    opkind: ltc cast  #<\n",
                 "'opkind' must be an op symbol", id="non-native-bad-opkind"),
    pytest.param(HEADER + "non_native:\n  - func: cast(Tensor input) -> Tensor\n    propertes: [ShapeCompute]  #<\n",
                 "unknown key 'propertes' in a 'non_native' entry; did you mean 'properties'?", id="non-native-unknown-key"),
    pytest.param(HEADER + "non_native:\n  - func: cast(Tensor input) -> Tensor\n    properties:\n      - ShapeComput  #<\n",
                 "unknown property 'ShapeComput'; did you mean 'ShapeCompute'?", id="non-native-unknown-property"),
    pytest.param(HEADER + "non_native:\n  - func: cast(Tensor input) -> Tensor\n    properties:\n      - Fast  #<\n",
                 "unknown property 'Fast'; known: CanBeReused", id="non-native-unknown-property-far"),
    pytest.param(HEADER + "non_native:\n  - func: cast(Tensor input) -> Tensor\n    properties: Lower  #<\n",
                 "'properties' must be a list such as [ShapeCompute], got str 'Lower'", id="non-native-properties-not-a-list"),
    pytest.param(HEADER + "non_native:\n  - func: cast(Tensor input) -> Tensor\n    properties:\n      - Lower\n      - Lower  #<\n",
                 "property 'Lower' is listed twice", id="non-native-property-twice"),
    pytest.param(HEADER + "non_native:\n  - func: cast(Tensor input) -> Tensor\n  - func: cast(Tensor input, int x) -> Tensor  #<\n",
                 "non_native node Cast (cast) is defined twice (first at line 5)", id="non-native-twice"),
    pytest.param(HEADER + "full_codegen:\n  - relu\nnon_native:\n  - func: relu(Tensor input) -> Tensor  #<\n",
                 "non_native relu would be IR node class Relu, the class of relu (under 'full_codegen' at line 5)",
                 id="non-native-class-clash"),
]


@pytest.mark.parametrize("text, fragment", CASES)
def test_lazy_validation_rule_names_file_line_and_reason(model, text, fragment):
    with pytest.raises(OpgenError) as info:
        parse_backend_yaml(text, model, "lazy.yaml")
    error = info.value
    assert len(error.diagnostics) == 1, str(error)
    diagnostic = error.diagnostics[0]
    assert str(diagnostic).startswith(f"lazy.yaml:{_expected_line(text)}: error: "), str(diagnostic)
    assert fragment in diagnostic.message, diagnostic.message


@pytest.mark.parametrize("name, expected", [
    ("add.Tensor", "AddTensor"), ("view_copy", "ViewCopy"), ("sum.dim_IntList", "SumDimIntlist"),
    ("_log_softmax", "LogSoftmax"), ("bitwise_and.Tensor", "BitwiseAndTensor"), ("add_.Tensor", "AddTensor"),
    ("arange.start_out", "ArangeStartOut"), ("_adaptive_avg_pool2d_backward", "AdaptiveAvgPool2dBackward"),
])
def test_ir_class_names_follow_torchgen(name, expected):
    assert ir_class_name(OperatorName.parse(name)) == expected


VALID = HEADER + """\
full_codegen:
  - add.Tensor
  - sum.dim_IntList
  - view_copy
ir_gen:
  - relu
supported:
  - relu
symint:
  - view_copy
autograd:
  - _log_softmax
non_native:
  - func: scalar(Scalar value, ScalarType type) -> Tensor
    opkind: prim::Constant
    properties:
      - TreatScalarsAsConstants
      - CanBeReusedDeclOnly
  - func: device_data(Tensor data) -> Tensor
"""


def test_valid_lazy_yaml_gives_kernels_and_ir_nodes(model):
    backend = parse_backend_yaml(VALID, model, "lazy.yaml")
    assert (backend.backend_key, backend.autograd_key) == (DispatchKey.Lazy, DispatchKey.AutogradLazy)
    kernels = {str(n): m.kernel for n, m in backend.backend_index.index.items()}
    assert kernels == {"add.Tensor": "add", "sum.dim_IntList": "sum", "view_copy": "view_copy_symint", "relu": "relu"}
    assert {str(n) for n in backend.autograd_index.index} == {"_log_softmax"}
    assert {str(n) for n in backend.full_codegen} == {"add.Tensor", "sum.dim_IntList", "view_copy"}
    nodes = [(n.class_name, n.op, n.opkind, n.source, n.properties) for n in backend.ir_nodes]
    assert nodes == [
        ("AddTensor", "aten::add.Tensor", "aten::add", "full_codegen", ()),
        ("SumDimIntlist", "aten::sum.dim_IntList", "aten::sum", "full_codegen", ()),
        ("ViewCopy", "aten::view_copy", "aten::view_copy", "full_codegen", ()),
        ("Relu", "aten::relu", "aten::relu", "ir_gen", ()),
        ("Scalar", "scalar", "prim::Constant", "non_native", ("TreatScalarsAsConstants", "CanBeReusedDeclOnly")),
        ("DeviceData", "device_data", "aten::device_data", "non_native", ()),
    ]
    assert backend.ir_node(OperatorName.parse("relu")).source == "ir_gen"
    assert backend.ir_node(OperatorName.parse("_log_softmax")) is None
    assert [n.line for n in backend.ir_nodes] == [5, 6, 7, 9, 17, 22]


def test_an_xla_style_yaml_may_list_ir_gen_operators_under_supported_too(model):
    backend = parse_backend_yaml(HEADER + "supported:\n  - relu\nir_gen:\n  - relu\n", model, "lazy.yaml")
    assert [n.class_name for n in backend.ir_nodes] == ["Relu"] and not backend.full_codegen


def test_known_properties_are_sorted_and_unique():
    assert list(PROPERTIES) == sorted(set(PROPERTIES))


def test_cli_json_lists_ir_nodes_and_summary_counts_them(yaml_files, model, tmp_path, capsys):
    path = tmp_path / "lazy.yaml"
    path.write_text(VALID, encoding="utf-8")
    base = ["model", yaml_files.yaml, "--tags", yaml_files.tags, "--no-cache", "--backend-yaml", str(path)]
    assert cli.main(base) == 0
    assert "IR node classes        6  (4 of operators: 3 full_codegen, 1 ir_gen; 2 non_native)" in capsys.readouterr().out
    assert cli.main(base + ["--json"]) == 0
    nodes = json.loads(capsys.readouterr().out)["ir_nodes"]
    assert [(n["class"], n["op"], n["non_native"]) for n in nodes][-2:] == [("Scalar", "scalar", True), ("DeviceData", "device_data", True)]


def test_our_lazy_yaml_lists_functional_and_copy_operators_only():
    from opgen.model import load_model
    model = load_model(os.path.join(ROOT, "yaml", "native_functions.yaml"), os.path.join(ROOT, "yaml", "tags.yaml"))
    backend = parse_backend_yaml(os.path.join(ROOT, "yaml", "lazy_native_functions.yaml"), model)
    listed = {n: model.by_name[n] for n in backend.backend_index.index}
    supported = {"empty.memory_format", "empty_strided", "_to_copy", "copy_", "lift", "lift_fresh", "fill_.Scalar"}
    assert {str(n) for n in listed} - {str(n) for n in backend.full_codegen} == supported
    for name in backend.full_codegen:
        f = model.by_name[name]
        assert f.func.kind().value == "functional" and not f.is_view_op, name
    copies = {str(n) for n in backend.full_codegen if str(n.name).endswith("_copy") or "scatter" in str(n.name)}
    views = [f for f in model.functions if f.is_view_op and model.kernels_of(f).get(DispatchKey.CompositeImplicitAutograd) is None
             and str(f.func.name.name) not in ("lift_fresh",) and not str(f.func.name.name).endswith("_")]
    for view in views:  # every view's *_copy is lowered
        assert any(c.startswith(f"{view.func.name.name}_copy") for c in copies), view.func.name


@pytest.fixture(scope="session")
def ts_yaml(real_data_dir):
    path = os.path.join(os.path.dirname(real_data_dir), "pytorch-lazy", "ts_native_functions.yaml")
    if not os.path.isfile(path):
        pytest.skip(f"PyTorch's lazy backend yaml not found at {path}")
    return path


def test_real_lazy_yaml_declares_torchgens_162_plus_16_ir_nodes(real_model, ts_yaml):
    backend = parse_backend_yaml(ts_yaml, real_model)
    native = [n for n in backend.ir_nodes if not n.non_native]
    non_native = [n for n in backend.ir_nodes if n.non_native]
    assert (len(native), len(non_native), len(backend.full_codegen)) == (162, 16, 161)
    classes = [n.class_name for n in backend.ir_nodes]
    assert len(set(classes)) == len(classes)
    assert {"AddTensor", "ViewCopy", "SumDimIntlist", "LogSoftmax", "Selu", "ArangeStartOut"} <= set(classes)
    assert [n.class_name for n in non_native][:4] == ["Scalar", "Expand", "View", "Cast"]
    # the yaml's C++ expressions (at::prim::Constant, ltc_cast) as the symbols they name
    assert non_native[0].opkind == "prim::Constant" and non_native[3].opkind == "lazy_tensors::cast"
    counts = {str(key): len(index.index) for key, index in backend.indices.items()}
    assert counts == {"Lazy": 161 + 24, "AutogradLazy": 2}


@pytest.mark.parametrize("text, kind", [
    ("at::prim::Constant", "prim::Constant"), ("c10::prim::Constant", "prim::Constant"), ("prim::Constant", "prim::Constant"),
    ("ltc_cast", "lazy_tensors::cast"), ("lazy::cast", "lazy::cast"), ("aten::add", "aten::add"),
    ("Constant", None), ("at::prim::", None), ("a::b::c", None), ("ltc cast", None), ("", None),
])
def test_op_kinds_are_the_symbols_the_yamls_expressions_name(text, kind):
    from opgen.model.op_kind import parse_op_kind
    assert parse_op_kind(text) == kind


def test_scalars_and_symint_operators_symints_are_operands(model):
    text = HEADER + ("full_codegen:\n  - add.Tensor\n  - view_copy\nsymint:\n  - view_copy\nnon_native:\n"
                     "  - func: scalar(Scalar value, ScalarType type) -> Tensor\n    properties: [TreatScalarsAsConstants]\n")
    backend = parse_backend_yaml(text, model, "lazy.yaml")
    add, view, scalar = backend.ir_nodes
    assert (add.operands, add.attributes) == (("self", "other", "alpha"), ())
    assert (view.operands, view.attributes) == (("self",), ("size",))  # SymInt[] stays an attribute, as in LTC
    assert (scalar.operands, scalar.attributes) == ((), ("value", "type"))  # the constant node itself


def test_real_lazy_yaml_makes_33_classes_scalars_and_symints_operands(real_model, ts_yaml):
    """The 33 classes whose Scalars (and SymInts of `symint` operators) lazy tensor core makes
    operands, where they used to be attributes (issue 38)."""
    backend = parse_backend_yaml(ts_yaml, real_model)
    value_operands = {n.class_name: [a.name for a in n.arguments if a.value in ("scalar", "symint")]
                      for n in backend.ir_nodes}
    changed = {c: names for c, names in value_operands.items() if names}
    assert len(changed) == 33
    assert changed["AddTensor"] == ["alpha"] and changed["Clamp"] == ["min", "max"]
    assert changed["SliceCopyTensor"] == ["start", "end", "step"] and changed["Addmm"] == ["beta", "alpha"]
    assert "Scalar" not in changed  # TreatScalarsAsConstants


def test_real_xla_yaml_names_105_ir_classes_as_torchgen(real_model, real_data_dir):
    path = os.path.join(os.path.dirname(real_data_dir), "pytorch-xla", "xla_native_functions.yaml")
    if not os.path.isfile(path):
        pytest.skip(f"pytorch/xla's backend yaml not found at {path}")
    backend = parse_backend_yaml(path, real_model)
    classes = [n.class_name for n in backend.ir_nodes]
    assert (len(classes), len(set(classes)), len(backend.full_codegen)) == (105, 105, 95)
    # the names pytorch/xla's hand-written lowerings are defined under (torch_xla/csrc/ops/ops_lower_fn.cpp)
    assert {"Abs", "ClampTensor", "ClampMaxTensor", "EqScalar", "LogSigmoidForward", "NativeDropoutBackward",
            "AdaptiveAvgPool2dBackward", "BitwiseLeftShiftTensor", "Isneginf", "LeakyReluBackward"} <= set(classes)
