"""The derivatives model: derivatives.yaml (torchgen's format) read against a Model."""
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

from opgen.errors import OpgenError
from opgen.model.derivatives import load_derivatives
from opgen.model.formulas import SAVED_RULES, camel_case_node_prefix, free_names, saved_names

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

OPS = """\
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  variants: function, method
  dispatch:
    CPU: add
- func: add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
  variants: method
  dispatch:
    CPU: add_
- func: mul.Tensor(Tensor self, Tensor other) -> Tensor
  variants: function, method
  dispatch:
    CPU: mul
- func: mul.Scalar(Tensor self, Scalar other) -> Tensor
  variants: function, method
  dispatch:
    CPU: mul_scalar
- func: sum(Tensor self, *, ScalarType? dtype=None) -> Tensor
  dispatch:
    CPU: sum
- func: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
  dispatch:
    CPU: max_dim
- func: log_softmax_forward(Tensor self, int dim) -> Tensor
  dispatch:
    CPU: lsf
- func: expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)
  variants: method
  dispatch:
    CompositeExplicitAutograd: expand
- func: expand_copy(Tensor self, SymInt[] size, *, bool implicit=False) -> Tensor
  dispatch:
    CompositeExplicitAutogradNonFunctional: expand_copy
  tags: view_copy
- func: t(Tensor(a) self) -> Tensor(a)
  dispatch:
    CompositeExplicitAutograd: t
"""

GOOD = """\
- name: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  self: handle_r_to_c(self.scalar_type(), grad)
  other: handle_r_to_c(other.scalar_type(), maybe_multiply(grad, alpha.conj()))
  result: self_t + maybe_multiply(other_t, alpha)

- name: mul.Tensor(Tensor self, Tensor other) -> Tensor
  self: mul_tensor_backward(grad, other, self.scalar_type())
  other: mul_tensor_backward(grad, self, other.scalar_type())
  result: other_t * self_p + self_t * other_p

- name: mul.Scalar(Tensor self, Scalar other) -> Tensor
  self: mul_tensor_backward(grad, other, self.scalar_type())

- name: sum(Tensor self, *, ScalarType? dtype=None) -> Tensor
  dispatch:
    Default:
      self: grad.expand_symint(self.sym_sizes())
      result: auto_linear
    AutogradNestedTensor:
      self: grad.expand(self)

- name: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
  self: value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)
  values: gather_with_keepdimed_indices(self_t, dim, indices, keepdim)
  output_differentiability: [True, False]

- name: log_softmax_forward(Tensor self, int dim) -> Tensor
  self: grad - result.exp() * grad.sum(dim, true)

- name: expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)
  self: at::sum_to(grad, self.sym_sizes())
  result: auto_linear

- name: t(Tensor(a) self) -> Tensor(a)
  self: grad.t()
"""


@pytest.fixture
def files(yaml_files):
    return yaml_files


def derivatives(files, text, ops=OPS, name="derivatives.yaml"):
    model = files.load(ops)
    path = os.path.join(files.dir, name)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(textwrap.dedent(text))
    return load_derivatives(path, model, display_name=name)


def errors(files, text, ops=OPS):
    with pytest.raises(OpgenError) as info:
        derivatives(files, text, ops)
    return [str(d) for d in info.value.diagnostics]


def by_node(d):
    return {i.node: i for i in d.infos if i.node}


def test_node_names_follow_torchgen():
    assert camel_case_node_prefix("add") == "AddBackward"
    assert camel_case_node_prefix("_foreach_add") == "ForeachAddBackward"
    assert camel_case_node_prefix("log1p") == "Log1PBackward"
    assert camel_case_node_prefix("log_softmax_forward") == "LogSoftmaxBackward"
    assert camel_case_node_prefix("add_") == "AddBackward"


