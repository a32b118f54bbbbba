"""The precompiled_header tool (opgen/scons/toolset), through real SCons builds of a tiny C++ project: the .gch is
built from the environment's flags, used by every object (GCC would say otherwise through
-Winvalid-pch), rebuilt with what it includes, unused wherever ccache or distcc compiles, and
switching it on or off rebuilds nothing."""
import os
import shutil

import pytest

from helpers import REPO_ROOT, run_scons

TOOLSET = os.path.join(REPO_ROOT, "opgen", "scons", "toolset")

SCONSTRUCT = f"""\
import os, sys
sys.path.insert(0, {REPO_ROOT!r})  # the toolset's tools import opgen.scons.toolset
env = Environment(
    tools=["default", "ccache", "precompiled_header"],
    toolpath=[{TOOLSET!r}],
    ENV={{"PATH": os.environ["PATH"]}},
    CCACHE_MODE=ARGUMENTS.get("ccache", "off"),
    PCH_MODE=ARGUMENTS.get("pch", "auto"),
    CXXFLAGS=["-std=c++17", "-O1"],
    CPPPATH=["#include"],
)
print("pch active:", env.PrecompiledHeaderActive())
env.UsePrecompiledHeader("#include/common/prelude.h", "common/prelude.h", "#build/pch")
objects = env.SharedObject(["src/a.cpp", "src/b.cpp"])
Default(env.SharedLibrary("build/both", objects))
"""

SOURCES = {
    "include/common/prelude.h": "#ifndef PRELUDE_H\n#define PRELUDE_H\n#include \"common/value.h\"\n#include <string>\n#endif\n",
    "include/common/value.h": "#pragma once\ninline int value() { return 1; }\n",
    "src/a.cpp": '#include "common/value.h"\nint a() { return value(); }\n',
    "src/b.cpp": '#include <string>\nstd::string b() { return "b"; }\n',
}
GCH = "build/pch/common/prelude.h.gch"


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    for name, text in {"SConstruct": SCONSTRUCT, **SOURCES}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def scons(project, *args):
    return run_scons(project, *args, env={"CCACHE_DIR": str(project / ".ccache")}, timeout=300)


def build(project, *args):
    result = scons(project, *args)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def compiled(result):
    """The objects (and headers) the build compiled, by target."""
    return sorted(line.split(" -o ")[1].split()[0] for line in result.stdout.splitlines() if " -c " in line)


def test_objects_are_compiled_with_the_precompiled_header(project):
    result = build(project, "pch=on")
    assert "pch active: True" in result.stdout
    assert compiled(result) == sorted([GCH, "src/a.os", "src/b.os"])
    assert (project / GCH).is_file()
    objects = [line for line in result.stdout.splitlines() if line.endswith((".cpp",)) and " -c " in line]
    assert len(objects) == 2 and all("-include common/prelude.h" in line for line in objects)
    # -Winvalid-pch: GCC names a .gch it could not use; a usable one is silent.
    assert "invalid" not in result.stderr.lower() and "warning" not in result.stderr.lower(), result.stderr


def test_gch_is_built_before_any_object(project):
    result = build(project, "pch=on", "-j2")
    order = compiled_in_order(result)
    assert order[0] == GCH, order


def compiled_in_order(result):
    return [line.split(" -o ")[1].split()[0] for line in result.stdout.splitlines() if " -c " in line]


def test_a_header_of_the_precompiled_one_rebuilds_it_and_every_object(project):
    build(project, "pch=on")
    assert compiled(build(project, "pch=on")) == []  # up to date
    (project / "include/common/value.h").write_text("#pragma once\ninline int value() { return 2; }\n")
    # b.cpp does not include value.h itself, but it is compiled with the header that does.
    assert compiled(build(project, "pch=on")) == sorted([GCH, "src/a.os", "src/b.os"])


def test_auto_is_off_when_ccache_compiles(project):
    if shutil.which("ccache") is None:
        pytest.skip("ccache is not installed")
    result = build(project, "ccache=on")
    assert "pch active: False" in result.stdout
    assert "-include" not in result.stdout
    # Built all the same: the objects depend on it in every mode, so switching rebuilds nothing.
    assert compiled(result) == sorted([GCH, "src/a.os", "src/b.os"])


@pytest.mark.parametrize("switch", [("ccache=on", "ccache=off"), ("pch=on", "pch=off"), ("pch=off", "pch=auto")])
def test_switching_modes_rebuilds_nothing(project, switch):
    if shutil.which("ccache") is None and "ccache=on" in switch:
        pytest.skip("ccache is not installed")
    first, second = switch
    build(project, first)
    assert compiled(build(project, second)) == []


def test_auto_is_on_without_ccache(project):
    result = build(project, "ccache=off")
    assert "pch active: True" in result.stdout and GCH in compiled(result)


def test_off_compiles_each_source_alone(project):
    result = build(project, "pch=off")
    assert compiled(result) == sorted([GCH, "src/a.os", "src/b.os"]) and "-include" not in result.stdout


def test_on_with_ccache_stops_with_exit_status_2(project):
    if shutil.which("ccache") is None:
        pytest.skip("ccache is not installed")
    result = scons(project, "pch=on", "ccache=on")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "scons: *** --pch=on cannot be used with ccache or distcc; pass --ccache=off (and no --distcc)")


def test_unknown_mode_stops_with_exit_status_2(project):
    result = scons(project, "pch=sometimes")
    assert result.returncode == 2
    assert result.stderr.strip() == "scons: *** --pch=sometimes is not one of auto, on, off"
