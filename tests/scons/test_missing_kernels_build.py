"""Kernels the yaml names that no source defines, in this repository's own build: every kernel
symbol the built groups use is one of their declarations exactly (so the stubs' signatures are
the headers'), and an operator added without its kernels stops the default build
(--missing-kernels=error) with FILE:LINE and exit status 2, or builds with
--missing-kernels=stub into a library whose operator raises opdispatch.Error naming the kernel.
The whole edit cycle (byte-stable stubs, a kernel added later) is tests/plugin/test_downstream_missing_kernels.py."""
import os
import subprocess
import sys
import textwrap

from helpers import copy_built
from opgen.gen.engine.config import DEFAULT_KEYS, CodegenConfig
from opgen.gen.group import GroupCodegen
from opgen.link_check import IN_TREE_SCOPES, undefined_by_object
from opgen.model.loader import load_model
from scons_helpers import GEN, ok, scons

YAML = os.path.join("yaml", "native_functions.yaml")
ADDED = """
- func: stubbed_half(Tensor self, float factor) -> Tensor
  dispatch:
    CPU: stubbed_half_cpu

- func: stubbed_cube.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CPU: stubbed_cube_out

- func: stubbed_cube(Tensor self) -> Tensor
  structured_delegate: stubbed_cube.out
"""


def test_every_kernel_symbol_the_groups_use_is_one_of_their_declarations(built_project):
    root = built_project.root
    model = load_model(str(root / YAML), str(root / "yaml" / "tags.yaml"))
    config = CodegenConfig(keys=DEFAULT_KEYS)
    objects = {str(root / "build" / "obj" / "gen" / "ops" / f"{g.name}_unit.os"): g for g in model.operator_groups}
    unmatched, count = [], 0
    for path, symbols in undefined_by_object(sorted(objects), IN_TREE_SCOPES).items():
        group = objects[path]
        declared = {d.symbol for d in GroupCodegen(group, model.indices, config).declarations}
        count += len(symbols)
        unmatched += [(group.name, s) for s in sorted(symbols) if s not in declared]
    assert count > 100 and unmatched == []


def test_an_operator_without_kernels_stops_the_build_or_is_stubbed(built_project, tmp_path):
    project = copy_built(built_project.root, tmp_path / "project")
    yaml_path = project / YAML
    text = yaml_path.read_text()
    yaml_path.write_text(text + ADDED)
    half_line = text.count("\n") + 2
    cube_line = half_line + 4

    stopped = scons(project, target=None)
    assert stopped.result.returncode == 2, stopped.output[-3000:]
    assert (f"yaml/native_functions.yaml:{half_line}: error: CPU kernel stubbed_half_cpu of aten::stubbed_half is "
            "not defined: TensorBase op::native::stubbed_half_cpu(const TensorBase& self, double factor)") in stopped.output
    assert (f"yaml/native_functions.yaml:{cube_line}: error: CPU kernel stubbed_cube_out of aten::stubbed_cube.out is "
            "not defined: void op::native::structured_stubbed_cube_out::impl(") in stopped.output
    assert f"yaml/native_functions.yaml:{cube_line}: error: Meta kernel structured_stubbed_cube::meta" in stopped.output
    assert "[opgen] 3 kernel(s) the operator yaml names have no definition" in stopped.output
    assert not stopped.linked and "Traceback" not in stopped.output

    stubbed = ok(scons(project, "--missing-kernels=stub", target=None))
    assert "[opgen] missing kernels: 3 stubbed" in stubbed.output
    assert stubbed.compiled == {"build/obj/gen/missing_kernels.os"} and stubbed.linked
    stubs = (project / GEN / "missing_kernels.cpp").read_text()
    assert '#include "ops/stubbed_cube_native.h"' in stubs and '#include "ops/stubbed_half_native.h"' in stubs
    program = textwrap.dedent("""
        import opdispatch as od
        x = od.tensor([1.0, 2.0])
        for call in (lambda: od.ops.aten.stubbed_half(x, 2.0), lambda: od.ops.aten.stubbed_cube.out(x, out=od.zeros([2]))):
            try:
                call()
                print("returned")
            except od.Error as error:
                print(error)
    """)
    run = subprocess.run([sys.executable, "-c", program], cwd=project, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(project / "build" / "python")})
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines() == [
        "CPU kernel stubbed_half_cpu of aten::stubbed_half is not implemented",
        "Meta kernel structured_stubbed_cube::meta of aten::stubbed_cube.out is not implemented"]

    # The stubs file is rendered only when what it is rendered from changed: an edit of a stubbed
    # operator's default leaves its stub as it was (the stubs' key, beside the symbols' memo), and
    # a deleted stubs file comes back.
    stubs_path = project / GEN / "missing_kernels.cpp"
    before = stubs_path.stat().st_mtime_ns
    yaml_path.write_text(yaml_path.read_text().replace("stubbed_half(Tensor self, float factor)",
                                                        "stubbed_half(Tensor self, float factor=3.0)"))
    edited = ok(scons(project, "--missing-kernels=stub", target=None))
    assert "build/obj/gen/missing_kernels.os" not in edited.compiled
    assert stubs_path.stat().st_mtime_ns == before and stubs_path.read_text() == stubs
    stubs_path.unlink()
    again = ok(scons(project, "--missing-kernels=stub", target=None))
    assert stubs_path.read_text() == stubs and "[opgen] missing kernels: 3 stubbed" in again.output