def test_parse_names_saved_variables_and_differentiability(files):
    d = derivatives(files, GOOD)
    nodes = by_node(d)
    # one counter per base name, in yaml order; dispatch sections count under their own prefix
    assert sorted(nodes) == ["AddBackward0", "ExpandBackward0", "ExpandBackward0_copy", "LogSoftmaxBackward0",
                             "MaxBackward0", "MulBackward0", "MulBackward1", "SumBackward0",
                             "SumBackwardAutogradNestedTensor0", "TBackward0"]
    add = nodes["AddBackward0"]
    assert str(add.name) == "add.Tensor" and add.differentiable_inputs == ("self", "other")
    assert sorted(add.saved_inputs) == ["alpha", "other_scalar_type", "self_scalar_type"]
    assert [f.var_names for f in add.forward_formulas] == [("result",)]
    assert sorted(nodes["MulBackward0"].saved_inputs) == ["other", "other_scalar_type", "self", "self_scalar_type"]
    assert str(nodes["MulBackward1"].name) == "mul.Scalar"
    assert nodes["SumBackward0"].saved_inputs == ("self_sym_sizes",)
    assert nodes["SumBackwardAutogradNestedTensor0"].saved_inputs == ("self",)
    assert nodes["LogSoftmaxBackward0"].saved_outputs == ("result",)
    assert sorted(nodes["MaxBackward0"].saved_inputs) == ["dim", "keepdim", "self_sym_sizes"]
    assert nodes["MaxBackward0"].saved_outputs == ("indices",)
    assert nodes["MaxBackward0"].differentiable_outputs == (True, False)
    copy = nodes["ExpandBackward0_copy"]
    assert str(copy.name) == "expand_copy" and str(copy.derived_from) == "expand"
    assert copy.saved_inputs == nodes["ExpandBackward0"].saved_inputs


def test_saved_names_rules():
    _, saved = saved_names("foo(zeros_like(self), self.sym_size(-1), other.sym_numel(), self.dim())", ["self", "other"])
    assert saved == ("self_info", "self_sym_argsize_minus_1", "self_dim", "other_sym_numel")
    assert free_names("f(/*keepdim=*/true, x, [](c10::SymInt i){return -i;}, \"str\")") == ["x"]


@pytest.mark.parametrize("rule", SAVED_RULES, ids=lambda rule: rule.pattern)
def test_a_rules_needle_is_literal_text_of_every_match(rule):
    """saved_names skips a rule whose needle a formula lacks, so each needle must be spelled out,
    unescaped, in the rule's pattern (outside '{}', quantifiers and groups)."""
    assert re.escape(rule.needle) in rule.pattern.replace("{}", "")
    sample = rule.pattern.replace(r"(-?\w+)", "0").replace("\\", "").format("x")  # x.sym_size(0), zeros_like(x)
    example = re.compile(rule.pattern.format("x")).search(f"f({sample}) + 1")
    assert example is not None and rule.needle in example.group(0)


def test_in_place_entry_output_is_result(files):
    d = derivatives(files, textwrap.dedent("""\
        - name: add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
          self: grad * result
          other: grad
        """) + VIEWS)
    (info,) = [i for i in d.infos if i.node and str(i.name).startswith("add")]
    assert info.node == "AddBackward0" and str(info.name) == "add_.Tensor" and info.saved_outputs == ("result",)


VIEWS = GOOD[GOOD.index("- name: expand("):]

BROKEN = """\
- name: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=2) -> Tensor
  self: grad

- name: mul.Tensor(Tensor self, Tensor other) -> Tensor
  slef: grad * other
  other: grad * sefl

- name: mul.Scalar(Tensor self, Scalar other) -> Tensor
  self: grad * other
  self, other: grad

- name: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
  self: grad
  output_differentiability: [True]

- name: mull.Tensor(Tensor self, Tensor other) -> Tensor
  self: grad
"""


