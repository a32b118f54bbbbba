"""The ccache and compiler_version tools of the generic toolset (opgen/scons/toolset), through real SCons builds of a tiny C/C++ project."""
import os
import shutil
import subprocess
import textwrap
import time

import pytest

from helpers import REPO_ROOT, ccache_hits, ccache_stats, run_scons, zero_ccache_stats

TOOLSET = os.path.join(REPO_ROOT, "opgen", "scons", "toolset")
OBJECTS = ("build/main.o", "build/util.o")

needs_ccache = pytest.mark.skipif(shutil.which("ccache") is None, reason="ccache is not installed")

# The include directory is passed as an absolute path on purpose: relative paths hit in any
# checkout anyway, absolute ones only through CCACHE_BASEDIR.
SCONSTRUCT = f"""\
import os, sys
sys.path.insert(0, {REPO_ROOT!r})  # the toolset's tools import opgen.scons.toolset
env = Environment(
    tools=["default", "ccache", "compiler_version"],
    toolpath=[{TOOLSET!r}],
    ENV={{"PATH": os.environ["PATH"]}},
    CCACHE_MODE=ARGUMENTS.get("ccache", "auto"),
    CXX=ARGUMENTS.get("cxx", "g++"),
    CCFLAGS=["-O1", "-I" + Dir("#include").abspath],
)
if ARGUMENTS.get("debug"):  # -g names the directory in debug info; the map keeps it checkout-neutral
    env.Append(CCFLAGS=["-g", "-fdebug-prefix-map=" + Dir("#").abspath + "=."])
print("ccache active:", env.CcacheActive())
objects = [env.Object("build/main.o", "src/main.cpp"), env.Object("build/util.o", "src/util.c")]
Default(env.Program("build/hello", objects))
env.SharedObject("build/main.os", "src/main.cpp")  # built only when named
"""

SOURCES = {
    "include/util.h": '#ifdef __cplusplus\nextern "C"\n#endif\nint util(void);\n',
    "src/util.c": '#include "util.h"\nint util(void) { return 0; }\n',
    "src/main.cpp": '#include "util.h"\nint main() { return util(); }\n',
}


