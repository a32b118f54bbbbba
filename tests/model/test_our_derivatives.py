"""yaml/derivatives.yaml, our own formulas, read against yaml/native_functions.yaml.

The expectations here are computed from the operator yaml's text (plain PyYAML and regexes), not
from opgen's model, so the model and the formulas file are checked against an independent reading
of which operators autograd must cover.
"""
import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from opgen.model import load_model
from opgen.model.derivatives import load_derivatives

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OPS = os.path.join(REPO_ROOT, "yaml", "native_functions.yaml")
TAGS = os.path.join(REPO_ROOT, "yaml", "tags.yaml")
DERIVATIVES = os.path.join(REPO_ROOT, "yaml", "derivatives.yaml")

# Outputs that are not floating point, whatever the input: bool masks and indices. The yaml does
# not say an output's dtype, so this is the one hand-written fact (the in-place comparisons write
# 0/1 into self, whose dtype is kept, so they stay differentiable).
NON_FLOATING_OUTPUT = {"eq", "ne", "lt", "le", "gt", "ge", "argmax"}
# Results that depend only on the input's shape, dtype and device (torchgen's DONT_REQUIRE_DERIVATIVE).
SHAPE_ONLY = {"empty_like", "zeros_like", "ones_like"}

# torchgen's class names for our entries: CamelCase of the base name (an in-place entry's
# trailing '_' dropped) + 'Backward' + the count of earlier entries with that stem; a view's
# *_copy twin gets '<view node>_copy'.
EXPECTED_NODES = {
    "add.Tensor": "AddBackward0", "add.Scalar": "AddBackward1",
    "sub.Tensor": "SubBackward0", "sub.Scalar": "SubBackward1",
    "mul.Tensor": "MulBackward0", "mul.Scalar": "MulBackward1",
    "div.Tensor": "DivBackward0", "div.Scalar": "DivBackward1",
    "maximum": "MaximumBackward0", "minimum": "MinimumBackward0",
    "pow.Tensor_Scalar": "PowBackward0", "pow.Tensor_Tensor": "PowBackward1", "pow.Scalar": "PowBackward2",
    "eq.Tensor": None, "eq.Scalar": None, "eq_.Scalar": "EqBackward0", "eq_.Tensor": "EqBackward1",
    "ne.Tensor": None, "ne.Scalar": None, "ne_.Scalar": "NeBackward0", "ne_.Tensor": "NeBackward1",
    "lt.Tensor": None, "lt.Scalar": None, "lt_.Scalar": "LtBackward0", "lt_.Tensor": "LtBackward1",
    "le.Tensor": None, "le.Scalar": None, "le_.Scalar": "LeBackward0", "le_.Tensor": "LeBackward1",
    "gt.Tensor": None, "gt.Scalar": None, "gt_.Scalar": "GtBackward0", "gt_.Tensor": "GtBackward1",
    "ge.Tensor": None, "ge.Scalar": None, "ge_.Scalar": "GeBackward0", "ge_.Tensor": "GeBackward1",
    "where.self": "WhereBackward0", "where.ScalarOther": "WhereBackward1", "where.ScalarSelf": "WhereBackward2",
    "masked_fill.Scalar": "MaskedFillBackward0",
    "neg": "NegBackward0", "abs": "AbsBackward0", "exp": "ExpBackward0", "log": "LogBackward0",
    "sqrt": "SqrtBackward0", "sin": "SinBackward0", "cos": "CosBackward0", "tanh": "TanhBackward0",
    "sigmoid": "SigmoidBackward0", "clamp": "ClampBackward0", "relu": "ReluBackward0",
    "sum": "SumBackward0", "sum.dim_IntList": "SumBackward1", "mean": "MeanBackward0", "mean.dim": "MeanBackward1",
    "amax": "AmaxBackward0", "amin": "AminBackward0", "argmax": None,
    "mm": "MmBackward0", "bmm": "BmmBackward0", "addmm": "AddmmBackward0",
    "view": "ViewBackward0", "view_copy": "ViewBackward0_copy",
    "transpose.int": "TransposeBackward0", "transpose_copy.int": "TransposeBackward0_copy",
    "t": "TBackward0", "t_copy": "TBackward0_copy",
    "permute": "PermuteBackward0", "permute_copy": "PermuteBackward0_copy",
    "expand": "ExpandBackward0", "expand_copy": "ExpandBackward0_copy",
    "squeeze": "SqueezeBackward0", "squeeze_copy": "SqueezeBackward0_copy",
    "squeeze.dim": "SqueezeBackward1", "squeeze_copy.dim": "SqueezeBackward1_copy",
    "squeeze.dims": "SqueezeBackward2", "squeeze_copy.dims": "SqueezeBackward2_copy",
    "unsqueeze": "UnsqueezeBackward0", "unsqueeze_copy": "UnsqueezeBackward0_copy",
    "select.int": "SelectBackward0", "select_copy.int": "SelectBackward0_copy",
    "slice.Tensor": "SliceBackward0", "slice_copy.Tensor": "SliceBackward0_copy",
    "as_strided": "AsStridedBackward0", "as_strided_copy": "AsStridedBackward0_copy",
    "lift": "LiftBackward0", "lift_fresh": "LiftFreshBackward0",
    "select_scatter": "SelectScatterBackward0", "slice_scatter": "SliceScatterBackward0",
    "as_strided_scatter": "AsStridedScatterBackward0",
    "clone": "CloneBackward0", "copy_": "CopyBackward0", "_to_copy": "ToCopyBackward0",
    "fill_.Scalar": "FillBackward0", "zero_": "ZeroBackward0",
    "uniform_": "UniformBackward0", "normal_": "NormalBackward0",
    # torchgen drops "Forward" before "Backward": nll_loss_forward's node is NllLossBackward0.
    "_log_softmax": "LogSoftmaxBackward0", "_log_softmax_backward_data": "LogSoftmaxBackwardDataBackward0",
    "nll_loss_forward": "NllLossBackward0", "nll_loss_backward": "NllLossBackwardBackward0",
    "mse_loss": "MseLossBackward0", "mse_loss_backward": "MseLossBackwardBackward0",
}

