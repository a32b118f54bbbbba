"""The runtime built from another project's operator yaml: PyTorch 2.13's own entries for 46 of
its operator groups (the ones the runtime's hand-written sources call, plus matmul/mm/view/t/view_as_real,
promote_types (no tensor argument) and what their generated code calls), with `--missing-kernels=stub`. csrc/native implements
yaml/native_functions.yaml, whose kernel names differ (PyTorch's mm.out kernel is mm_out_cpu,
ours mm_out), so `--kernels=auto` compiles none of it: every kernel PyTorch's entries name is
stubbed, the library links and loads, every schema registers with torchgen's keys, and calls
raise opdispatch.Error naming the stub. This is the CI-sized version of
`scons --yaml=<PyTorch's yaml> --missing-kernels=stub` (all 1,342 groups:
tests/bench/bench_pytorch_build.py)."""
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

from helpers import copy_project, run_scons_loud
from opgen.model.loader import load_model
from opgen.selection.subset import subset_yaml

GROUPS = (
    "_to_copy", "add", "as_strided", "as_strided_copy", "as_strided_scatter", "clamp", "clone", "copy", "div", "empty",
    "empty_strided", "eq", "expand", "expand_copy", "ge", "le", "lift", "log", "matmul", "mm", "mul", "ones", "ones_like",
    "permute", "permute_copy", "pow", "promote_types", "reshape", "select", "select_copy", "select_scatter", "slice_scatter", "sub", "sum",
    "t", "t_copy", "transpose", "transpose_copy", "view", "view_as_real", "view_as_real_copy", "view_copy", "where", "zero",
    "zeros", "zeros_like",
)
SUBSET = "pt-subset"


def _subset_yaml(real_data_dir: str) -> str:
    """PyTorch's entries of GROUPS, verbatim and in PyTorch's order (what a selective install ships)."""
    path = os.path.join(real_data_dir, "native_functions.yaml")
    model = load_model(path, os.path.join(real_data_dir, "tags.yaml"))
    with open(path, encoding="utf-8") as handle:
        return subset_yaml(handle.read(), model, GROUPS)


@pytest.fixture(scope="module")
def foreign_build(real_data_dir, tmp_path_factory):
    root = copy_project(tmp_path_factory.mktemp("foreign-yaml"))
    os.makedirs(os.path.join(root, SUBSET))
    with open(os.path.join(root, SUBSET, "native_functions.yaml"), "w", encoding="utf-8") as handle:
        handle.write(_subset_yaml(real_data_dir))
    with open(os.path.join(real_data_dir, "tags.yaml"), encoding="utf-8") as src, \
            open(os.path.join(root, SUBSET, "tags.yaml"), "w", encoding="utf-8") as dst:
        dst.write(src.read())
    build = run_scons_loud(root, "-j2", "--cuda=off", f"--yaml={SUBSET}/native_functions.yaml", "--missing-kernels=stub",
                           timeout=1800)
    output = build.stdout + build.stderr
    assert build.returncode == 0, output[-5000:]
    return root, output


def _python(root, code: str) -> dict:
    """Runs code against the built package; it prints one JSON value."""
    run = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=os.path.join(root, "build", "python")))
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_no_hand_written_kernel_is_compiled_and_every_kernel_is_stubbed(foreign_build):
    root, output = foreign_build
    assert "[opgen] kernels: none (every kernel is missing: --missing-kernels=stub)" in output
    # Only the generated code's helpers (copy_to_out, ...): no kernel of csrc/native.
    assert sorted(os.listdir(os.path.join(root, "build", "obj", "native"))) == ["sibling_variants.os"]
    assert not os.path.exists(os.path.join(root, "build", "bin", "opdispatch_tests"))
    stubbed = re.search(r"\[opgen\] missing kernels: (\d+) stubbed", output)
    assert stubbed, output[-3000:]
    with open(os.path.join(root, "build", "gen", "missing_kernels.cpp"), encoding="utf-8") as handle:
        stubs = handle.read()
    # One definition per stub, each raising with its kernel, key and operator.
    assert int(stubbed.group(1)) == stubs.count("is not implemented") > 40
    assert "CPU kernel mm_out_cpu of aten::mm.out is not implemented" in stubs


def test_every_schema_registers_with_torchgens_keys(foreign_build):
    root, _ = foreign_build
    model = load_model(os.path.join(root, SUBSET, "native_functions.yaml"), os.path.join(root, SUBSET, "tags.yaml"))
    expected = sorted(f"aten::{f.func.name}" for f in model.functions)  # the yaml's and what its autogen: lines add
    got = _python(root, """
        import json, opdispatch as od
        names = [n for n in od.dispatcher.op_names() if n.startswith("aten::")]
        print(json.dumps({"names": names, "add": sorted(od.dispatcher.dump_table("aten::add.Tensor")),
                          "mm": sorted(od.dispatcher.dump_table("aten::mm"))}))
    """)
    assert got["names"] == expected and len(expected) > 100
    # torchgen registers add.Tensor at CPU, CUDA, Meta (structured) and the autograd/functionalize keys;
    # this build has no CUDA and no autograd layer (no derivatives.yaml beside the subset).
    assert {"CPU", "Meta", "Functionalize"} <= set(got["add"])
    assert {"CPU", "Meta"} <= set(got["mm"])


