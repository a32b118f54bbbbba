"""The C++ runtime's layers hold: every `#include "..."` of csrc/, and of the code opgen generates
for the repository's yamls, points at its own layer or a lower one (the C++ twin of
test_import_directions.py; Chromium's checkdeps, LLVM's library layering).

A layer may include itself and the layers of a lower rank, never a layer of the same rank or a
higher one. Where a file belongs:
- csrc/<dir>/...: the layer named <dir>;
- generated headers (build/gen): ops/<g>_ops.h, _native.h, _meta.h, ops/<g>.h and the umbrellas
  (Functions.h, Operators.h, NativeFunctions.h, MetaFunctions.h, MethodOperators.h) are "ops",
  the operator library's generated interface: only core/ and dispatch/ types. ops/<g>_methods.h
  and TensorMethods.h are op::Tensor's methods: "api".
- generated sources belong to the layer they register kernels for: ops/<g>_Functionalize.cpp to
  functionalization, the other ops/<g>_<Key>.cpp and ops/<g>_schema.cpp to native, and
  backends/<Key>/... to backends. ops/<g>_unit.cpp only concatenates its group's sources, each
  checked on its own, and is skipped.
- api/ (op::Tensor with every operator's methods) is for user programs: nothing in the library
  includes it (OP_ASSERT_NO_TENSOR_METHODS), so it ranks with python/, above the backends.
  tests/ (the C++ unit tests) may include everything but the backends and the bindings.
Within backends/, a backend includes its own directory (csrc/backends/<name>/ and the generated
backends/<Key>/, <Key> being <name> in any case) and backends/support/, never another backend.
"""
import os
import re
import subprocess
import sys

import pytest

from opgen.runtime_layers import ranks

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CSRC = os.path.join(REPO, "csrc")

# The declared order: a layer may include itself and the layers of a lower rank.
LAYERS = ranks()  # opgen/runtime_layers.py: the table the build, the SDK and selective builds read
SHARED_BACKEND_DIR = "support"  # csrc/backends/support/: what every backend may use