# Method calls that are not operators: Tensor accessors (the first four become saved values
# when called on an argument or output).
ACCESSORS = {"sym_sizes", "sym_numel", "sym_strides", "options", "scalar_type"}
# torchgen's spellings of a derived saved value that look like calls (TensorGeometry(self) saves
# self_geometry); zeros_like is also one (self_info), and an operator of ours anyway.
DERIVED_CALLS = {"TensorGeometry"}


# ---- an independent reading of the operator yaml -------------------------------------------

_SCHEMA = re.compile(r"^(?P<name>[\w.]+)\((?P<args>.*)\) -> (?P<returns>.+)$")


def _split_args(args):
    parts, depth, current = [], 0, ""
    for ch in args:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


class Op:
    def __init__(self, schema, entry, generated=False):
        m = _SCHEMA.match(schema)
        assert m, schema
        self.name = m["name"]
        base, _, self.overload = self.name.partition(".")
        self.inplace = base.endswith("_") and not base.endswith("__")
        self.base = base[:-1] if self.inplace else base
        self.args = [a for a in _split_args(m["args"]) if a != "*"]
        self.returns = m["returns"]
        self.entry = entry
        self.generated = generated
        self.is_out = any(re.match(r"Tensor\(\w!\)", a) for a in self.args) and not self.inplace

    @property
    def signature(self):
        """torchgen's FunctionSchema.signature(strip_default=True): no overload, no in-place '_',
        no alias annotations, no defaults, no out= arguments."""
        args = [re.sub(r"\(\w!?\)", "", a).split("=")[0] for a in self.args if not (self.is_out and "!" in a)]
        returns = re.sub(r"\(\w!?\)", "", self.returns)
        return f"{self.base}({', '.join(args)}) -> {returns}"

    def tensor_inputs(self):
        return [a for a in self.args if a.startswith("Tensor")]

    @property
    def dispatch_keys(self):
        keys = set()
        for k in (self.entry.get("dispatch") or {}):
            keys.update(x.strip() for x in k.split(","))
        return keys

    @property
    def composite_implicit(self):
        if self.generated:
            return False
        if "structured_delegate" in self.entry:
            return False
        return not self.dispatch_keys or "CompositeImplicitAutograd" in self.dispatch_keys


