"""What a person sees of a build (opgen/scons/toolset/build_output.py): one short numbered line per step,
counted against the steps the build runs; the commands with --verbose; nothing from opgen with
-s; opgen's notices quieted by -Q; `scons -h` listing each option once and building nothing; on
a terminal, the groups' GEN steps as one line updated in place.

The full build is the session's (built_project's first build, run with -Q); the others run on
one copy of it (module scope), where a test that edits puts the file back."""
import collections
import io
import os
import re

import pytest

from helpers import copy_built, run_scons, run_scons_loud
from scons_helpers import LIBRARY, ok, rewrite_in_a_later_second, scons

STEP = re.compile(r"^\[\s*(\d+)/(\d+)\] (\S+) (.*)$")
MAX_STEP_LINE = 120
SOURCE = os.path.join("csrc", "core", "scalar.cpp")
OBJECT = os.path.join("build", "obj", "core", "scalar.os")


def steps(stdout):
    """[(number, total, kind, what)] of the step lines."""
    return [(int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)) for m in map(STEP.match, stdout.splitlines()) if m]


@pytest.fixture(scope="module")
def project(built_project, tmp_path_factory):
    return copy_built(built_project.root, tmp_path_factory.mktemp("output") / "project")


@pytest.fixture
def edited_source(project):
    """scalar.cpp with one more line (a new object, so a build compiles it and links); put back after."""
    path = project / SOURCE
    original = path.read_text()
    rewrite_in_a_later_second(path, original + "\nint build_output_test_marker = 1;\n")
    yield path
    rewrite_in_a_later_second(path, original)
    ok(scons(project))


def test_a_full_build_prints_one_short_numbered_line_per_step(built_project):
    stdout = built_project.first_build.stdout
    found = steps(stdout)
    assert found, stdout[-2000:]
    total = found[0][1]
    assert {t for _, t, _, _ in found} == {total}  # one denominator
    assert [n for n, _, _, _ in found] == list(range(1, total + 1))  # consecutive, ending at N/N
    assert {"GEN", "CXX", "AR", "LINK"} <= {kind for _, _, kind, _ in found}
    assert f"LINK {LIBRARY}" in {f"{kind} {what}" for _, _, kind, what in found}
    long_lines = [line for line in stdout.splitlines() if STEP.match(line) and len(line) >= MAX_STEP_LINE]
    assert long_lines == []
    assert " -c " not in stdout and "-o build/" not in stdout  # no command line


def test_a_no_op_build_prints_no_step(project):
    result = run_scons(project, "-j2", "--cuda=off")
    assert result.returncode == 0, result.stdout + result.stderr
    assert steps(result.stdout) == [] and "[opgen] regenerated 0/" in result.stdout


def test_an_edit_builds_numbered_steps_and_verbose_shows_the_commands(project, edited_source):
    short = run_scons(project, "-j2", "--cuda=off", "-n", LIBRARY)
    assert short.returncode == 0, short.stdout + short.stderr
    assert (1, steps(short.stdout)[0][1], "CXX", OBJECT) in steps(short.stdout)
    verbose = run_scons(project, "-j2", "--cuda=off", "-n", "--verbose", LIBRARY)
    assert verbose.returncode == 0, verbose.stdout + verbose.stderr
    assert steps(verbose.stdout) == []
    assert any(f"-o {OBJECT} -c " in line and line.rstrip().endswith(SOURCE) for line in verbose.stdout.splitlines())
    built = run_scons(project, "-j2", "--cuda=off", LIBRARY)
    assert built.returncode == 0, built.stdout + built.stderr
    found = steps(built.stdout)
    assert [n for n, _, _, _ in found] == list(range(1, len(found) + 1))
    assert all(n <= total for n, total, _, _ in found) and len({t for _, t, _, _ in found}) == 1
    assert {("CXX", OBJECT), ("LINK", LIBRARY)} <= {(kind, what) for _, _, kind, what in found}


def test_silent_prints_nothing_from_opgen(project, edited_source):
    result = run_scons_loud(project, "-s", "-j2", "--cuda=off", LIBRARY)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""


def test_q_quiets_the_notices_but_not_what_the_build_did(project):
    quiet = run_scons(project, "-j2", "--cuda=off")
    loud = run_scons_loud(project, "-j2", "--cuda=off")
    assert "operator groups" not in quiet.stdout and "[opgen] CUDA" not in quiet.stdout
    assert "[opgen] regenerated 0/" in quiet.stdout
    assert re.search(r"^\[opgen\] \d+ functions in \d+ operator groups$", loud.stdout, re.MULTILINE)
    assert "[opgen] CUDA: off" in loud.stdout and "[opgen] regenerated 0/" in loud.stdout


def test_help_lists_each_option_once_and_builds_nothing(project):
    result = run_scons_loud(project, "-h")
    assert result.returncode == 0, result.stdout + result.stderr
    options = collections.Counter(re.findall(r"^\s+(--[a-z][a-z-]*)", result.stdout, re.MULTILINE))
    assert {"--yaml", "--cuda", "--backend", "--opgen-cache", "--verbose"} <= set(options)
    assert [name for name, count in options.items() if count > 1] == []
    assert "Targets:" in result.stdout and "install PREFIX=DIR" in result.stdout
    assert "[opgen]" not in result.stdout + result.stderr


# ----- on a terminal: the printer itself -----

class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _printer(stream, total, planned):
    from opgen.scons.toolset.build_output import Steps
    printer = Steps(stream)
    printer.total, printer.planned_kinds = total, planned
    return printer


ENV = {"BUILD_OUTPUT_TERMINAL_PROGRESS": {"GEN": "[opgen] generating {done}/{total} groups"}}


def test_on_a_terminal_group_steps_are_one_line_updated_in_place():
    stream = _Terminal()
    printer = _printer(stream, total=4, planned={"GEN": 3})
    for name in ("a", "b", "c"):
        printer.print_step(f"GEN {name}", [f"gen/{name}.h"], [], ENV)
    printer.print_step("CXX obj/a.os", ["obj/a.os"], [], ENV)
    printer.print_step("RANLIB obj/a.os", ["obj/a.os"], [], ENV)  # a later action of the same step
    text = stream.getvalue()
    assert "GEN a" not in text and "\r[opgen] generating 1/3 groups" in text
    assert text.endswith("\r[opgen] generating 3/3 groups\x1b[K\n[4/4] CXX obj/a.os\n")


def test_piped_group_steps_are_lines_of_their_own():
    stream = io.StringIO()
    printer = _printer(stream, total=2, planned={})
    printer.print_step("GEN a", ["gen/a.h"], [], ENV)
    printer.print_step("GEN b", ["gen/b.h"], [], ENV)
    printer.print_step("GEN c", ["gen/c.h"], [], ENV)  # one step more than counted: the total grows
    assert stream.getvalue() == "[1/2] GEN a\n[2/2] GEN b\n[3/3] GEN c\n"
