"""The closure by operator (issue 41): a kernel file compiled for one selected operator no longer
brings the other groups it implements (they are only declared: headers generated, nothing
registered), and groups no entry uses for training get no autograd layer. On the MLP forward
recorded with record_operators (addmm, relu, matmul -> mm, sum, mean), over our yaml and csrc/."""
import os
import subprocess
import sys

from opgen.gen.group import GroupCodegen
from opgen.selection import GeneratedCallees

from selection_helpers import OUR_DERIVATIVES, build_config

# What record_operators wrote for `od.addmm(b, x, w).relu()`, `od.matmul(h, w2)`, `.sum()`, `.mean()`.
RECORDED = """operators:
  aten::addmm: {is_root_operator: true, is_used_for_training: %(training)s, include_all_overloads: false}
  aten::clamp: {is_root_operator: false, is_used_for_training: %(training)s, include_all_overloads: false}
  aten::matmul: {is_root_operator: true, is_used_for_training: %(training)s, include_all_overloads: false}
  aten::mean: {is_root_operator: true, is_used_for_training: %(training)s, include_all_overloads: false}
  aten::mean.dim: {is_root_operator: false, is_used_for_training: %(training)s, include_all_overloads: false}
  aten::mm: {is_root_operator: false, is_used_for_training: %(training)s, include_all_overloads: false}
  aten::relu: {is_root_operator: true, is_used_for_training: %(training)s, include_all_overloads: false}
  aten::sum: {is_root_operator: true, is_used_for_training: %(training)s, include_all_overloads: false}
  aten::sum.dim_IntList: {is_root_operator: false, is_used_for_training: %(training)s, include_all_overloads: false}
"""
MLP_TRAINING = RECORDED % {"training": "true"}
MLP_INFERENCE = RECORDED % {"training": "false"}

SELECTED = ["addmm", "clamp", "matmul", "mean", "mm", "relu", "sum"]
# What the runtime itself calls (csrc/autograd, csrc/functionalization, ...): in every selective build.
RUNTIME_CALLS = [
    "_to_copy", "as_strided", "as_strided_scatter", "clone", "copy", "empty_strided", "expand", "lift",
    "permute", "permute_copy", "reshape", "select_scatter", "slice_scatter", "t_copy", "transpose_copy", "view_copy",
    "zero", "zeros", "zeros_like",
]
# What the runtime's backward-only sources call (`// opgen: backward only`: the engine, gradient
# accumulation, hooks, formula helpers): kept when something is trained; otherwise only declared,
# their operator handles compiled (Closure.handles).
BACKWARD_CALLS = ["add", "div", "eq", "ge", "le", "log", "mul", "ones", "ones_like", "pow", "select", "sub", "where"]
# What the kept groups' generated code (Functionalize's view copies; Autograd's formulas when
# trained) and the kept kernel files call.
GENERATED_CALLS = ["as_strided_copy", "expand_copy", "t", "transpose", "unsqueeze_copy"]
TRAINING_CALLS = ["contiguous", "masked_fill", "neg", "slice", "slice_copy", "squeeze", "squeeze_copy"]
KERNEL_CALLS = ["bmm", "empty", "empty_like", "fill", "unsqueeze", "view"]
# What the backward calls' kernel files (compare_ops.cpp, compiled for eq) and generated code call.
BACKWARD_KERNEL_CALLS = ["gt", "lt", "ne", "select_copy"]

MLP_GROUPS = sorted(SELECTED + RUNTIME_CALLS + BACKWARD_CALLS + GENERATED_CALLS + TRAINING_CALLS + KERNEL_CALLS +
                    BACKWARD_KERNEL_CALLS)
MLP_INFERENCE_GROUPS = sorted(SELECTED + RUNTIME_CALLS + GENERATED_CALLS + KERNEL_CALLS)



def test_the_mlp_forward_keeps_exactly_the_groups_its_closure_names(close_yaml):
    closure = close_yaml(MLP_TRAINING)
    assert list(closure.groups) == MLP_GROUPS
    assert closure.handles == ()
    assert list(closure.selected_groups) == SELECTED
    assert closure.inference == ()
    # Implemented beside a kept kernel, and nothing kept calls them: declared, not kept.
    for group in ("cos", "sin", "tanh", "argmax", "amin", "amax"):
        assert group in closure.declared and group not in closure.groups, group
        assert group not in closure and f"aten::{group}" not in closure
    assert "cos.out" not in closure.operators
    assert closure.explain("cos") == (
        "cos: not in the build: nothing selected needs it; only its declarations are generated, for "
        "csrc/native/unary_ops.cpp, which is compiled for clamp; clamp: selected at ops.yaml:3")
    assert closure.explain("argmax").startswith(
        "argmax: not in the build: nothing selected needs it; only its declarations are generated, for "
        "csrc/native/reduce_ops.cpp, which is compiled for mean")
    # bmm is kept for what matmul's kernel calls (a batched matmul), not for sharing addmm's file.
    assert closure.explain("bmm").splitlines()[0] == (
        "bmm: called by csrc/native/matmul.cpp, which implements matmul; matmul: selected at ops.yaml:4")
    # Every group generated is kept or declared; the kept ones are what the build registers.
    assert set(closure.generated) == set(closure.groups) | set(closure.declared)
    assert not set(closure.groups) & set(closure.declared)