def read_ops():
    with open(OPS) as fh:
        entries = yaml.safe_load(fh)
    ops = []
    for entry in entries:
        op = Op(entry["func"], entry)
        ops.append(op)
        autogen = entry.get("autogen") or []
        if isinstance(autogen, str):
            autogen = [x.strip() for x in autogen.split(",")]
        for name in autogen:
            if name.partition(".")[2].endswith("out"):
                continue  # out= variants get no autograd
            # A functional variant autogen'd from an in-place function: the same arguments, none mutated.
            args = ", ".join(re.sub(r"Tensor\(a!\)", "Tensor", a) for a in op.args)
            ops.append(Op(f"{name}({args}) -> Tensor", {"dispatch": {"CompositeExplicitAutograd": name}}, generated=True))
    return ops


def needs_autograd(op):
    """A differentiable floating-point operator that autograd must see through."""
    return (not op.is_out and not op.composite_implicit and op.tensor_inputs()
            and "Tensor" in op.returns and op.base not in SHAPE_ONLY
            and not (op.base in NON_FLOATING_OUTPUT and not op.inplace))


# ---- fixtures ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def derivatives():
    model = load_model(OPS, TAGS)
    return load_derivatives(DERIVATIVES, model, "yaml/derivatives.yaml")


@pytest.fixture(scope="module")
def ops():
    return read_ops()


def _info_for(op, infos_by_name, ops_by_name):
    """torchgen's match_differentiability_info: the function's own entry; else the functional
    entry with the same signature (mul_ and mul.out share mul's); else, for a generated
    function, the in-place entry with the same signature (fill.Scalar takes fill_.Scalar's)."""
    if op.name in infos_by_name:
        return infos_by_name[op.name]
    for name, info in infos_by_name.items():
        other = ops_by_name[name]
        if other.signature == op.signature and not other.inplace:
            return info
    if op.generated:
        for name, info in infos_by_name.items():
            other = ops_by_name[name]
            if other.signature == op.signature and other.inplace:
                return info
    return None


# ---- tests ---------------------------------------------------------------------------------

