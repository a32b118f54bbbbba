"""Every command README.md and docs/*.md show is run here, or mapped to the test that runs it.

Fence convention (the first word of a fence's info string is its language, which is what GitHub
highlights by; a second word is ours):

  ```sh        shell commands, one per line (a trailing `# comment` is dropped, as are comment
               lines). Each is run with bash, in order, in a private copy of the built project
               (tests/conftest.py's `built_project`, copied once for this module: nothing is
               rebuilt), with an `opgen` on PATH that is `python -m opgen` of that copy, and must
               exit 0; unless COVERED maps it to the test that runs it.
  ```python    a program: run whole with PYTHONPATH=<copy>/build/python, in the copy; must exit 0.
  ```pycon     an interactive session (`>>>` and `...` prompts, then the output the session
               prints): run by doctest the same way; the output is compared (ELLIPSIS,
               NORMALIZE_WHITESPACE).
  anything else, and ```python fragment: illustrative (C++, yaml, an SConstruct, build output),
               never run.

A ```python or ```pycon block that needs what the built project lacks (a backend built with
--backend=..., a downstream library) is in COVERED under its first line. A shown command that is
neither run nor in COVERED fails; so does a COVERED entry whose test does not exist or does not
name what it is said to cover (a check that the map stays true), and one no document shows.
Commands of subcommands that are not in this checkout yet (`opgen --help` does not list them) skip
with the reason, so the test passes before and after they land.
"""
from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import textwrap

import pytest

from helpers import REPO_ROOT, copy_built

DOCUMENTS = ["README.md"] + sorted(
    os.path.join("docs", name) for name in os.listdir(os.path.join(REPO_ROOT, "docs")) if name.endswith(".md"))
RUN_LANGUAGES = ("sh", "python", "pycon")
README_MAX_LINES = 300

