"""Functionalize kernels (ops/<g>_Functionalize.cpp): on PyTorch 2.13's yaml opgen registers the
operators torchgen 2.13's RegisterFunctionalization_*.cpp do (tests/data/
torchgen_functionalization_2.13.json, written by tests/bench/bench_functionalize.py
--write-reference), apart from the differences listed with a reason in functionalization_sets.py;
on our yaml, each kind of kernel is generated where it belongs, and an edit to one operator
rewrites only its group's Functionalize file."""
import os

import pytest

from functionalization_sets import KNOWN_DIFFERENCES, REFERENCE, load_reference, opgen_functionalize
from generate_helpers import GROUPS, REPO_YAML, changed, regenerated, run_generate
from helpers import snapshot


@pytest.fixture(scope="module")
def pytorch_functionalize(real_data_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("functionalize-gen")
    result = run_generate(os.path.join(real_data_dir, "native_functions.yaml"), out, "--tags",
                          os.path.join(real_data_dir, "tags.yaml"), "--keys", "Functionalize", "--no-cache")
    assert result.returncode == 0, result.stderr
    return opgen_functionalize(str(out))


def test_functionalize_registrations_match_torchgen(pytorch_functionalize):
    ours, _ = pytorch_functionalize
    theirs = load_reference(REFERENCE)
    assert len(theirs) == 1323
    differences = (ours - theirs) | (theirs - ours)
    unexplained = sorted(differences - set(KNOWN_DIFFERENCES))
    assert not unexplained, (f"torchgen only: {sorted((theirs - ours) & set(unexplained))[:10]}, "
                             f"opgen only: {sorted((ours - theirs) & set(unexplained))[:10]}")
    stale = sorted(set(KNOWN_DIFFERENCES) - differences)
    assert not stale, f"listed as differing from torchgen but no longer do: {stale}"


def test_error_kernels_name_the_operator_and_why(pytorch_functionalize):
    ours, errors = pytorch_functionalize
    assert set(errors) <= ours
    # set_ (no out-of-place view), views of several tensors or returning lists, mutations without a functional variant
    assert {"set_", "slice_inverse", "split.Tensor", "unbind.int", "polygamma_", "_cummax_helper"} <= set(errors)
    assert "transpose_" not in errors and "transpose_" in ours  # in-place views are functionalized
    assert errors["polygamma_"] == "it mutates its arguments and has no functional variant"
    assert "add_.Tensor" in ours and "add_.Tensor" not in errors


def _text(out, group):
    return (out / "ops" / f"{group}_Functionalize.cpp").read_text()


@pytest.fixture(scope="module")
def repo_yaml_gen(tmp_path_factory):
    out = tmp_path_factory.mktemp("functionalize-repo")
    result = run_generate(REPO_YAML, out, "--no-cache")
    assert result.returncode == 0, result.stderr
    return out


def test_kernel_kinds_on_our_yaml(repo_yaml_gen):
    out = repo_yaml_gen
    select = _text(out, "select")
    assert "functionalization::call<ops::select_copy_int>" in select
    assert "functionalization::inverse::select_int(base, mutated_view, dim_, index_)" in select
    add = _text(out, "add")
    assert 'm.impl("add_.Tensor"' in add and 'm.impl("add.out"' in add and 'm.impl("add.Tensor"' not in add
    assert 'functionalization::commit("aten::add_.Tensor", self, result, false)' in add
    assert 'functionalization::commit("aten::add.out", out, result, true)' in add
    # CompositeImplicitAutograd views run their decomposition at the key, as torchgen registers them.
    assert "return native::reshape(self, shape);" in _text(out, "reshape")
    # Functional operators (the fallback) and hand-written ones (lift_fresh) get no file.
    assert not (out / "ops" / "exp_Functionalize.cpp").exists() or 'm.impl("exp"' not in _text(out, "exp")
    assert not (out / "ops" / "lift_fresh_Functionalize.cpp").exists()
    assert "lift_Functionalize.cpp" in os.listdir(out / "ops") and 'm.impl("lift"' not in _text(out, "lift")


def test_an_edit_rewrites_only_that_groups_functionalize_file(yaml_copy, tmp_path):
    out = tmp_path / "gen"
    assert run_generate(yaml_copy, out).returncode == 0
    before = snapshot(out)
    text = yaml_copy.read_text()
    old = "- func: view(Tensor(a) self, SymInt[] size) -> Tensor(a)"
    assert old in text
    yaml_copy.write_text(text.replace(old, "- func: view(Tensor(a) self, SymInt[] shape) -> Tensor(a)"))
    result = run_generate(yaml_copy, out)
    assert result.returncode == 0, result.stderr
    assert regenerated(result.stdout) == (1, GROUPS)
    rewritten = changed(before, snapshot(out))["rewritten"]
    assert "ops/view_Functionalize.cpp" in rewritten
    assert all(path.startswith("ops/view.") or path.startswith("ops/view_") and not path.startswith("ops/view_copy")
               for path in rewritten), rewritten
