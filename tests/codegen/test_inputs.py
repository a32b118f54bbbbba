"""opgen.cache.inputs: a group's inputs field by field, their key, and explain() naming what changed."""
import dataclasses
import json
import os
import shutil
import subprocess
import sys

import pytest

from generate_helpers import REPO_ROOT, REPO_TAGS, REPO_YAML
from opgen.cache import inputs as inputs_module
from opgen.gen.engine.config import DEFAULT_KEYS, CodegenConfig
from opgen.gen.sections import backend_jobs, in_tree_jobs
from opgen.cache.inputs import (CODEGEN_PACKAGES, InputField, Inputs, backend_group_inputs, codegen_sources, explain,
                              group_inputs, inputs_key, parse_stored_inputs, source_fingerprints, stored_inputs)
from opgen.model import load_model
from opgen.model.backend_yaml import parse_backend_yaml
from opgen.model.dispatch_keys import DispatchKey
from opgen.model.grouping import OperatorGroup

XLA_YAML = os.path.join(REPO_ROOT, "yaml", "xla_native_functions.yaml")
ADD_OUT = "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"
ADD_SCALAR_ENTRY = """- func: add.Scalar(Tensor self, Scalar other, *, Scalar alpha=1) -> Tensor
  device_check: NoCheck
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: add_scalar
  tags: pointwise

"""


@pytest.fixture(scope="module")
def repo_model():
    return load_model(REPO_YAML, REPO_TAGS)


def group_of(model, name: str) -> OperatorGroup:
    return next(g for g in model.operator_groups if g.name == name)


def add_inputs(model, config: CodegenConfig = CodegenConfig()) -> Inputs:
    return group_inputs(group_of(model, "add"), model.indices, config)


def edited_model(yaml_copy, *edits: tuple[str, str]):
    """The model of the yaml copy with each (old, new) text replaced exactly once."""
    text = yaml_copy.read_text()
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    yaml_copy.write_text(text)
    return load_model(str(yaml_copy), str(yaml_copy.parent / "tags.yaml"))


# ----- explain names the changed field -----

def test_first_build_and_unchanged(repo_model):
    assert explain(None, add_inputs(repo_model)) == ["first build of this group"]
    assert explain(add_inputs(repo_model), add_inputs(repo_model)) == ["inputs unchanged"]


def test_default_edit_names_the_argument(repo_model, yaml_copy):
    model = edited_model(yaml_copy, (ADD_OUT, ADD_OUT.replace("alpha=1", "alpha=2")))
    assert explain(add_inputs(repo_model), add_inputs(model)) == ["add.out: default of alpha changed 1 -> 2"]


def test_type_edit_names_the_argument(repo_model, yaml_copy):
    model = edited_model(yaml_copy, (ADD_OUT, ADD_OUT.replace("Scalar alpha", "int alpha")))
    assert explain(add_inputs(repo_model), add_inputs(model)) == ["add.out: type of alpha changed Scalar -> int"]


def test_annotation_edit_names_argument_and_returns(repo_model, yaml_copy):
    model = edited_model(yaml_copy, (ADD_OUT, ADD_OUT.replace("a!", "b!")))
    assert explain(add_inputs(repo_model), add_inputs(model)) == [
        "add.out: annotation of out changed a! -> b!", "add.out: returns changed Tensor(a!) -> Tensor(b!)"]


def test_added_and_removed_argument_without_an_order_line(repo_model, yaml_copy):
    model = edited_model(yaml_copy, (ADD_OUT, ADD_OUT.replace("alpha=1,", "alpha=1, Scalar beta=1,")))
    assert explain(add_inputs(repo_model), add_inputs(model)) == ["add.out: argument beta added"]
    assert explain(add_inputs(model), add_inputs(repo_model)) == ["add.out: argument beta removed"]


def test_moved_argument_changes_the_order(repo_model, yaml_copy):
    model = edited_model(yaml_copy, (ADD_OUT, ADD_OUT.replace("other, *, Scalar alpha=1,", "other, Scalar alpha=1, *,")))
    assert explain(add_inputs(repo_model), add_inputs(model)) == [
        "add.out: order of arguments changed self, other, *, alpha, out -> self, other, alpha, *, out"]


def test_added_and_removed_overload(repo_model, yaml_copy):
    without = edited_model(yaml_copy, (ADD_SCALAR_ENTRY, ""))
    assert explain(add_inputs(without), add_inputs(repo_model)) == ["add.Scalar: new overload"]
    assert explain(add_inputs(repo_model), add_inputs(without)) == ["add.Scalar: overload removed"]