# (document, command line or a block's first line) -> the test that runs it: "PATH::NAME", where
# NAME is a test function (or a line) that PATH contains. ".ci/run" is what CI runs verbatim.
COVERED = {
    # The quick start: CI runs the test command; the build is the one every SCons test starts from.
    ("README.md", "pip install -r requirements.txt && scons -j2"): "tests/conftest.py::def built_project",
    ("README.md", "pip install -r requirements.txt && python -m pytest -q tests"):
        ".ci/run::pip install -r requirements.txt && python -m pytest -q tests",
    # The quick tier is a subset of that command's tests; its list is checked against the tests.
    ("README.md", "python -m pytest -q tests -m quick"): "tests/test_quick_tier.py::def test_every_pattern_names_tests_that_exist",
    # Installing builds nothing more, but into a directory of its own: the plugin tests do it.
    ("README.md", "scons install PREFIX=DIR"): "tests/plugin/test_install.py::PREFIX",
    ("docs/downstream.md", 'pip install "/path/to/opgen[runtime]"'):
        "tests/plugin/test_install.py::def test_the_runtime_extra_brings_what_building_the_runtime_imports",
    ("docs/downstream.md", "cd /path/to/opgen && scons -j2 install PREFIX=$VIRTUAL_ENV"):
        "tests/plugin/test_install.py::PREFIX",
    ("README.md", "opgen init myproj && cd myproj && scons && python -m pytest"):
        "tests/plugin/test_init.py::init",
    ("docs/downstream.md", "opgen init myproj && cd myproj && scons && python -m pytest"):
        "tests/plugin/test_init.py::init",
    ("docs/downstream.md", "import opdispatch as od"): "tests/plugin/test_downstream.py::load_library",
    # Backends: their builds take minutes; the runtime tests build and run them.
    ("docs/backends.md", "scons -j2 --backend=xla"): "tests/scons/test_backend_build.py::--backend=xla",
    ("docs/backends.md", "import opdispatch as od, opdispatch.xla"): "tests/runtime/test_xla_backend.py::metrics",
    ("docs/backends.md", "opgen model PYTORCH_YAML --backend-yaml xla_native_functions.yaml"):
        "tests/model/test_backend_yaml.py::backend_summary",
    ("docs/backends.md", "opgen generate PYTORCH_YAML --backend-yaml xla_native_functions.yaml --out DIR"):
        "tests/codegen/test_backend_codegen.py::xla_native_functions.yaml",
    # pytorch/xla's own yaml: CI builds a selection of both yamls the same way (the whole: bench_xla_build.py).
    ("docs/backends.md", "scons -j2 --yaml=../shared/data/pytorch-2.13/native_functions.yaml --missing-kernels=stub "
                         "--backend-yaml=../shared/data/pytorch-xla/xla_native_functions.yaml"):
        "tests/scons/test_real_backend_yaml_build.py::--backend-yaml=",
    ("docs/backends.md", "import opdispatch as od"): "tests/scons/test_real_backend_yaml_build.py::od.load_library(",
    ("docs/lazy.md", "scons -j2 --backend=lazy"): "tests/scons/test_lazy_backend_build.py::--backend=lazy",
    ("docs/lazy.md", "python -m pytest -q tests/runtime/test_lazy_backend.py tests/scons/test_lazy_backend_build.py "
                     "tests/codegen/test_lazy_codegen.py"): ".ci/run::python -m pytest -q tests",
    ("docs/lazy.md", "import opdispatch as od, opdispatch.lazy as lazy"):
        "tests/runtime/test_lazy_backend.py::mark_step",
    ("docs/lazy.md", "opgen model PYTORCH_YAML --backend-yaml ts_native_functions.yaml --json"):
        "tests/model/test_lazy_backend_yaml.py::ir_nodes",
    # PyTorch's yaml is read from ../shared/data where present (tests skip without it).
    # Its whole build takes 20+ minutes (tests/bench/bench_pytorch_build.py); CI builds 46 of its groups the same way.
    ("README.md", "scons -j2 --yaml=../shared/data/pytorch-2.13/native_functions.yaml --missing-kernels=stub"):
        "tests/scons/test_foreign_yaml_build.py::--missing-kernels=stub",
    ("docs/generated-files.md", "scons --codegen-only --yaml=PYTORCH_YAML --tags=PYTORCH_TAGS"):
        "tests/scons/test_codegen_only.py::--codegen-only",
    ("docs/functionalization.md", "opgen generate PYTORCH_YAML --keys Functionalize --out DIR"):
        "tests/codegen/test_functionalization_parity.py::Functionalize",
    # Builds beyond one machine: tests/remote starts redis-server and distccd (skips without them).
    # CUDA builds need nvcc (and, for cuBLAS, a cuBLAS): their SCons tests run them on -n builds.
    ("docs/cuda.md", "scons -j2 --cuda-arch=80,90"): "tests/scons/test_cuda_arch_build.py::--cuda-arch=90,sm_80",
    ("docs/cuda.md", "CUBLAS_HOME=$(python -c \"import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], 'cu13'))\") "
                     "scons -j2 --cublas=on"): "tests/scons/test_cuda_arch_build.py::CUBLAS_HOME=str(home)",
    # The emulator's toolkit is laid out (and a build against it run) by the emulated CUDA tests.
    ("docs/cuda.md", "python tests/cuda_emulator/toolkit.py /tmp/cuda-emulator"):
        "tests/runtime/test_cuda_emulated.py::make_toolkit",
    ("docs/distributed-builds.md", "scons --ccache-remote=redis://10.0.0.1:6379 --distcc=10.0.0.2/8,10.0.0.3/8,localhost/2"):
        "tests/remote/test_distcc.py::--distcc=",
}
# Benchmarks are run by hand, not by the test command (they install torch into build/bench-venv and
# take minutes): a benchmark line is covered by the script existing as a program.
COVERED_PATTERNS = [
    ("docs/benchmarks.md", re.compile(r"python (tests/bench/\w+\.py)( .*)?"), r"\1::__main__"),
    # The CUDA benchmark needs a GPU machine.
    ("docs/cuda.md", re.compile(r"python3? (tests/bench/\w+\.py)( .*)?"), r"\1::__main__"),
]

