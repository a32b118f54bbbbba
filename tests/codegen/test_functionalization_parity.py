"""Functionalize kernels (ops/<g>_Functionalize.cpp): on PyTorch 2.13's yaml opgen registers the
operators torchgen 2.13's RegisterFunctionalization_*.cpp do (tests/data/
torchgen_functionalization_2.13.json, written by tests/bench/bench_functionalize.py
--write-reference), apart from the differences listed with a reason in functionalization_sets.py;
on our yaml, each kind of kernel is generated where it belongs, and an edit to one operator
rewrites only its group's Functionalize file."""
import os

import pytest

from opgen.gen.engine.config import CodegenConfig
from opgen.gen.group import GroupCodegen
from opgen.model.loader import build_model
from opgen.yamlio import load_located

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


# Mutations whose functional variant returns several values: each written argument is committed
# from the functional variant's result that holds its new value (FunctionSchema.written_results).
MUTATIONS_YAML = """
- func: _bn_update(Tensor input, Tensor(a!) running_mean, Tensor(b!) running_var, float momentum) -> (Tensor, Tensor)
  dispatch:
    CPU: bn_update
  autogen: _bn_update_functional, _bn_update.out
- func: _unscale_(Tensor(a!)[] self, Tensor(b!) found_inf, Tensor inv_scale) -> ()
  dispatch:
    CPU: unscale_
  autogen: _unscale, _unscale.out
- func: _update_scale_(Tensor(a!) self, Tensor(b!) growth_tracker, Tensor found_inf, float factor) -> Tensor(a!)
  dispatch:
    CPU: update_scale_
  autogen: _update_scale, _update_scale.out
- func: _det(Tensor A) -> (Tensor result, Tensor LU)
  dispatch:
    CPU: det
- func: _det.result(Tensor A, *, Tensor(a!) result, Tensor(b!) LU) -> (Tensor(a!) result, Tensor(b!) LU)
  dispatch:
    CPU: det_out
"""


def _render(name):
    model = build_model(load_located(MUTATIONS_YAML.encode(), "test.yaml"), "test.yaml", frozenset())
    group = next(g for g in model.operator_groups if g.name == name)
    return GroupCodegen(group, model.indices, CodegenConfig()).render()


def _body(source, wrapper):
    """The lines of one wrapper's definition."""
    start = source.index(f" {wrapper}(")
    return source[start:source.index("\n}\n", start)]


def test_tuple_results_are_written_back_to_every_mutated_argument():
    source = _render("_bn_update")["ops/_bn_update_Functionalize.cpp"]
    # The mutable op: its own results first, then running_mean and running_var.
    mutable = _body(source, "wrapper_Functionalize__bn_update")
    assert "auto result = functionalization::call<ops::_bn_update_functional>(input_, running_mean_, running_var_, momentum);" in mutable
    assert 'functionalization::commit("aten::_bn_update", running_mean, std::get<2>(result), false);' in mutable
    assert 'functionalization::commit("aten::_bn_update", running_var, std::get<3>(result), false);' in mutable
    assert ("return std::make_tuple(functionalization::wrap(std::get<0>(result)), "
            "functionalization::wrap(std::get<1>(result)));") in mutable
    # out=: out0 and out1 are the functional variant's first results, the running stats follow;
    # only the out= arguments may be resized; it returns its out= arguments.
    out = _body(source, "wrapper_Functionalize__bn_update_out")
    assert 'functionalization::commit("aten::_bn_update.out", running_mean, std::get<2>(result), false);' in out
    assert 'functionalization::commit("aten::_bn_update.out", running_var, std::get<3>(result), false);' in out
    assert 'functionalization::commit("aten::_bn_update.out", out0, std::get<0>(result), true);' in out
    assert 'functionalization::commit("aten::_bn_update.out", out1, std::get<1>(result), true);' in out
    assert "return std::forward_as_tuple(out0, out1);" in out


def test_list_results_are_written_back_element_by_element():
    source = _render("_unscale")["ops/_unscale_Functionalize.cpp"]
    inplace = _body(source, "wrapper_Functionalize__unscale_")
    assert "auto result = functionalization::call<ops::_unscale>(self_, found_inf_, inv_scale_);" in inplace
    assert ('for (size_t i = 0; i < self.size(); ++i) '
            'functionalization::commit("aten::_unscale_", self[i], std::get<0>(result)[i], false);') in inplace
    assert 'functionalization::commit("aten::_unscale_", found_inf, std::get<1>(result), false);' in inplace
    # out= (self becomes an input, out the written list): out is result 0, found_inf result 1.
    out = _body(source, "wrapper_Functionalize__unscale_out")
    assert ('for (size_t i = 0; i < out.size(); ++i) '
            'functionalization::commit("aten::_unscale.out", out[i], std::get<0>(result)[i], true);') in out
    assert 'functionalization::commit("aten::_unscale.out", found_inf, std::get<1>(result), false);' in out
    assert out.rstrip().endswith("return;")


def test_functional_variant_of_a_multi_mutation_returns_every_clone():
    files = _render("_update_scale")
    functional = _body(files["ops/_update_scale_CompositeExplicitAutograd.cpp"], "wrapper_CompositeExplicitAutograd__update_scale")
    assert "TensorBase self_result = impl::clone_for_functional(self);" in functional
    assert "TensorBase growth_tracker_result = impl::clone_for_functional(growth_tracker);" in functional
    assert "ops::_update_scale_::call(self_result, growth_tracker_result, found_inf, factor);" in functional
    assert "return std::make_tuple(self_result, growth_tracker_result);" in functional
    # From a mutable op: its own results, then the clones of the arguments it writes.
    bn = _body(_render("_bn_update")["ops/_bn_update_CompositeExplicitAutograd.cpp"],
               "wrapper_CompositeExplicitAutograd__bn_update_functional")
    assert "auto result = ops::_bn_update::call(input, running_mean_result, running_var_result, momentum);" in bn
    assert "return std::make_tuple(std::get<0>(result), std::get<1>(result), running_mean_result, running_var_result);" in bn
    # A list-mutating one clones each element.
    unscale = _body(_render("_unscale")["ops/_unscale_CompositeExplicitAutograd.cpp"], "wrapper_CompositeExplicitAutograd__unscale")
    assert "for (const TensorBase& t : self) self_result.push_back(impl::clone_for_functional(t));" in unscale
    assert "return std::make_tuple(self_result, found_inf_result);" in unscale
    # Functionalizing the in-place op and its out= variant writes both back, each from its own result.
    source = files["ops/_update_scale_Functionalize.cpp"]
    inplace = _body(source, "wrapper_Functionalize__update_scale_")
    assert 'functionalization::commit("aten::_update_scale_", self, std::get<0>(result), false);' in inplace
    assert 'functionalization::commit("aten::_update_scale_", growth_tracker, std::get<1>(result), false);' in inplace
    assert "return self;" in inplace
    out = _body(source, "wrapper_Functionalize__update_scale_out")
    assert 'functionalization::commit("aten::_update_scale.out", out, std::get<0>(result), true);' in out
    assert 'functionalization::commit("aten::_update_scale.out", growth_tracker, std::get<1>(result), false);' in out
    assert "return out;" in out


def test_an_out_argument_named_result_does_not_clash_with_the_functional_result():
    out = _body(_render("_det")["ops/_det_Functionalize.cpp"], "wrapper_Functionalize__det_result")
    assert "auto functional_result = functionalization::call<ops::_det>(A_);" in out
    assert 'functionalization::commit("aten::_det.result", result, std::get<0>(functional_result), true);' in out
    assert "return std::forward_as_tuple(result, LU);" in out