def fake_compiler(path, version):
    """A g++ that reports ``version`` for --version and compiles like g++."""
    path.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        if [ "$1" = --version ]; then echo "fake-g++ {version}"; exit 0; fi
        exec g++ "$@"
        """))
    path.chmod(0o755)


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "checkout-a"
    for name, text in {"SConstruct": SCONSTRUCT, **SOURCES}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    # ccache will not record include files for direct mode while their mtime is this very second.
    past = time.time() - 3600
    for name in SOURCES:
        os.utime(root / name, (past, past))
    return root


@pytest.fixture
def ccache_dir(tmp_path):
    return tmp_path / "ccache"


def scons(project, ccache_dir, *args, path=None):
    """SCons with a private ccache (``ccache_dir``) and, given ``path``, that PATH."""
    return run_scons(project, *args, ccache_dir=ccache_dir, env={"PATH": path} if path is not None else None,
                     timeout=300)


def build(project, ccache_dir, *args):
    result = scons(project, ccache_dir, *args)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def compile_lines(result):
    return [line for line in result.stdout.splitlines() if " -c " in line]


@needs_ccache
def test_clean_rebuild_is_served_by_ccache(project, ccache_dir):
    first = build(project, ccache_dir, "ccache=on")
    assert "ccache active: True" in first.stdout
    assert all(line.startswith(shutil.which("ccache")) for line in compile_lines(first))
    assert len(compile_lines(first)) == 2
    assert ccache_stats(ccache_dir)["cache_miss"] == 2

    shutil.rmtree(project / "build")
    zero_ccache_stats(ccache_dir)
    again = build(project, ccache_dir, "ccache=on")
    assert len(compile_lines(again)) == 2  # SCons did compile, ccache answered
    stats = ccache_stats(ccache_dir)
    assert stats["cache_miss"] == 0
    assert ccache_hits(stats) == 2


@needs_ccache
@pytest.mark.parametrize("flags", [(), ("debug=1",)], ids=["release", "debug-prefix-map"])
def test_a_checkout_at_another_path_hits_directly(project, ccache_dir, tmp_path, flags):
    build(project, ccache_dir, "ccache=on", *flags)
    other = tmp_path / "elsewhere" / "checkout-b"
    shutil.copytree(project, other, ignore=shutil.ignore_patterns("build", ".sconsign*"))
    zero_ccache_stats(ccache_dir)
    result = build(other, ccache_dir, "ccache=on", *flags)
    assert f"-I{other}/include" in result.stdout
    # Without CCACHE_BASEDIR the differing -I path misses direct mode (the preprocessed mode
    # would still hit), so count direct hits only.
    assert ccache_stats(ccache_dir)["direct_cache_hit"] == 2


@needs_ccache
@pytest.mark.parametrize("first, second", [("on", "off"), ("off", "on"), ("off", "auto")])
def test_switching_ccache_does_not_rebuild(project, ccache_dir, first, second):
    built = build(project, ccache_dir, f"ccache={first}")
    uses_ccache = [line.startswith(shutil.which("ccache")) for line in compile_lines(built)]
    assert uses_ccache == [first == "on"] * 2
    up_to_date = scons(project, ccache_dir, "-q", f"ccache={second}")
    assert up_to_date.returncode == 0, up_to_date.stdout + up_to_date.stderr
    explained = build(project, ccache_dir, "--debug=explain", f"ccache={second}")
    assert "rebuilding" not in explained.stdout
    assert compile_lines(explained) == []


def test_mode_on_without_ccache_on_path_stops_with_status_2(project, ccache_dir, tmp_path):
    empty_bin = tmp_path / "empty-bin"
    empty_bin.mkdir()
    result = scons(project, ccache_dir, "ccache=on", path=str(empty_bin))
    assert result.returncode == 2
    assert result.stderr.strip() == "scons: *** --ccache=on but ccache was not found on PATH"
    assert "Traceback" not in result.stdout
    assert not (project / "build").exists()


def test_mode_auto_without_ccache_on_path_compiles_directly(project, ccache_dir, tmp_path):
    empty_bin = tmp_path / "empty-bin"
    empty_bin.mkdir()
    dry_run = scons(project, ccache_dir, "-n", "ccache=auto", path=str(empty_bin))
    assert dry_run.returncode == 0, dry_run.stderr
    assert "ccache active: False" in dry_run.stdout
    assert sorted(line.split()[0] for line in compile_lines(dry_run)) == ["g++", "gcc"]


def test_unknown_mode_is_an_error(project, ccache_dir):
    result = scons(project, ccache_dir, "ccache=sometimes")
    assert result.returncode == 2
    assert "--ccache=sometimes is not one of auto, on, off" in result.stderr
    assert "Traceback" not in result.stderr


def test_new_compiler_version_rebuilds_only_its_objects(project, ccache_dir, tmp_path):
    compiler = tmp_path / "bin" / "g++"
    compiler.parent.mkdir()
    fake_compiler(compiler, "1.0")
    args = ("ccache=off", f"cxx={compiler}")
    build(project, ccache_dir, *args)
    assert scons(project, ccache_dir, "-q", *args).returncode == 0

    fake_compiler(compiler, "2.0")
    assert scons(project, ccache_dir, "-q", *args).returncode == 1  # not up to date
    rebuilt = build(project, ccache_dir, *args)
    assert [line.split()[-1] for line in compile_lines(rebuilt)] == ["src/main.cpp"]  # the C object stays
    assert scons(project, ccache_dir, "-q", *args).returncode == 0


def test_compiler_binary_change_without_new_version_does_not_rebuild(project, ccache_dir, tmp_path):
    """IMPLICIT_COMMAND_DEPENDENCIES is off: the version text is the compiler's identity, not its bytes."""
    compiler = tmp_path / "bin" / "g++"
    compiler.parent.mkdir()
    fake_compiler(compiler, "1.0")
    args = ("ccache=off", f"cxx={compiler}")
    build(project, ccache_dir, *args)
    compiler.write_text(compiler.read_text() + "# rebuilt from the same release\n")
    assert scons(project, ccache_dir, "-q", *args).returncode == 0


def test_objects_depend_on_the_compiler_identity(project, ccache_dir):
    tree = build(project, ccache_dir, "ccache=off", "--tree=prune", *OBJECTS, "build/main.os")
    assert tree.stdout.count(f"{shutil.which('g++')}: ") == 2  # the static and the shared object
    gxx_version = subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    gcc_version = subprocess.run(["gcc", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    assert f"{shutil.which('g++')}: {gxx_version} [" in tree.stdout
    assert f"{shutil.which('gcc')}: {gcc_version} [" in tree.stdout