UMBRELLAS = {"Functions.h", "Operators.h", "NativeFunctions.h", "MetaFunctions.h", "MethodOperators.h"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCES = (".h", ".cpp", ".cu", ".cuh")


def _generated_layer(path: str):
    """(layer, backend or None) of a path under build/gen; None for files not checked."""
    parts = path.split("/")
    if parts[0] == "backends":
        return "backends", parts[1] if len(parts) > 2 else None
    name = parts[-1]
    if name == "TensorMethods.h" or name.endswith("_methods.h"):
        return "api", None
    if len(parts) == 1 and name in UMBRELLAS:
        return "ops", None
    if parts[0] == "ops" and name.endswith(".h"):
        return "ops", None
    if parts[0] == "ops" and name.endswith("_unit.cpp"):
        return None
    if parts[0] == "ops" and name.endswith("_Functionalize.cpp"):
        return "functionalization", None
    if parts[0] == "ops" and name.endswith(".cpp"):
        return "native", None
    raise AssertionError(f"generated file {path}: which layer is it? (tests/test_include_layers.py)")


def _target_layer(included: str):
    """(layer, backend or None) of an include path as the compiler resolves it (-Icsrc -Ibuild/gen)."""
    first = included.split("/")[0]
    if first == "backends":
        parts = included.split("/")
        return "backends", parts[1] if len(parts) > 2 else None
    if os.path.isdir(os.path.join(CSRC, first)) and "/" in included:
        return first, None
    return _generated_layer(included)


def _allowed(layer, backend, target_layer, target_backend) -> bool:
    if layer == "backends" and target_layer == "backends":
        return target_backend == SHARED_BACKEND_DIR or (backend or "").lower() == (target_backend or "").lower()
    return target_layer == layer or LAYERS[target_layer] < LAYERS[layer]


def _violations(root: str, files: list, where) -> list:
    """'file:line: ...' for every include of `files` (paths relative to root) against the order."""
    wrong = []
    for rel in files:
        owner = where(rel)
        if owner is None:
            continue
        layer, backend = owner
        with open(os.path.join(root, rel), encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                included = match.group(1)
                beside = os.path.join(os.path.dirname(rel), included)
                if os.path.isfile(os.path.join(root, beside)):  # "harness.h" from csrc/tests/
                    target = where(os.path.normpath(beside))
                else:
                    target = _target_layer(included)
                if target is None:
                    continue
                if target[0] not in LAYERS:
                    wrong.append(f"{rel}:{number}: includes \"{included}\" of unknown layer {target[0]!r}")
                elif not _allowed(layer, backend, *target):
                    wrong.append(f"{rel}:{number}: {layer} includes \"{included}\" ({target[0]}"
                                 + (f", backend {target[1]}" if target[0] == "backends" else "") + ")")
    return wrong


def _csrc_files() -> list:
    found = []
    for directory, _, names in os.walk(CSRC):
        for name in sorted(names):
            if name.endswith(SOURCES):
                found.append(os.path.relpath(os.path.join(directory, name), CSRC).replace(os.sep, "/"))
    return sorted(found)


def _csrc_layer(rel: str):
    parts = rel.split("/")
    if parts[0] == "backends":
        return "backends", parts[1]
    return parts[0], None


def test_every_csrc_directory_has_a_layer():
    directories = {name for name in os.listdir(CSRC) if os.path.isdir(os.path.join(CSRC, name))}
    assert directories <= set(LAYERS), f"csrc/ directories without a layer: {sorted(directories - set(LAYERS))}"


def test_csrc_includes_point_down_the_layers():
    wrong = _violations(CSRC, _csrc_files(), _csrc_layer)
    assert not wrong, "includes against the layers (" + " < ".join(sorted(LAYERS, key=LAYERS.get)) + "):\n  " \
        + "\n  ".join(wrong)


def test_the_checker_sees_a_wrong_include(tmp_path):
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "bad.h").write_text('#include "core/fine.h"\n\n#include "dispatch/dispatcher.h"\n')
    (tmp_path / "backends" / "xla").mkdir(parents=True)
    (tmp_path / "backends" / "xla" / "k.cpp").write_text('#include "backends/lazy/ir.h"\n#include "backends/XLA/ops/a.h"\n')
    wrong = _violations(str(tmp_path), ["core/bad.h", "backends/xla/k.cpp"], _csrc_layer)
    assert wrong == ['core/bad.h:3: core includes "dispatch/dispatcher.h" (dispatch)',
                     'backends/xla/k.cpp:1: backends includes "backends/lazy/ir.h" (backends, backend lazy)']


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> str:
    """What opgen generates for the repository's yaml and each backend yaml, in one tree."""
    out = tmp_path_factory.mktemp("layers-gen")
    yaml_dir = os.path.join(REPO, "yaml")
    yaml = os.path.join(yaml_dir, "native_functions.yaml")
    backends = sorted(n for n in os.listdir(yaml_dir) if n.endswith("_native_functions.yaml"))
    for extra in [[]] + [["--backend-yaml", os.path.join(yaml_dir, n)] for n in backends]:
        run = subprocess.run([sys.executable, "-m", "opgen", "generate", yaml, "--out", str(out), "--no-cache", *extra],
                             cwd=REPO, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-2000:]
    return str(out)


def test_generated_includes_point_down_the_layers(generated):
    files = sorted(os.path.relpath(os.path.join(d, n), generated).replace(os.sep, "/")
                   for d, _, names in os.walk(generated) for n in names if n.endswith(SOURCES))
    assert any(f.endswith("_Functionalize.cpp") for f in files) and any(f.startswith("backends/") for f in files)
    wrong = _violations(generated, files, _generated_layer)
    assert not wrong, "generated includes against the layers:\n  " + "\n  ".join(wrong)
