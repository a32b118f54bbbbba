"""Helpers of the SCons build tests: a build of a project copy and what it did. Copies, the SCons
runner, snapshots and ccache's counters are the shared harness's (tests/helpers.py)."""
import os
import re
import time

from helpers import PROJECT_BUILD, REPO_ROOT, run_scons
from include_graph import LIBRARY_SOURCE_DIRS

LIBRARY = os.path.join("build", "lib", "libopdispatch.so")
GEN = os.path.join("build", "gen")
# A compile's step line (opgen/scons/toolset/build_output.py): "[ 3/9] CXX build/obj/x.os"
STEP_COMPILE = re.compile(r"^\[\s*\d+/\d+\] (?:CXX|CC|NVCC) (\S+\.os?)$", re.MULTILINE)


def _group_count() -> int:
    from opgen.model import load_model
    return len(load_model(os.path.join(REPO_ROOT, "yaml", "native_functions.yaml"),
                          os.path.join(REPO_ROOT, "yaml", "tags.yaml")).operator_groups)


GROUPS = _group_count()


class Build:
    def __init__(self, result):
        self.result = result
        self.output = result.stdout + result.stderr
        # Objects compiled by this build: "... -o build/obj/x.os -c ..." (--verbose) or "[ 3/9] CXX build/obj/x.os"
        self.compiled = set(re.findall(r"-o (\S+\.os?) -c ", result.stdout)) | set(STEP_COMPILE.findall(result.stdout))
        self.linked = (LIBRARY in result.stdout and "-shared" in result.stdout) or f"LINK {LIBRARY}\n" in result.stdout
        self.regenerated, self.regenerated_names = self.progress("groups")

    def progress(self, what):
        """((N, M), names) from '[opgen] regenerated N/M <what>: names' (or 'materialized from the
        cache N/M', when every one came from the codegen cache), or (None, [])."""
        pattern = re.compile(r"\[opgen\] (?:regenerated|materialized from the cache) (\d+)/(\d+) " + re.escape(what)
                             + r"(?:: (.*))?$")
        match = next(filter(None, (pattern.match(l) for l in self.result.stdout.splitlines())), None)
        if match is None:
            return None, []
        return (int(match.group(1)), int(match.group(2))), sorted(match.group(3).split(", ")) if match.group(3) else []


def scons(project, *args, target=LIBRARY, env=None):
    """PROJECT_BUILD of ``target`` (None: the default targets) with ``args``; ``env`` adds variables.
    --verbose: Build reads the compile and link command lines."""
    return Build(run_scons(project, *PROJECT_BUILD, "--verbose", *args, *([target] if target else []), env=env))


def ok(build):
    assert build.result.returncode == 0, build.output[-4000:]
    return build


def hand_written_objects_including(header):
    """build/obj/... objects of the library's hand-written sources that #include the header."""
    found = set()
    for library_dir in LIBRARY_SOURCE_DIRS:
        for directory, _, files in os.walk(os.path.join(REPO_ROOT, "csrc", library_dir)):
            for name in files:
                path = os.path.join(directory, name)
                if name.endswith(".cpp") and f'#include "{header}"' in open(path, encoding="utf-8").read():
                    relative = os.path.relpath(path, os.path.join(REPO_ROOT, "csrc"))
                    found.add(os.path.join("build", "obj", relative[:-len(".cpp")] + ".os"))
    return found


def generated_units_including(project, header):
    """build/obj/gen/ops/<g>_unit.os of the groups whose generated files #include the header
    (a forward formula's `a + b` is op::add: its unit includes ops/add.h)."""
    ops = os.path.join(str(project), GEN, "ops")
    found = set()
    for name in os.listdir(ops):
        if not name.endswith("_unit.cpp"):
            continue
        with open(os.path.join(ops, name), encoding="utf-8") as unit:
            parts = re.findall(r'^#include "ops/([^"]+)"', unit.read(), re.M)
        for part in parts:
            with open(os.path.join(ops, part), encoding="utf-8") as source:
                if f'#include "{header}"' in source.read():
                    found.add(os.path.join("build", "obj", "gen", "ops", name[:-len(".cpp")] + ".os"))
                    break
    return found


def changed_files(before, after):
    return {p for p in set(before) | set(after) if before.get(p) != after.get(p)}


def rewrite_in_a_later_second(path, text):
    """Writes ``text`` to ``path`` once the clock has passed the second of its current mtime.

    SCons records source timestamps in whole seconds and, with content-timestamp (and max_drift),
    trusts the stored signature while the timestamp is unchanged: an edit and its undo inside one
    second, around a build, would look like no change at all."""
    while int(time.time()) <= int(os.stat(path).st_mtime):
        time.sleep(0.05)
    path.write_text(text)


# add.Tensor's default alpha, the default-value edit several tests make. Its derivatives.yaml entry
# repeats the schema (torchgen requires it, defaults included), so the edit changes both files.
ADD_TENSOR = "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
EDITED_FILES = (os.path.join("yaml", "native_functions.yaml"), os.path.join("yaml", "derivatives.yaml"))


def with_add_default(text: str, alpha: str) -> str:
    """``text`` (the operator yaml or derivatives.yaml) with add.Tensor's default alpha set to ``alpha``."""
    current = next(a for a in ("alpha=1", "alpha=2", "alpha=3") if ADD_TENSOR.replace("alpha=1", a) in text)
    return text.replace(ADD_TENSOR.replace("alpha=1", current), ADD_TENSOR.replace("alpha=1", f"alpha={alpha}"), 1)


def edit_add_default(project, alpha: str, write=None) -> None:
    """Sets add.Tensor's default alpha in the yaml and in its derivatives entry (``write(path,
    text)`` writes each file: rewrite_in_a_later_second by default)."""
    write = write or rewrite_in_a_later_second
    for relative in EDITED_FILES:
        path = project / relative
        write(path, with_add_default(path.read_text(), alpha))
