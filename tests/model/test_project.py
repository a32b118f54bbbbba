"""opgen/project.py: one description of a build, resolved by the rules every front end follows."""
import os

import pytest

from opgen.errors import OpgenError
from opgen.project import available_backends, describe_build
from opgen.runtime_layers import LAYERS, Compiled, compiled_directories, ranks, shipped_header_directories


def _checkout(root, backends=("xla",), stray=("support",)):
    """A checkout's skeleton: yaml/ with tags and derivatives beside the operator yaml, csrc/backends/."""
    (root / "yaml").mkdir()
    for name in ("native_functions.yaml", "tags.yaml", "derivatives.yaml"):
        (root / "yaml" / name).write_text("")
    for name in backends:
        (root / "yaml" / f"{name}_native_functions.yaml").write_text("")
        (root / "csrc" / "backends" / name).mkdir(parents=True)
    for name in stray:  # a directory with no yaml is no backend (csrc/backends/support)
        (root / "csrc" / "backends" / name).mkdir(parents=True, exist_ok=True)
    return root


def test_the_checkouts_own_yaml_gets_its_tags_derivatives_and_kernels(tmp_path, monkeypatch):
    root = _checkout(tmp_path)
    monkeypatch.chdir(root)
    build = describe_build(str(root))
    assert build.yaml == os.path.join("yaml", "native_functions.yaml")
    assert build.tags == os.path.join("yaml", "tags.yaml")
    assert build.derivatives == os.path.join("yaml", "derivatives.yaml") and not build.derivatives_given
    assert build.builtin_kernels and build.backends == () and build.selection is None


def test_another_yaml_gets_no_kernels_and_off_means_no_autograd(tmp_path, monkeypatch):
    root = _checkout(tmp_path)
    (root / "other").mkdir()
    (root / "other" / "native_functions.yaml").write_text("")
    monkeypatch.chdir(root)
    build = describe_build(str(root), yaml="other/native_functions.yaml")
    assert not build.builtin_kernels and build.tags is None and build.derivatives is None
    assert describe_build(str(root), derivatives="off").derivatives is None
    assert describe_build(str(root), yaml="other/native_functions.yaml", kernels="builtin").builtin_kernels


def test_a_backend_is_its_yaml_with_its_kernels_directory(tmp_path, monkeypatch):
    root = _checkout(tmp_path, backends=("xla", "lazy"))
    (root / "yaml" / "tpu_native_functions.yaml").write_text("")  # no csrc/backends/tpu: no backend
    monkeypatch.chdir(root)
    assert available_backends(str(root)) == ["lazy", "xla"]
    assert describe_build(str(root), backends=["xla", "", "lazy", "xla"]).backends == ("lazy", "xla")


def test_every_problem_is_named_at_once(tmp_path, monkeypatch):
    root = _checkout(tmp_path)
    monkeypatch.chdir(root)
    with pytest.raises(OpgenError) as error:
        describe_build(str(root), derivatives="missing.yaml", backends=["tpu"], backend_yamls=["nope.yaml"],
                       selection="ops.txt", kernels="some")
    text = str(error.value)
    assert "missing.yaml: error: no such file" in text and "nope.yaml: error: no such file" in text
    assert "ops.txt: error: no such file" in text and "--kernels=some: not one of auto, builtin, none" in text
    assert "--backend=tpu: no such backend; available: xla" in text


def test_the_layer_table_says_what_the_build_compiles_and_ships():
    assert compiled_directories(builtin_kernels=False) == ("core", "dispatch", "functionalization", "autograd")
    assert set(compiled_directories(builtin_kernels=True)) - set(compiled_directories(False)) == {"native", "native/cpu"}
    assert "backends/support" in shipped_header_directories() and "python" not in shipped_header_directories()
    assert ranks()["core"] < ranks()["dispatch"] < ranks()["ops"] < ranks()["autograd"] < ranks()["backends"]
    assert "python" in [d for layer in LAYERS if layer.compiled is Compiled.EXTENSION for d in layer.directories]