def test_an_inference_selection_gets_no_autograd_layer_nor_its_formulas_callees(close_yaml):
    closure = close_yaml(MLP_INFERENCE)
    assert list(closure.groups) == MLP_INFERENCE_GROUPS
    assert closure.inference == closure.groups
    # Nothing trained runs a backward pass: what only the runtime's backward-only sources call is
    # declared, with its operator handles compiled so that those sources link.
    assert list(closure.handles) == BACKWARD_CALLS and set(closure.handles) <= set(closure.declared)
    assert closure.explain("eq") == (
        "eq: not in the build: nothing selected needs it; only its declarations are generated, for "
        "csrc/autograd/helpers.cpp, which is part of the runtime and runs in backward passes only (nothing selected "
        "is used for training)")
    # masked_fill came from relu's backward formula, neg from div's: inference needs neither.
    assert "masked_fill" not in closure.groups and "neg" not in closure.groups
    assert closure.explain("t").splitlines()[0].startswith("t: called by t_copy's generated ops/t_copy_")


def test_training_follows_what_needs_a_group(close_yaml):
    """relu alone for inference, addmm for training: addmm and what it needs train, relu does not;
    the runtime's calls train because some entry does."""
    closure = close_yaml("operators:\n"
                         "  aten::relu: {is_used_for_training: false}\n"
                         "  aten::addmm: {is_used_for_training: true}\n")
    inference = set(closure.inference)
    assert "relu" in inference and "addmm" not in inference
    assert "t" in closure.groups and "t" not in inference          # addmm's formula calls t
    assert "masked_fill" not in closure.groups                      # only relu's formula calls it
    assert "add" not in inference                                   # the runtime's (accumulate_grad)


def test_a_group_reached_for_inference_first_then_for_training_is_walked_again(close_yaml):
    """mm: selected for inference, then reached from matmul (trained): mm's formula's callees join."""
    closure = close_yaml("operators:\n"
                         "  aten::mm: {is_used_for_training: false}\n"
                         "  aten::matmul: {is_used_for_training: true}\n")
    assert "mm" not in closure.inference
    assert any(r.source == "ops/mm_Autograd.cpp" for g in closure.groups for r in closure.reasons[g])


def test_an_inference_group_renders_without_its_autograd_files_and_others_byte_identical(our_model):
    full = build_config(our_model, OUR_DERIVATIVES)
    inference = full.__class__(full.keys, autograd=full.autograd, inference=frozenset({"relu"}))
    relu = next(g for g in our_model.operator_groups if g.name == "relu")
    trained, untrained = (GroupCodegen(relu, our_model.indices, config).render() for config in (full, inference))
    assert {"ops/relu_Autograd.cpp", "ops/relu_ADInplaceOrView.cpp"} <= set(trained)
    assert set(untrained) == set(trained) - {"ops/relu_Autograd.cpp", "ops/relu_ADInplaceOrView.cpp"}
    assert "Autograd" not in untrained["ops/relu_unit.cpp"].replace("CompositeExplicitAutograd", "")
    assert {p: t for p, t in untrained.items() if p != "ops/relu_unit.cpp"} == \
        {p: trained[p] for p in untrained if p != "ops/relu_unit.cpp"}
    # Another group of the same config: the full build's files.
    mm = next(g for g in our_model.operator_groups if g.name == "mm")
    assert GroupCodegen(mm, our_model.indices, inference).render() == GroupCodegen(mm, our_model.indices, full).render()


def test_the_inference_callees_leave_out_formulas(our_model, our_callees):
    assert isinstance(our_callees, GeneratedCallees)
    trained = {callee for callee, _ in our_callees("relu")}
    untrained = {callee for callee, _ in our_callees.inference("relu")}
    assert "masked_fill" in trained and "masked_fill" not in untrained
    assert untrained <= trained


def test_the_closure_is_the_same_whatever_the_hash_seed(tmp_path):
    (tmp_path / "ops.yaml").write_text(MLP_TRAINING)
    outputs = set()
    for seed in ("0", "1", "12345"):
        result = subprocess.run([sys.executable, "-m", "opgen", "select", str(tmp_path / "ops.yaml"), "--no-cache"],
                                capture_output=True, text=True, timeout=120,
                                cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                env={**os.environ, "PYTHONHASHSEED": seed})
        assert result.returncode == 0, result.stderr
        outputs.add(result.stdout)
    assert len(outputs) == 1
    assert "declared only: " in outputs.pop()
