"""pytorch/xla's own backend yaml (../shared/data/pytorch-xla), built against PyTorch 2.13's yaml
with every kernel stubbed: `scons --yaml=<PyTorch's> --missing-kernels=stub
--backend-yaml=<pytorch/xla's>`. This is the CI-sized build: a selective one (--ops), so that the
core library and the backend hold the selected operators' groups only, with the whole of both
yamls read. The library links and loads, every kernel torchgen registers for these groups is in
the dispatcher table, the IR classes compile, calls raise the stub's error naming the kernel,
lowering or shape function, and moving an operator from `supported` to `full_codegen`
regenerates and recompiles that group alone. PyTorch's own lazy backend yaml (namespace
torch::lazy) is built beside it, the same way. The whole build: tests/bench/bench_xla_build.py."""
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

from helpers import copy_built, copy_project, run_scons_loud
from scons_helpers import STEP_COMPILE, rewrite_in_a_later_second

# Operators of pytorch/xla's three kinds: supported (add.Tensor, mm, sum, empty.memory_format),
# full_codegen with a shape function (abs, relu) and with shapes from meta (addcmul, clamp.Tensor).
SELECTION = ("abs", "add.Tensor", "addcmul", "clamp.Tensor", "empty.memory_format", "mm", "relu", "sum")
BACKEND_YAML = os.path.join("xla", "xla_native_functions.yaml")
LAZY_YAML = os.path.join("lazy", "ts_native_functions.yaml")
XLA_OBJECTS = os.path.join("build", "obj", "gen", "backends", "XLA")
REFERENCE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                         "torchgen_backend_registrations_2.13.json")


def _build(root, real_data_dir):
    run = run_scons_loud(root, "-j2", "--cuda=off", f"--yaml={real_data_dir}/native_functions.yaml",
                         "--missing-kernels=stub", "--ops=ops.txt", f"--backend-yaml={BACKEND_YAML},{LAZY_YAML}",
                         timeout=1800)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-5000:]
    return run


@pytest.fixture(scope="module")
def xla_yaml(real_data_dir):
    path = os.path.join(os.path.dirname(real_data_dir), "pytorch-xla", "xla_native_functions.yaml")
    if not os.path.isfile(path):
        pytest.skip("pytorch/xla's backend yaml is not in ../shared/data")
    return path


@pytest.fixture(scope="module")
def xla_build(real_data_dir, xla_yaml, tmp_path_factory):
    root = copy_project(tmp_path_factory.mktemp("real-xla") / "project")
    os.makedirs(os.path.join(root, "xla"))
    shutil.copy(xla_yaml, os.path.join(root, BACKEND_YAML))
    os.makedirs(os.path.join(root, "lazy"))
    shutil.copy(os.path.join(os.path.dirname(real_data_dir), "pytorch-lazy", "ts_native_functions.yaml"),
                os.path.join(root, LAZY_YAML))
    with open(os.path.join(root, "ops.txt"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(SELECTION) + "\n")
    return root, _build(root, real_data_dir)


def _python(root, code: str, backend: str = "xla") -> dict:
    """Runs code with the built package and the backend's library loaded; it prints one JSON value."""
    prelude = ("import json, opdispatch as od\n"
               f"od.load_library({os.path.join(str(root), 'build', 'lib', f'libopdispatch_{backend}.so')!r})\n")
    run = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=os.path.join(root, "build", "python")))
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def _stubs(root) -> str:
    with open(os.path.join(root, XLA_OBJECTS, "missing_kernels.cpp"), encoding="utf-8") as handle:
        return handle.read()


def test_the_backend_builds_from_its_yaml_alone_with_every_function_stubbed(xla_build):
    root, run = xla_build
    assert "[opgen] backend xla: XLA (" in run.stdout and "from xla/xla_native_functions.yaml alone" in run.stdout
    assert "[opgen] backend lazy: Lazy (" in run.stdout and "from lazy/ts_native_functions.yaml alone" in run.stdout
    stubbed = re.search(r"\[opgen\] XLA missing kernels: (\d+) stubbed", run.stdout)
    stubs = _stubs(root)
    assert stubbed and int(stubbed.group(1)) == stubs.count("throw ::op::Error(") > 20
    # Kernels (supported), shape functions (full_codegen, not structured) and lowerings (every IR node).
    assert "XLA kernel torch_xla::XLANativeFunctions::mm of aten::mm is not implemented" in stubs
    assert "XLA shape function torch_xla::compute_shape_abs of aten::abs is not implemented" in stubs
    assert "XLA lowering torch_xla::lower_addcmul of aten::addcmul is not implemented" in stubs
    assert "compute_shape_addcmul" not in stubs  # structured: its shapes come from meta
    # The stand-in IR runtime, in the backend's namespace; the IR classes compiled against it.
    with open(os.path.join(root, XLA_OBJECTS, "standin", "backends", "xla", "ir.h"), encoding="utf-8") as handle:
        assert "namespace torch_xla {" in handle.read()
    assert os.path.exists(os.path.join(root, XLA_OBJECTS, "ops", "clamp_XLA.os"))
    # PyTorch's lazy yaml: torch::lazy's kernels stubbed; its nodes lower to the operators eagerly.
    with open(os.path.join(root, "build", "obj", "gen", "backends", "Lazy", "missing_kernels.cpp"), encoding="utf-8") as handle:
        assert "Lazy kernel torch::lazy::LazyNativeFunctions::empty_symint of aten::empty.memory_format" in handle.read()