def test_cli_loads_our_derivatives_without_error():
    proc = subprocess.run([sys.executable, "-m", "opgen", "model", "yaml/native_functions.yaml",
                           "--derivatives", "yaml/derivatives.yaml", "--json"],
                          cwd=REPO_ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    autograd = json.loads(proc.stdout)["autograd"]
    assert {i["name"]: i["node"] for i in autograd} == EXPECTED_NODES


def test_node_names_are_torchgens(derivatives):
    assert {str(i.name): i.node for i in derivatives.infos} == EXPECTED_NODES


def test_every_differentiable_operator_has_a_formula(derivatives, ops):
    ops_by_name = {op.name: op for op in ops}
    infos_by_name = {str(i.name): i for i in derivatives.infos}
    assert set(infos_by_name) <= set(ops_by_name)
    expected = [op for op in ops if needs_autograd(op)]
    # The reading of the yaml is not vacuous: the families the issue names are all in it.
    names = {op.name for op in expected}
    for must in ("add_.Tensor", "mul.Tensor", "mm", "addmm_", "view", "view_copy", "select_scatter", "copy_", "copy",
                 "_to_copy", "relu_", "amax", "fill.Scalar", "uniform", "normal.functional", "eq_.Tensor", "t_copy",
                 "_log_softmax", "_log_softmax_backward_data", "nll_loss_forward", "nll_loss_backward", "mse_loss",
                 "mse_loss_backward"):
        assert must in names, must
    for absent in ("matmul", "reshape", "contiguous", "to.dtype", "zeros", "arange", "empty_like", "eq.Tensor",
                   "argmax", "add.out", "relu.out", "log_softmax.int", "nll_loss", "nll_loss_nd", "nll_loss.out"):
        assert absent not in names, absent
    missing = []
    for op in expected:
        info = _info_for(op, infos_by_name, ops_by_name)
        if info is None or info.node is None or not any(info.differentiable_outputs):
            missing.append(op.name)
    assert missing == []


def test_non_floating_outputs_are_marked_non_differentiable(derivatives, ops):
    infos_by_name = {str(i.name): i for i in derivatives.infos}
    for op in ops:
        if op.base in NON_FLOATING_OUTPUT and not op.inplace and not op.is_out:
            info = infos_by_name[op.name]
            assert info.output_differentiability == (False,) and info.node is None, op.name


def test_composite_implicit_operators_have_no_entry(derivatives, ops):
    infos = {str(i.name) for i in derivatives.infos}
    assert [op.name for op in ops if op.composite_implicit and op.name in infos] == []


def _documented_helpers(text):
    block = text.split("# Helpers:", 1)[1].split("\n\n", 1)[0]
    return {m.group(1) for m in re.finditer(r"^#   (\w+)\(", block, re.M)}


def _formula_texts(document):
    for entry in document:
        sections = entry.get("dispatch") or {"Default": entry}
        for section in sections.values():
            for key, value in section.items():
                if key in ("name", "dispatch"):
                    continue
                if key == "output_differentiability":
                    yield from (v for v in value if isinstance(v, str))  # conditions
                elif value != "non_differentiable":
                    yield value


def test_helpers_used_are_exactly_the_documented_list(ops):
    with open(DERIVATIVES) as fh:
        text = fh.read()
    documented = _documented_helpers(text)
    assert documented == {
        "maybe_multiply", "sum_to", "restore_reduced_dims", "scale_grad_by_count", "mean_backward", "pow_backward",
        "pow_backward_self", "pow_backward_exponent", "clamp_backward", "permute_backwards", "as_strided_backward",
        "_to_copy_backward", "isDifferentiableType",
    }
    functions = {op.base + ("_" if op.inplace else "") for op in ops
                 if "function" in str(op.entry.get("variants", "function")) or op.generated}
    methods = {op.base + ("_" if op.inplace else "") for op in ops if "method" in str(op.entry.get("variants", ""))}
    called, called_methods = set(), set()
    for formula in _formula_texts(yaml.safe_load(text)):
        if formula in ("auto_element_wise", "auto_linear"):
            continue
        for m in re.finditer(r"(\.|->|::)?\b([A-Za-z_]\w*)\s*\(", formula):
            (called_methods if m.group(1) in (".", "->") else called).add(m.group(2))
    assert called - functions - DERIVED_CALLS == documented
    assert called_methods - methods - ACCESSORS == set()


def test_tensor_comparisons_are_the_documented_ones():
    with open(DERIVATIVES) as fh:
        text = fh.read()
    used = set()
    for formula in _formula_texts(yaml.safe_load(text)):
        used.update(re.findall(r"==|!=|<=|>=|<|(?<!-)>", formula))
    assert used == {"==", "<", "<="}
    assert "comparisons `==`, `<`, `<=`" in text


def test_generated_functional_variants_can_reuse_in_place_formulas(derivatives, ops):
    """torchgen gives an autogen'd functional variant (fill.Scalar, zero, copy, uniform,
    normal.functional) its in-place function's formulas only if they save nothing of self
    (torchgen asserts that: it cannot fix up such a formula)."""
    ops_by_name = {op.name: op for op in ops}
    infos_by_name = {str(i.name): i for i in derivatives.infos}
    generated = [op for op in ops if op.generated and needs_autograd(op)]
    assert {op.name for op in generated} == {"fill.Scalar", "zero", "copy", "uniform", "normal.functional"}
    for op in generated:
        info = _info_for(op, infos_by_name, ops_by_name)
        assert ops_by_name[str(info.name)].inplace, op.name
        assert not [n for n in info.saved_inputs if "self" in n], op.name
