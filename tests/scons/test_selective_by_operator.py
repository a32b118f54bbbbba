"""`scons --ops=FILE` with the closure by operator (issue 41): on a recorded MLP forward, the
library registers exactly the closure's operators; a group that only shares a kernel file with a
kept one (cos beside clamp in unary_ops.cpp) is declared, not compiled nor registered, and raises
naming the selection; the same program recorded for inference builds without an autograd kernel
for its operators, and its library holds the loops of the dispatch stubs its kernels call only.
One cold selective build of a copy of the project (ccache shared), then the same copy switched to
the inference selection."""
import os
import subprocess

import pytest

from helpers import PROJECT_INPUTS, copy_project
from scons_helpers import GEN, LIBRARY, ok, scons
from test_selective_build import Closer, run_python

# What record_operators wrote for an MLP forward: `od.addmm(b, x, w).relu()`, `od.matmul(h, w2)`,
# `.sum()`, `.mean()` (tests/selection/test_selection_by_operator.py closes the same yaml).
RECORDED = "operators:\n" + "".join(
    f"  aten::{name}: {{is_root_operator: {root}, is_used_for_training: %(training)s, include_all_overloads: false}}\n"
    for name, root in (("addmm", "true"), ("clamp", "false"), ("matmul", "true"), ("mean", "true"),
                       ("mean.dim", "false"), ("mm", "false"), ("relu", "true"), ("sum", "true"),
                       ("sum.dim_IntList", "false")))
TRAINING, INFERENCE = RECORDED % {"training": "true"}, RECORDED % {"training": "false"}
UNITS = os.path.join("build", "obj", "gen", "ops")


@pytest.fixture(scope="module")
def closer():
    return Closer()


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    root = copy_project(tmp_path_factory.mktemp("by_operator") / "project", PROJECT_INPUTS)
    (root / "ops.yaml").write_text(TRAINING)
    return root, ok(scons(root, "--ops=ops.yaml", target=None))


def test_the_registered_operators_are_exactly_the_closure(mlp, closer):
    root, build = mlp
    closure = closer(TRAINING, "ops.yaml")
    assert f"{len(closure.declared)} declared only" in build.output
    registered = run_python(root, "print(json.dumps(sorted(od._C._op_names())))")
    assert registered == sorted(f"aten::{key}" for key in closure.operators)
    # Declared groups: their headers are generated (unary_ops.cpp includes cos_native.h), their
    # units are not compiled, and the umbrella headers do not list them.
    assert "cos" in closure.declared and (root / GEN / "ops" / "cos_native.h").exists()
    compiled = {name[:-len("_unit.os")] for name in os.listdir(root / UNITS) if name.endswith("_unit.os")}
    assert compiled == set(closure.groups)
    functions_h = (root / GEN / "Functions.h").read_text()
    assert '#include "ops/addmm.h"' in functions_h and '#include "ops/cos.h"' not in functions_h


def test_a_family_files_other_operators_raise_naming_the_selection(mlp):
    root, _ = mlp
    results = run_python(root, """
x = od.tensor([[1.0, 2.0], [3.0, 4.0]])
h = od.addmm(od.tensor([0.5, -0.5]), x, x).relu()
ran = [od.matmul(h, x).sum().item(), h.mean().item()]
errors = {}
for name, call in (("cos", lambda: x.cos()), ("argmax", lambda: od.argmax(x)), ("sin", lambda: od.sin(x))):
    try:
        call()
    except od.Error as error:
        errors[name] = str(error)
print(json.dumps([ran, errors]))
""")
    ran, errors = results
    assert ran == [286.0, 13.5]
    for name in ("cos", "argmax", "sin"):
        assert errors[name] == (f"aten::{name} is not in this build: "
                                "the operator selection ops.yaml (scons --ops) does not include it")


def test_an_inference_selection_builds_no_autograd_kernel(mlp, closer):
    root, _ = mlp
    (root / "ops.yaml").write_text(INFERENCE)
    build = ok(scons(root, "--ops=ops.yaml", target=None))
    closure = closer(INFERENCE, "ops.yaml")
    assert f"{len(closure.groups)} without autograd" in build.output
    ops = os.listdir(root / GEN / "ops")
    assert not [name for name in ops if name.endswith(("_Autograd.cpp", "_ADInplaceOrView.cpp"))
                and name.rsplit("_", 1)[0] in closure.groups]
    tables = run_python(root, """
w = od.tensor([[1.0, 2.0]], requires_grad=True)
y = od.mm(w, od.tensor([[1.0], [2.0]]))
names = sorted(od._C._op_names())
autograd = [n for n in names if any(k.startswith("Autograd") and v == "Autograd kernel"
                                    for k, v in od.dispatcher.dump_table(n).items())]
print(json.dumps([autograd, y.requires_grad, len(names)]))
""")
    autograd, requires_grad, count = tables
    # Only the runtime's own hand-written copy_ kernel (csrc/autograd/variable_type_manual.cpp);
    # composites still decompose at the autograd keys, as in any build.
    assert autograd == ["aten::copy_"] and requires_grad is False
    assert count == len(closure.operators)


def _nm(*args):
    return subprocess.run(["nm", *map(str, args)], capture_output=True, text=True, check=True).stdout


def test_a_selective_library_holds_the_loops_of_the_stubs_its_kernels_call_only(mlp):
    """A dispatch stub's device loop is reachable only through the stub's loop pointer
    (csrc/native/dispatch_stub.h: `op_stub_loop_<stub>_<DEVICE>`, hidden, no static initializer),
    which the kernels calling the stub read: the linker's collection drops the loops of the stubs
    no kept kernel calls. cos's and sin's loops are compiled (unary_kernels.os holds them) but not
    in the inference library; clamp's (relu) and gemm's (addmm) are, and no pointer is exported.
    tests/scons/test_selective_build.py: the full library holds every stub's loop."""
    root, _ = mlp
    library = _nm("-C", root / LIBRARY)
    unary = _nm("-C", root / "build" / "obj" / "native" / "cpu" / "unary_kernels.os")
    for stub, loop in (("cos_stub", "cos_kernel"), ("sin_stub", "sin_kernel"), ("tanh_stub", "tanh_kernel")):
        assert f" op_stub_loop_{stub}_CPU\n" in unary and f"::{loop}(" in unary, stub
        assert f"op_stub_loop_{stub}_" not in library and f"::{loop}(" not in library, stub
    for stub, loop in (("clamp_stub", "clamp_kernel"), ("gemm_stub", "gemm_kernel")):
        assert f" op_stub_loop_{stub}_CPU\n" in library and f"::{loop}(" in library, stub
    assert "op_stub_loop_" not in _nm("-D", root / LIBRARY)