# Subcommands being added beside this test: a command using one skips until `opgen --help` lists it.
PENDING_SUBCOMMANDS = ("init", "ops")


# ----- reading the documents -----

FENCE = re.compile(r"^```(\S*)[ \t]*(\S*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)


def blocks(document):
    """(language, attribute, first line number, text) of each fenced block of ``document``."""
    with open(os.path.join(REPO_ROOT, document), encoding="utf-8") as handle:
        text = handle.read()
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 2
        yield match.group(1), match.group(2), line, match.group(3)


def shell_commands(text):
    """The commands of a ```sh block: comment lines and trailing comments dropped, `\\` joined."""
    commands, pending = [], ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        line = re.sub(r"\s+#\s.*$", "", line)
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        commands.append(" ".join((pending + line).split()))
        pending = ""
    return commands


def runnable_blocks():
    for document in DOCUMENTS:
        for language, attribute, line, text in blocks(document):
            if language in RUN_LANGUAGES and attribute != "fragment":
                yield pytest.param(document, language, line, text, id=f"{document}:{line}")


def first_line(text):
    return next(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


def covered(document, command):
    """The test COVERED or COVERED_PATTERNS maps a command to, or None."""
    if (document, command) in COVERED:
        return COVERED[(document, command)]
    for pattern_document, pattern, template in COVERED_PATTERNS:
        match = pattern.fullmatch(command)
        if pattern_document == document and match:
            return match.expand(template)
    return None


def _covered_target_holds(target):
    path, _, name = target.partition("::")
    full = os.path.join(REPO_ROOT, path)
    if not os.path.isfile(full):
        return False
    with open(full, encoding="utf-8") as handle:
        return name in handle.read()


# ----- the project the commands run in -----

@pytest.fixture(scope="module")
def project(built_project, tmp_path_factory):
    """A private copy of the built project (commands write into it), with `opgen` on PATH."""
    root = copy_built(built_project.root, tmp_path_factory.mktemp("readme") / "project")
    bin_dir = tmp_path_factory.mktemp("readme-bin")
    shim = bin_dir / "opgen"
    shim.write_text(f'#!/bin/sh\nPYTHONPATH="{root}${{PYTHONPATH:+:$PYTHONPATH}}" exec "{sys.executable}" -m opgen "$@"\n')
    shim.chmod(0o755)
    python_dir = os.path.dirname(sys.executable)
    env = {k: v for k, v in os.environ.items() if k not in ("SCONSFLAGS", "OPGEN_CACHE_DIR", "OPGEN_DEBUG")}
    env["PATH"] = os.pathsep.join([str(bin_dir), python_dir, env.get("PATH", "")])
    return str(root), env


@functools.lru_cache(maxsize=None)
def opgen_subcommands():
    """The subcommands `opgen --help` of this checkout lists."""
    result = subprocess.run([sys.executable, "-m", "opgen", "--help"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    listed = re.search(r"\{([\w,-]+)\}", result.stdout)
    if listed:
        return frozenset(listed.group(1).split(","))
    return frozenset(name for name in PENDING_SUBCOMMANDS if re.search(rf"^\s+{name}\b", result.stdout, re.M))


def _pending_reason(command):
    for name in PENDING_SUBCOMMANDS:
        if re.search(rf"(^|&& |\| )opgen {name}\b", command) and name not in opgen_subcommands():
            return f"`opgen {name}` is not in this checkout yet: {command}"
    return None


# ----- the tests -----

@pytest.mark.parametrize("document, language, line, text", list(runnable_blocks()))
def test_block(document, language, line, text, project):
    root, env = project
    where = f"{document}:{line}"
    if language == "sh":
        skipped = []
        for command in shell_commands(text):
            target = covered(document, command)
            if target is not None:
                if _covered_target_holds(target):
                    continue
                reason = _pending_reason(command)
                if reason:
                    skipped.append(reason)
                    continue
                pytest.fail(f"{where}: `{command}` is mapped to {target}, which does not exist or name it")
            reason = _pending_reason(command)
            if reason:
                skipped.append(reason)
                continue
            result = subprocess.run(["bash", "-c", command], cwd=root, env=env, stdin=subprocess.DEVNULL,
                                    capture_output=True, text=True, timeout=600)
            assert result.returncode == 0, (f"{where}: `{command}` exited {result.returncode}\n"
                                            f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
        if skipped:
            pytest.skip("; ".join(skipped))
        return
    target = COVERED.get((document, first_line(text)))
    if target is not None:
        assert _covered_target_holds(target), f"{where}: mapped to {target}, which does not exist or name it"
        return
    python_env = dict(env, PYTHONPATH=os.path.join(root, "build", "python"))
    if language == "python":
        program = text
    else:  # pycon: doctest in a fresh interpreter, so the session starts empty as a user's does
        program = textwrap.dedent("""
            import doctest, sys
            test = doctest.DocTestParser().get_doctest(sys.stdin.read(), {}, "session", "session", 0)
            runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
            runner.run(test)
            sys.exit(1 if runner.failures else 0)
        """)
    result = subprocess.run([sys.executable, "-c", program], cwd=root, env=python_env,
                            input=text if language == "pycon" else None,
                            stdin=None if language == "pycon" else subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{where}: the {language} block failed\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"


def test_covered_entries_are_shown():
    """Every COVERED entry is a command or block some document shows: the map cannot hide stale ones."""
    shown = set()
    for document in DOCUMENTS:
        for language, attribute, _, text in blocks(document):
            if language == "sh":
                shown.update((document, command) for command in shell_commands(text))
            elif language in RUN_LANGUAGES and attribute != "fragment":
                shown.add((document, first_line(text)))
    assert sorted(set(COVERED) - shown) == []


def test_covered_targets_exist():
    """Each target names an existing test file and what it covers (pending subcommands' tests aside)."""
    missing = [target for (document, command), target in COVERED.items()
               if not _covered_target_holds(target) and not _pending_reason(command)]
    assert missing == []


def test_readme_is_short_and_indexes_docs():
    with open(os.path.join(REPO_ROOT, "README.md"), encoding="utf-8") as handle:
        readme = handle.read()
    assert readme.count("\n") <= README_MAX_LINES
    linked = set(re.findall(r"\]\((docs/[^)#\s]+\.md)", readme))
    on_disk = {document for document in DOCUMENTS if document.startswith("docs")}
    assert on_disk - linked == set(), "docs/ files the README's table of contents does not list"
    assert linked - on_disk == set(), "README links to docs/ files that do not exist"


def _slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_links_resolve():
    """Every relative link of the README and docs/ names an existing file, and a heading there."""
    broken = []
    for document in DOCUMENTS:
        with open(os.path.join(REPO_ROOT, document), encoding="utf-8") as handle:
            text = re.sub(r"^```.*?^```", "", handle.read(), flags=re.M | re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(REPO_ROOT, os.path.dirname(document), path)) if path else \
                os.path.join(REPO_ROOT, document)
            if not os.path.exists(full):
                broken.append(f"{document}: {target}")
                continue
            if anchor and full.endswith(".md"):
                with open(full, encoding="utf-8") as handle:
                    body = re.sub(r"^```.*?^```", "", handle.read(), flags=re.M | re.S)
                if anchor not in {_slug(h) for h in re.findall(r"^#+ (.*)$", body, re.M)}:
                    broken.append(f"{document}: {target}")
    assert broken == []