@pytest.mark.parametrize("backend, yaml, key", [("xla", "pytorch-xla/xla_native_functions.yaml", "XLA"),
                                                ("lazy", "pytorch-lazy/ts_native_functions.yaml", "Lazy")])
def test_every_kernel_torchgen_registers_for_the_selected_groups_is_in_the_table(xla_build, backend, yaml, key):
    root, _ = xla_build
    with open(REFERENCE, encoding="utf-8") as handle:
        reference = json.load(handle)["backends"][yaml]["keys"]
    groups = {name.split(".")[0] for name in SELECTION}
    # The reference names operators as torchgen registers them ("abs.out"); their group is the base name.
    expected = {key: sorted(op for op in ops if op.split(".")[0].rstrip("_") in groups) for key, ops in reference.items()}
    got = _python(root, backend=backend, code=f"""
        expected = {json.dumps(expected)}
        found = {{}}
        for key, ops in expected.items():
            found[key] = sorted(op for op in ops if key in od.dispatcher.dump_table("aten::" + op))
        print(json.dumps({{"found": found, "errors": od.dispatcher.static_registration_errors()}}))
    """)
    assert got["errors"] == []
    assert got["found"] == expected and len(expected[key]) > 10


def test_calls_raise_the_stubs_error_naming_the_kernel(xla_build):
    root, _ = xla_build
    got = _python(root, """
        od.dispatcher.register_device_type("xla", "XLA")
        x = od.tensor([[1.0, -2.0], [3.0, 4.0]])
        errors = {}
        for name, call in [("empty", lambda: od.empty([2], device="xla")),
                           ("mm", lambda: od.ops.aten.mm(x, x)),
                           ("abs", lambda: od.ops.aten.abs(x)),
                           ("addcmul", lambda: od.ops.aten.addcmul(x, x, x, value=2))]:
            try:
                with od.dispatcher.include_keys("XLA"):
                    call()
                errors[name] = None
            except od.Error as error:
                errors[name] = str(error).splitlines()[0]
        print(json.dumps(errors))
    """)
    assert "XLA kernel torch_xla::XLANativeFunctions::empty_symint of aten::empty.memory_format is not implemented" in got["empty"]
    assert "XLA kernel torch_xla::XLANativeFunctions::mm of aten::mm is not implemented" in got["mm"]
    # full_codegen: the generated kernel runs until the shape function, a stub...
    assert "XLA shape function torch_xla::compute_shape_abs of aten::abs is not implemented" in got["abs"]
    # ... or, structured, until the meta kernel (PyTorch's, stubbed in this build too).
    assert "Meta kernel structured_addcmul::meta of aten::addcmul.out is not implemented" in got["addcmul"]


def test_moving_an_operator_to_full_codegen_rebuilds_its_group_alone(xla_build, real_data_dir, tmp_path):
    root = copy_built(xla_build[0], tmp_path / "project")
    yaml = root / BACKEND_YAML
    text = yaml.read_text()
    assert text.count("\n  - mm\n") == 1 and "\nfull_codegen:\n" in text
    edited = text.replace("\n  - mm\n", "\n", 1).replace("\nfull_codegen:\n", "\nfull_codegen:\n  - mm\n", 1)
    rewrite_in_a_later_second(yaml, edited)
    run = _build(root, real_data_dir)
    assert re.search(r"\[opgen\] (regenerated|materialized from the cache) 1/", run.stdout), run.stdout[-3000:]
    assert "XLA backend groups: mm\n" in run.stdout, run.stdout[-3000:]
    compiled = set(STEP_COMPILE.findall(run.stdout))
    # mm's unit, and the stubs (mm's kernel stub leaves, its lowering's comes)
    assert compiled == {f"{XLA_OBJECTS}/ops/mm_XLA.os", f"{XLA_OBJECTS}/missing_kernels.os"}, compiled
    stubs = _stubs(root)
    assert "XLA lowering torch_xla::lower_mm of aten::mm is not implemented" in stubs
    assert "torch_xla::XLANativeFunctions::mm of" not in stubs
    got = _python(root, """
        x = od.tensor([[1.0, 2.0], [3.0, 4.0]])
        try:
            with od.dispatcher.include_keys("XLA"):
                od.ops.aten.mm(x, x)
            print(json.dumps(None))
        except od.Error as error:
            print(json.dumps(str(error).splitlines()[0]))
    """)
    # Now generated from IR: structured, so its shapes come from meta first.
    assert "Meta kernel structured_mm::meta of aten::mm.out is not implemented" in got