def test_structured_flip(repo_model, yaml_copy):
    model = edited_model(
        yaml_copy,
        ("  structured: True\n  structured_inherits: TensorIteratorBase\n  dispatch:\n    CPU, CUDA: add_out\n",
         "  dispatch:\n    CPU, CUDA: add_out\n"),
        ("- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n  device_check: NoCheck\n"
         "  structured_delegate: add.out\n",
         "- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n  device_check: NoCheck\n"),
        ("- func: add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)\n  device_check: NoCheck\n"
         "  structured_delegate: add.out\n",
         "- func: add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)\n  device_check: NoCheck\n"))
    lines = explain(add_inputs(repo_model), add_inputs(model))
    assert "add.out: structured changed True -> False" in lines
    assert "add.out: kernel at CPU structured changed True -> False" in lines
    assert "add.Tensor: structured_delegate changed add.out -> None" in lines


def test_structured_flip_alone_is_one_line(repo_model):
    group = group_of(repo_model, "add")
    flipped = tuple(dataclasses.replace(f, structured=False) if str(f.func.name) == "add.out" else f
                    for f in group.functions)
    new = group_inputs(OperatorGroup("add", flipped), repo_model.indices, CodegenConfig())
    assert explain(add_inputs(repo_model), new) == ["add.out: structured changed True -> False"]


def test_dispatch_kernel_rename(repo_model, yaml_copy):
    model = edited_model(yaml_copy, ("    CPU, CUDA: add_out\n", "    CPU: add_out_cpu\n    CUDA: add_out\n"))
    assert explain(add_inputs(repo_model), add_inputs(model)) == ["add.out: kernel at CPU changed add_out -> add_out_cpu"]


def test_keys_change(repo_model):
    before, after = CodegenConfig(), CodegenConfig(DEFAULT_KEYS + (DispatchKey.CUDA,))
    assert explain(add_inputs(repo_model, before), add_inputs(repo_model, after)) == [
        f"dispatch keys changed: {before.describe()} -> {after.describe()} (+ CUDA)"]


# ----- the codegen sources, file by file -----

