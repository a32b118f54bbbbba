"""A downstream project's kernel recompiles when the plugin's build rewrites a generated header it
includes within the second of the build before, even with the no-op settings opgen's own
SConstruct uses (content-timestamp, max_drift 1, implicit_cache) on the project's environment:
opgen.scons.library compiles with opgen's rebuild policy (opgen/scons/rebuild.py) whatever
the project's decider. The builds run with helpers.same_second_env(), as in
tests/scons/test_same_second_rewrites.py."""
import os
import re
import time

from helpers import copy_built, same_second_env, snapshot

OBJECT = re.compile(r" -o (\S+\.os) -c ")
GEN = os.path.join("build", "myops", "gen")
SCALE_HEADER = os.path.join("ops", "scale.h")  # scale's API header: its text has the default of f
USES_SCALE = """\
#include "ops/scale.h"

namespace myops_test {
int uses_scale() { return 0; }
}  // namespace myops_test
"""
USES_SCALE_OBJECT = "build/myops/obj/kernels/uses_scale.os"
FAST_NOOP = """\
env.Decider("content-timestamp")  # opgen's own SConstruct's no-op settings
SetOption("max_drift", 1)
SetOption("implicit_cache", 1)
"""


def test_a_downstream_kernel_including_a_header_rewritten_in_the_same_second_recompiles(plugin_venv, downstream_built,
                                                                                         tmp_path):
    project = copy_built(downstream_built.root, tmp_path / "project")
    sconstruct = project / "SConstruct"
    sconstruct.write_text(sconstruct.read_text().replace("\nlib = ", "\n" + FAST_NOOP + "lib = ", 1))
    (project / "kernels" / "uses_scale.cpp").write_text(USES_SCALE)
    first = plugin_venv.scons(project, "-j2", "--verbose")
    assert first.returncode == 0, (first.stdout + first.stderr)[-4000:]
    assert USES_SCALE_OBJECT in OBJECT.findall(first.stdout)

    yaml = project / "myops.yaml"
    original = yaml.read_text()
    for text in (original.replace("float f=2.0", "float f=3.0"), original):  # the edit, then its undo
        before = snapshot(project / GEN)
        while int(time.time()) <= int(os.stat(yaml).st_mtime):  # SCons sees a yaml edit in a later second
            time.sleep(0.05)
        yaml.write_text(text)
        build = plugin_venv.scons(project, "-j2", "--verbose", **same_second_env())
        assert build.returncode == 0, (build.stdout + build.stderr)[-4000:]
        (old_text, old_mtime), (new_text, new_mtime) = before[SCALE_HEADER], snapshot(project / GEN)[SCALE_HEADER]
        assert old_text != new_text and old_mtime // 10**9 == new_mtime // 10**9  # rewritten in its last write's second
        assert USES_SCALE_OBJECT in OBJECT.findall(build.stdout), build.stdout[-4000:]
