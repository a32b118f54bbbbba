"""A downstream project's selective build: OpgenOperatorLibrary(..., ops=FILE) with the pip-installed
opgen. Only the selection's groups are generated, compiled and registered, and only the kernel
files implementing them compile; a bad selection stops at its FILE:LINE with exit status 2."""
import os

import pytest

from helpers import copy_built
from test_downstream import compiled, run_python

HALF = """
- func: myops::half(Tensor x, float factor=0.5) -> Tensor
  dispatch:
    CPU: half_cpu
"""
HALF_KERNEL = """#include "ops/half_native.h"
#include "ops/mul.h"

namespace op {
TensorBase native::half_cpu(const TensorBase& x, double factor) { return op::mul(x, Scalar(factor)); }
}  // namespace op
"""


@pytest.fixture
def project(downstream_built, tmp_path):
    """The built downstream project with a fourth operator (half, its kernel in a file of its own)
    and a library selecting it alone."""
    root = copy_built(downstream_built.root, tmp_path / "project")
    (root / "myops.yaml").write_text((root / "myops.yaml").read_text() + HALF)
    (root / "kernels" / "half.cpp").write_text(HALF_KERNEL)
    (root / "ops.txt").write_text("myops::half\n")
    sconstruct = root / "SConstruct"
    sconstruct.write_text(sconstruct.read_text().replace('kernels=Glob("kernels/*.cpp")',
                                                         'kernels=Glob("kernels/*.cpp"), ops=ARGUMENTS.get("ops")'))
    return root


def test_a_selective_downstream_library_builds_only_the_selected_groups(plugin_venv, project):
    build = plugin_venv.scons(project, "-j2", "ops=ops.txt")
    assert build.returncode == 0, build.stdout + build.stderr
    assert "[opgen] operator selection ops.txt: 1 operators selected, 1/4 groups after closure" in build.stdout
    assert "warning" not in build.stderr  # kernels calling the runtime's operators (ops/mul.h) are fine
    # kernels/myops.cpp implements scale, axpby and sumsq, none selected: it does not compile.
    assert compiled(build) == ["half.os", "half_unit.os"]
    generated = os.listdir(project / "build" / "myops" / "gen" / "ops")
    assert "half_unit.cpp" in generated and not [name for name in generated if name.startswith("scale")]
    assert run_python(plugin_venv, project, """
        print(json.dumps([od.ops.myops.half(od.tensor([2.0, 4.0])).tolist(), hasattr(od.ops.myops, "scale")]))
    """) == [[1.0, 2.0], False]

    full = plugin_venv.scons(project, "-j2")
    assert full.returncode == 0, full.stdout + full.stderr
    assert compiled(full) == []  # the other groups' objects and myops.os are the first build's
    assert run_python(plugin_venv, project, "print(json.dumps(od.ops.myops.scale(od.tensor([1.0])).tolist()))") == [2.0]

    (project / "bad.txt").write_text("myops::half\nmyops::scal\n")
    bad = plugin_venv.scons(project, "ops=bad.txt")
    assert bad.returncode == 2, bad.stdout + bad.stderr
    assert "bad.txt:2: error: unknown operator 'myops::scal'; did you mean 'myops::scale'?" in bad.stderr
    assert "Traceback" not in bad.stderr