@pytest.fixture
def opgen_copy(tmp_path):
    """opgen's codegen packages in a temp dir, to edit."""
    root = tmp_path / "opgen"
    for package in CODEGEN_PACKAGES:
        shutil.copytree(os.path.join(REPO_ROOT, "opgen", package), root / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return root


def explain_after_edit(repo_model, monkeypatch, opgen_copy, relative: str, text: str) -> list[str]:
    old = add_inputs(repo_model)
    (opgen_copy / relative).write_text(text)
    edited = source_fingerprints(str(opgen_copy))
    monkeypatch.setattr(inputs_module, "codegen_sources", lambda: edited)
    return explain(old, add_inputs(repo_model))


def test_a_copy_of_the_sources_has_the_same_fingerprints(opgen_copy):
    assert source_fingerprints(str(opgen_copy)) == codegen_sources()
    labels = [label for label, _ in codegen_sources()]
    assert "template kernel_registration.cpp.j2" in labels and "source gen/layers/kernels.py" in labels


def test_template_change(repo_model, monkeypatch, opgen_copy):
    template = opgen_copy / "templates" / "kernel_registration.cpp.j2"
    lines = explain_after_edit(repo_model, monkeypatch, opgen_copy, "templates/kernel_registration.cpp.j2",
                               template.read_text() + "// edited\n")
    assert lines == ["template kernel_registration.cpp.j2 changed"]


def test_source_change(repo_model, monkeypatch, opgen_copy):
    kernels = (opgen_copy / "gen" / "layers" / "kernels.py").read_text()
    assert explain_after_edit(repo_model, monkeypatch, opgen_copy, "gen/layers/kernels.py", kernels + "\n# edited\n") == [
        "source gen/layers/kernels.py changed"]


def test_new_template(repo_model, monkeypatch, opgen_copy):
    assert explain_after_edit(repo_model, monkeypatch, opgen_copy, "templates/extra.h.j2", "x\n") == [
        "new template extra.h.j2"]


# ----- backends -----

def test_new_backend(repo_model):
    backend = parse_backend_yaml(XLA_YAML, repo_model)
    in_tree = add_inputs(repo_model)
    with_backend = {**in_tree, **backend_group_inputs(group_of(repo_model, "add"), backend)}
    assert explain(None, backend_group_inputs(group_of(repo_model, "add"), backend)) == ["first build of this group"]
    assert explain(in_tree, with_backend) == ["add.Tensor: new kernel at XLA (add)", "new backend XLA"]
    assert explain(with_backend, in_tree) == ["add.Tensor: kernel at XLA removed (add)", "backend XLA removed"]


def test_backend_identity_change_and_no_path(repo_model):
    backend = parse_backend_yaml(XLA_YAML, repo_model)
    old = backend_group_inputs(group_of(repo_model, "add"), backend)
    moved = dataclasses.replace(backend, source="/elsewhere/xla.yaml")
    assert backend_group_inputs(group_of(repo_model, "add"), moved) == old
    renamed = dataclasses.replace(backend, cpp_namespace="op::other")
    [line] = explain(old, backend_group_inputs(group_of(repo_model, "add"), renamed))
    assert line.startswith("backend XLA changed namespace=op::xla ") and "-> namespace=op::other " in line


# ----- keys and determinism -----

def test_keys_are_the_hash_of_the_inputs(repo_model):
    backend = parse_backend_yaml(XLA_YAML, repo_model)
    config = CodegenConfig()
    keys = set()
    for group, job in zip(repo_model.operator_groups, in_tree_jobs(repo_model, config)):
        assert job.key == inputs_key(group_inputs(group, repo_model.indices, config))
        keys.add(job.key)
    assert len(keys) == len(repo_model.operator_groups)
    add = group_of(repo_model, "add")
    [add_job] = [job for job in backend_jobs(repo_model, backend) if job.name == "add@XLA"]
    assert add_job.key == inputs_key(backend_group_inputs(add, backend))


def test_inputs_key_ignores_insertion_order_and_keeps_boundaries():
    a, b, ab = InputField(None, "a"), InputField(None, "b"), InputField(None, "ab")
    assert inputs_key({a: "1", b: "2"}) == inputs_key({b: "2", a: "1"})
    assert inputs_key({a: "bc"}) != inputs_key({ab: "c"})


def test_inputs_key_hashes_the_stored_text(repo_model):
    """Keys (and the index's JSON) are of the fields' text, which parses back to the same fields."""
    inputs = add_inputs(repo_model)
    stored = stored_inputs(inputs)
    assert stored["add.out: argument alpha"] == "Scalar alpha=1" and stored["dispatch keys"]
    assert parse_stored_inputs(stored) == inputs
    assert inputs_key(inputs) == inputs_key(parse_stored_inputs(json.loads(json.dumps(stored))))
    assert InputField.parse("add.out: kernel at CPU structured") == InputField("add.out", "kernel at CPU structured")
    assert InputField.parse("source gen/layers/kernels.py") == InputField(None, "source gen/layers/kernels.py")


def test_no_absolute_paths(repo_model):
    backend = parse_backend_yaml(XLA_YAML, repo_model)
    for group in repo_model.operator_groups:
        for inputs in (group_inputs(group, repo_model.indices, CodegenConfig()), backend_group_inputs(group, backend)):
            text = json.dumps(stored_inputs(inputs))
            assert REPO_ROOT not in text and "xla_native_functions.yaml" not in text


DUMP_INPUTS = """
import json, sys
from opgen.gen.engine.config import CodegenConfig
from opgen.cache.inputs import backend_group_inputs, group_inputs, stored_inputs
from opgen.model import load_model
from opgen.model.backend_yaml import parse_backend_yaml
model = load_model(sys.argv[1], sys.argv[2])
backend = parse_backend_yaml(sys.argv[3], model)
print(json.dumps([[stored_inputs(group_inputs(g, model.indices, CodegenConfig())), stored_inputs(backend_group_inputs(g, backend))]
                  for g in model.operator_groups]))
"""


def test_inputs_identical_across_hash_seeds():
    outputs = set()
    for seed in ("0", "1", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        result = subprocess.run([sys.executable, "-c", DUMP_INPUTS, REPO_YAML, REPO_TAGS, XLA_YAML], cwd=REPO_ROOT,
                                env=env, capture_output=True, text=True, timeout=120, check=True)
        outputs.add(result.stdout)
    assert len(outputs) == 1


def reversed_entries(text: str) -> str:
    """The yaml's entries in reverse order (comments before the first entry stay first)."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.startswith("- func:")]
    entries = ["".join(lines[a:b]) for a, b in zip(starts, starts[1:] + [len(lines)])]
    entries = [entry if entry.endswith("\n\n") else entry.rstrip("\n") + "\n\n" for entry in entries]
    return "".join(lines[:starts[0]]) + "".join(reversed(entries))


def test_inputs_identical_across_entry_order(repo_model, yaml_copy):
    yaml_copy.write_text(reversed_entries(yaml_copy.read_text()))
    model = load_model(str(yaml_copy), str(yaml_copy.parent / "tags.yaml"))
    assert [f.func.name for f in model.functions] != [f.func.name for f in repo_model.functions]
    backend, backend_again = parse_backend_yaml(XLA_YAML, repo_model), parse_backend_yaml(XLA_YAML, model)
    for group in repo_model.operator_groups:
        other = group_of(model, group.name)
        assert group_inputs(other, model.indices, CodegenConfig()) == group_inputs(group, repo_model.indices, CodegenConfig())
        assert backend_group_inputs(other, backend_again) == backend_group_inputs(group, backend)