def test_calls_raise_naming_the_stub(foreign_build):
    root, _ = foreign_build
    got = _python(root, """
        import json, opdispatch as od
        x = od.tensor([[1.0, 2.0], [3.0, 4.0]])      # no operator: a copy of the numbers
        errors = {}
        for name, call in [("mm", lambda: od.ops.aten.mm(x, x)),
                           ("matmul", lambda: od.ops.aten.matmul(x, x)),
                           ("add", lambda: od.ops.aten.add(x, x)),
                           ("view_copy", lambda: od.ops.aten.view_copy(x, [4])),
                           ("promote_types", lambda: od.ops.aten.promote_types(od.float32, od.float64))]:
            try:
                call()
                errors[name] = None
            except od.Error as error:
                errors[name] = str(error).splitlines()[0]
        print(json.dumps(errors))
    """)
    # Structured: the functional's generated kernel runs meta() first, and it is the stub.
    assert "Meta kernel structured_mm::meta of aten::mm.out is not implemented" in got["mm"]
    assert "Meta kernel structured_add_Tensor::meta of aten::add.out is not implemented" in got["add"]
    # matmul is CompositeImplicitAutograd: its (hand-written) kernel is the stub.
    assert "CompositeImplicitAutograd kernel matmul of aten::matmul is not implemented" in got["matmul"]
    # view_copy's kernel is generated (CompositeExplicitAutogradNonFunctional): it calls view, a stub.
    assert re.search(r"kernel view of aten::view is not implemented", got["view_copy"]), got["view_copy"]
    # No tensor argument: the call's key is Undefined, which runs the composite kernel, a stub here.
    assert "CompositeImplicitAutograd kernel promote_types of aten::promote_types is not implemented" in got["promote_types"]


def test_a_views_functional_inverse_nothing_defines_is_a_stub(foreign_build):
    """csrc/functionalization defines the inverses of our yaml's views, not view_as_real's: its
    Functionalize kernel's inverse is stubbed (the library links with --no-undefined, so a
    forgotten one is a link error, not a library that fails to load)."""
    root, _ = foreign_build
    with open(os.path.join(root, "build", "gen", "missing_kernels.cpp"), encoding="utf-8") as handle:
        stubs = handle.read()
    assert "Functionalize inverse view_as_real of aten::view_as_real is not implemented" in stubs
    assert "Functionalize inverse transpose_int" not in stubs  # defined by csrc/functionalization


def test_a_method_operators_default_edit_recompiles_its_unit_and_its_includers_only(foreign_build, tmp_path):
    """On PyTorch's own entries: sub.Tensor (a method too) gets a new default alpha. The group
    regenerates alone, and the generated units that recompile are sub's and those whose sources
    include sub's API or method header, nothing else."""
    import time

    from helpers import copy_built
    from scons_helpers import STEP_COMPILE, rewrite_in_a_later_second

    root = copy_built(foreign_build[0], tmp_path / "project")
    yaml = root / SUBSET / "native_functions.yaml"
    schema = "- func: sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    text = yaml.read_text()
    assert text.count(schema) == 1
    rewrite_in_a_later_second(yaml, text.replace(schema, schema.replace("alpha=1", f"alpha={time.time_ns() % 10**9 + 2}")))
    build = run_scons_loud(root, "-j2", "--cuda=off", f"--yaml={SUBSET}/native_functions.yaml", "--missing-kernels=stub")
    output = build.stdout + build.stderr
    assert build.returncode == 0, output[-4000:]
    assert "[opgen] regenerated 1/" in output and "groups: sub" in output
    ops = root / "build" / "gen" / "ops"
    includers = set()
    for name in os.listdir(ops):
        if name.endswith("_unit.cpp"):
            sources = re.findall(r'^#include "(ops/\w+\.cpp)"', (ops / name).read_text(), re.M)
            texts = [(root / "build" / "gen" / source).read_text() for source in sources]
            if any('#include "ops/sub.h"' in t or '#include "ops/sub_methods.h"' in t for t in texts):
                includers.add(name[:-len("_unit.cpp")])
    units = {m.group(1) for m in map(re.compile(r"build/obj/gen/ops/(\w+)_unit\.os$").match, STEP_COMPILE.findall(build.stdout)) if m}
    assert "sub" in units
    assert units == {"sub"} | includers
