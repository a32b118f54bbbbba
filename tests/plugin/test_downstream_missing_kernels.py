"""A downstream project bringing up operators before their kernels exist: OpgenOperatorLibrary's
missing_kernels= ("error" by default, $OPGEN_MISSING_KERNELS, or "stub"). The default stops
before linking with each kernel's operator at FILE:LINE (exit status 2); stubbed, the library
builds and loads, a call raises opdispatch.Error naming the kernel, its key and its operator,
the stubs file is byte-stable across builds, and a kernel defined later leaves it (the stubs'
one recompile and the link, beside the new kernel's compile)."""
import os

import pytest

from helpers import copy_built
from test_downstream import compiled, run_python

STUBS = os.path.join("build", "myops", "gen", "missing_kernels.cpp")
ADDED = """
- func: myops::half(Tensor x, float factor=0.5) -> Tensor
  dispatch:
    CPU: half_cpu

- func: myops::cube.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CPU: cube_out

- func: myops::cube(Tensor x) -> Tensor
  structured_delegate: cube.out
"""
HALF_KERNEL = """#include "ops/half_native.h"
#include "ops/mul.h"

namespace op {
TensorBase native::half_cpu(const TensorBase& x, double factor) { return op::mul(x, Scalar(factor)); }
}  // namespace op
"""
CALLS = """
    x = od.tensor([1.0, 2.0])
    results = []
    for call in (lambda: od.ops.myops.half(x).tolist(), lambda: od.ops.myops.cube(x),
                 lambda: od.ops.myops.cube.out(x, out=od.zeros([2])), lambda: od.ops.myops.scale(x).tolist()):
        try:
            results.append(call())
        except od.Error as error:
            results.append(str(error))
    print(json.dumps(results))
"""
CUBE_META = "Meta kernel structured_cube::meta of myops::cube.out is not implemented"


@pytest.fixture
def project(downstream_built, tmp_path):
    return copy_built(downstream_built.root, tmp_path / "project")


def test_missing_kernels_stop_the_build_or_are_stubbed_until_defined(plugin_venv, project):
    yaml_path = project / "myops.yaml"
    text = yaml_path.read_text()
    yaml_path.write_text(text + ADDED)
    half_line = text.count("\n") + 2
    cube_line = half_line + 4
    sconstruct = project / "SConstruct"
    sconstruct.write_text(sconstruct.read_text().replace(
        'kernels=Glob("kernels/*.cpp")', 'kernels=Glob("kernels/*.cpp"), missing_kernels=ARGUMENTS.get("missing")'))

    stopped = plugin_venv.scons(project, "-j2")
    assert stopped.returncode == 2, stopped.stdout + stopped.stderr
    assert (f"myops.yaml:{half_line}: error: CPU kernel half_cpu of myops::half is not defined: "
            "TensorBase op::native::half_cpu(const TensorBase& x, double factor)") in stopped.stderr
    assert (f"myops.yaml:{cube_line}: error: Meta kernel structured_cube::meta of myops::cube.out is not defined: "
            "void op::meta::structured_cube::meta(const TensorBase& x)") in stopped.stderr
    assert (f"myops.yaml:{cube_line}: error: CPU kernel cube_out of myops::cube.out is not defined: "
            "void op::native::structured_cube_out::impl(const TensorBase& x, const TensorBase& out)") in stopped.stderr
    assert "[opgen] 3 kernel(s) the operator yaml names have no definition" in stopped.stderr
    assert "LINK" not in stopped.stdout and "Traceback" not in stopped.stderr

    bad = plugin_venv.scons(project, "missing=maybe")
    assert bad.returncode == 2 and "missing_kernels: 'maybe' is not one of error, stub" in bad.stderr

    stubbed = plugin_venv.scons(project, "-j2", "missing=stub")
    assert stubbed.returncode == 0, stubbed.stdout + stubbed.stderr
    assert "[opgen] missing kernels: 3 stubbed" in stubbed.stdout
    assert compiled(stubbed) == ["missing_kernels.os"]
    assert run_python(plugin_venv, project, CALLS) == [
        "CPU kernel half_cpu of myops::half is not implemented", CUBE_META, CUBE_META, [2.0, 4.0]]

    # Byte-stable: a no-op leaves the stubs alone, and so does a kernel edit that reruns their step.
    before = ((project / STUBS).read_bytes(), os.stat(project / STUBS).st_mtime_ns)
    noop = plugin_venv.scons(project, "-j2", "missing=stub")
    assert noop.returncode == 0 and compiled(noop) == [] and "is up to date" in noop.stdout
    kernels = project / "kernels" / "myops.cpp"
    kernels.write_text(kernels.read_text() + "\nnamespace op { int myops_edited() { return 1; } }\n")
    edited = plugin_venv.scons(project, "-j2", "missing=stub")
    assert edited.returncode == 0, edited.stdout + edited.stderr
    assert compiled(edited) == ["myops.os"] and "[opgen] missing kernels: 3 stubbed" in edited.stdout
    assert ((project / STUBS).read_bytes(), os.stat(project / STUBS).st_mtime_ns) == before

    # The kernel arrives: its stub goes, with the stubs' one recompile and the link.
    (project / "kernels" / "half.cpp").write_text(HALF_KERNEL)
    defined = plugin_venv.scons(project, "-j2", "missing=stub")
    assert defined.returncode == 0, defined.stdout + defined.stderr
    assert compiled(defined) == ["half.os", "missing_kernels.os"]
    assert "[opgen] missing kernels: 2 stubbed" in defined.stdout
    assert "half_cpu" not in (project / STUBS).read_text()
    assert run_python(plugin_venv, project, CALLS) == [[0.5, 1.0], CUBE_META, CUBE_META, [2.0, 4.0]]
