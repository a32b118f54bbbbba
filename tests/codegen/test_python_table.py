"""opgen/gen/layers/python_table.py: the Python package's operator table (which operators are
opdispatch functions and Tensor methods) is deterministic, sorted, and exactly the yaml's
variants."""
import os
import subprocess
import sys

import pytest
import yaml as pyyaml

from generate_helpers import REPO_ROOT, REPO_TAGS, REPO_YAML
from opgen.gen.layers.python_table import BANNER, LeftOut, python_table, render_python_table
from opgen.model import load_model
from opgen.model.loader import build_model
from opgen.yamlio import load_located


@pytest.fixture(scope="module")
def repo_model():
    return load_model(REPO_YAML, REPO_TAGS)


def model_of(text):
    return build_model(load_located(text.encode(), "test.yaml"), "test.yaml", frozenset({"core", "pointwise"}))


def table_module(text: str) -> dict:
    namespace: dict = {}
    exec(compile(text, "_op_table.py", "exec"), namespace)
    return namespace


def test_functions_and_methods_are_exactly_the_yaml_variants(repo_model, yaml_variants_of):
    functions, methods = yaml_variants_of(REPO_YAML)
    table = table_module(render_python_table(repo_model))
    assert {n: set(o) for n, o in table["FUNCTIONS"].items()} == functions
    assert {n: set(o) for n, o in table["METHODS"].items()} == methods
    # The brief's examples, spelled out.
    assert {"add", "sum", "zeros", "arange", "rand", "where", "neg_"} <= set(table["FUNCTIONS"])
    assert {"add_", "sum", "t", "view", "to", "where"} <= set(table["METHODS"])
    assert "add_" not in table["FUNCTIONS"] and "view" not in table["FUNCTIONS"]
    assert "zeros" not in table["METHODS"] and "_to_copy" not in table["METHODS"]
    assert table["FUNCTIONS"]["add"] == ("aten::add.Scalar", "aten::add.Tensor", "aten::add.out")
    assert table["METHODS"]["pow"] == ("aten::pow.Tensor_Scalar", "aten::pow.Tensor_Tensor")


def test_self_positions_and_varargs(repo_model):
    table = python_table(repo_model)
    assert table.self_positions == {"aten::where.self": 1}  # where(Tensor condition, Tensor self, ...)
    assert table.varargs_functions == ("empty", "ones", "rand", "randn", "zeros")
    assert table.varargs_methods == ("expand", "permute", "reshape", "squeeze", "view")


def test_rendered_module_is_the_table_sorted_with_a_banner(repo_model):
    text = render_python_table(repo_model)
    assert text.startswith(BANNER) and text.endswith("\n")
    module = table_module(text)
    table = python_table(repo_model)
    assert module["FUNCTIONS"] == table.functions and module["METHODS"] == table.methods
    assert module["SELF_POSITIONS"] == table.self_positions
    assert module["VARARGS_FUNCTIONS"] == table.varargs_functions
    assert module["VARARGS_METHODS"] == table.varargs_methods
    for mapping in (module["FUNCTIONS"], module["METHODS"]):
        assert list(mapping) == sorted(mapping)
        assert all(list(overloads) == sorted(overloads) for overloads in mapping.values())
    assert os.path.abspath(REPO_ROOT) not in text  # no paths, no timestamps


def test_output_does_not_depend_on_hash_seed_or_entry_order(repo_model, tmp_path):
    script = ("import sys; from opgen.model import load_model; from opgen.gen.layers.python_table import render_python_table; "
              "sys.stdout.write(render_python_table(load_model(sys.argv[1], sys.argv[2])))")
    outputs = set()
    for seed in ("0", "1", "4242"):
        run = subprocess.run([sys.executable, "-c", script, REPO_YAML, REPO_TAGS], cwd=REPO_ROOT, capture_output=True,
                             text=True, env=dict(os.environ, PYTHONHASHSEED=seed), timeout=120)
        assert run.returncode == 0, run.stderr
        outputs.add(run.stdout)
    assert outputs == {render_python_table(repo_model)}
    with open(REPO_YAML, encoding="utf-8") as handle:
        entries = pyyaml.safe_load(handle)
    reversed_yaml = tmp_path / "native_functions.yaml"
    reversed_yaml.write_text(pyyaml.safe_dump(list(reversed(entries)), sort_keys=False))
    assert render_python_table(load_model(str(reversed_yaml), REPO_TAGS)) in outputs


def test_a_yaml_edit_changes_only_what_it_names():
    base = """
- func: scale(Tensor self, float f=2.0) -> Tensor
  variants: function, method
  dispatch:
    CPU: scale
- func: fill_like(int[] size, Tensor self) -> Tensor
  variants: method
  dispatch:
    CPU: fill_like
- func: grow(Tensor self, SymInt[] size) -> Tensor
  variants: method
  dispatch:
    CPU: grow
"""
    table = python_table(model_of(base))
    assert table.functions == {"scale": ("aten::scale",)}
    assert table.methods == {"fill_like": ("aten::fill_like",), "grow": ("aten::grow",), "scale": ("aten::scale",)}
    assert table.self_positions == {"aten::fill_like": 1}
    # x.fill_like(2, 3): the one argument besides self is an int list, wherever self is.
    assert table.varargs_methods == ("fill_like", "grow") and table.varargs_functions == ()
    edited = python_table(model_of(base.replace("variants: function, method", "variants: method", 1)))
    assert edited.functions == {} and edited.methods == table.methods


def test_a_method_without_self_is_an_error():
    with pytest.raises(ValueError, match="aten::make is a method but has no positional 'self'"):
        python_table(model_of("""
- func: make(int[] size) -> Tensor
  variants: method
  dispatch:
    CPU: make
"""))


def test_a_selective_build_lists_its_operators_and_names_what_it_left_out(repo_model):
    full = table_module(render_python_table(repo_model))
    assert full["SELECTION"] is None and full["LEFT_OUT"] == {} and full["LEFT_OUT_FUNCTIONS"] == ()
    kept = frozenset(f.key for f in repo_model.functions if f.root_name not in ("mm", "add"))
    text = render_python_table(repo_model, LeftOut("ops.txt", kept))
    assert text == render_python_table(repo_model, LeftOut("ops.txt", kept))
    table = table_module(text)
    assert table["SELECTION"] == "ops.txt"
    assert "mm" not in table["FUNCTIONS"] and "add" not in table["FUNCTIONS"] and "add_" not in table["METHODS"]
    assert table["FUNCTIONS"]["sum"] == full["FUNCTIONS"]["sum"]
    assert table["LEFT_OUT"] == {"aten::add": ("aten::add.Scalar", "aten::add.Tensor", "aten::add.out"),
                                 "aten::add_": ("aten::add_.Scalar", "aten::add_.Tensor"),
                                 "aten::mm": ("aten::mm", "aten::mm.out")}
    assert table["LEFT_OUT_FUNCTIONS"] == ("add", "mm") and table["LEFT_OUT_METHODS"] == ("add", "add_", "mm")