def test_every_error_in_one_run_with_file_and_line(files):
    found = errors(files, BROKEN)
    text = "\n".join(found)
    # the views expand and t (own kernels) have no formula; reported at their native_functions.yaml line
    expected = [
        ("derivatives.yaml:1:", "differs from the schema of add.Tensor"),
        ("derivatives.yaml:5:", "'slef' is neither an argument nor an output of mul.Tensor; did you mean 'self'?"),
        ("derivatives.yaml:6:", "uses 'sefl', which is neither an argument nor an output of mul.Tensor; did you mean 'self'?"),
        ("derivatives.yaml:10:", "a formula for 'self' is given twice (first at line 9)"),
        ("derivatives.yaml:14:", "output_differentiability has 1 entries but max.dim returns 2 outputs"),
        ("derivatives.yaml:16:", "no function matches 'mull.Tensor(Tensor self, Tensor other) -> Tensor'; did you mean 'mul.Tensor'?"),
        ("native_functions.yaml:26:", "view operator expand has no backward formula"),
        ("native_functions.yaml:34:", "view operator t has no backward formula"),
    ]
    for where, message in expected:
        assert any(where in line and message in line for line in found), f"missing {where} {message} in:\n{text}"
    assert len(found) == len(expected), text


def test_bad_dispatch_key_and_forward_name(files):
    found = errors(files, GOOD.replace("AutogradNestedTensor:", "AutogradNestedTenser:").replace(
        "values: gather", "valuez: gather"))
    assert any("unknown dispatch key 'AutogradNestedTenser'" in e and "did you mean 'AutogradNestedTensor'?" in e for e in found)
    assert any("'valuez' is neither an argument nor an output of max.dim; did you mean 'values'?" in e for e in found)


def test_cli_exit_status_and_json(files, tmp_path):
    files.write(OPS)
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    good.write_text(GOOD)
    bad.write_text(BROKEN)
    base = [sys.executable, "-m", "opgen", "model", files.yaml, "--tags", files.tags, "--no-cache", "--derivatives"]
    run = subprocess.run(base + [str(bad)], cwd=REPO_ROOT, capture_output=True, text=True)
    assert run.returncode == 2 and "bad.yaml:5: error" in run.stderr and "native_functions.yaml:34: error" in run.stderr
    run = subprocess.run(base + [str(good)], cwd=REPO_ROOT, capture_output=True, text=True)
    assert run.returncode == 0 and "backward nodes" in run.stdout, run.stderr
    run = subprocess.run(base + [str(good), "--json"], cwd=REPO_ROOT, capture_output=True, text=True)
    autograd = json.loads(run.stdout)["autograd"]
    add = next(a for a in autograd if a["name"] == "add.Tensor")
    assert add["node"] == "AddBackward0" and add["saved_inputs"] == ["alpha", "other_scalar_type", "self_scalar_type"]
    assert add["saved_outputs"] == [] and add["output_differentiability"] == [True]
    assert [(a["name"], a["dispatch_key"]) for a in autograd] == sorted((a["name"], a["dispatch_key"]) for a in autograd)


def _json(files, tmp_path, text, seed):
    files.write(OPS)
    path = tmp_path / f"d{seed}.yaml"
    path.write_text(text)
    env = dict(os.environ, PYTHONHASHSEED=str(seed))
    run = subprocess.run([sys.executable, "-m", "opgen", "model", files.yaml, "--tags", files.tags, "--no-cache",
                          "--derivatives", str(path), "--json"], cwd=REPO_ROOT, capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_json_is_deterministic_across_hash_seeds_and_entry_order(files, tmp_path):
    entries = GOOD.strip().split("\n\n")
    reordered = "\n\n".join(entries[::-1]) + "\n"  # one entry per base name except mul: keep their order
    mul = [e for e in entries if e.startswith("- name: mul.")]
    others = [e for e in entries if not e.startswith("- name: mul.")]
    reordered = "\n\n".join(others[::-1] + mul) + "\n"
    outputs = {_json(files, tmp_path, GOOD, seed) for seed in (0, 1, 12345)}
    outputs.add(_json(files, tmp_path, reordered, 7))
    assert len(outputs) == 1
