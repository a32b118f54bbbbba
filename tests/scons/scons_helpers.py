"""Helpers of the SCons build tests: a temp copy of the project, a build and what it did."""
import os
import re
import shutil
import subprocess
import sys
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IGNORE = shutil.ignore_patterns("build", "__pycache__", "*.pyc", ".sconsign*")
LIBRARY = os.path.join("build", "lib", "libopdispatch.so")
GEN = os.path.join("build", "gen")
STATE_FILES = (".opgen-state.json",)  # opgen.gen.plan.STATE_FILE


def _group_count() -> int:
    from opgen.model import load_model
    return len(load_model(os.path.join(REPO_ROOT, "yaml", "native_functions.yaml"),
                          os.path.join(REPO_ROOT, "yaml", "tags.yaml")).operator_groups)


GROUPS = _group_count()


def copy_project(root):
    shutil.copy(os.path.join(REPO_ROOT, "SConstruct"), root / "SConstruct")
    for name in ("site_scons", "opgen", "csrc", "yaml"):
        shutil.copytree(os.path.join(REPO_ROOT, name), root / name, ignore=IGNORE)
    (root / "tests" / "bench").mkdir(parents=True)
    shutil.copy(os.path.join(REPO_ROOT, "tests", "bench", "bench_dispatch.cpp"), root / "tests" / "bench")
    return root


class Build:
    def __init__(self, result):
        self.result = result
        self.output = result.stdout + result.stderr
        # Objects compiled by this build: "... -o build/obj/x.os -c ..."
        self.compiled = set(re.findall(r"-o (\S+\.os?) -c ", result.stdout))
        self.linked = LIBRARY in result.stdout and "-shared" in result.stdout
        self.regenerated, self.regenerated_names = self.progress("groups")

    def progress(self, what):
        """((N, M), names) from '[opgen] regenerated N/M <what>: names', or (None, [])."""
        pattern = re.compile(r"\[opgen\] regenerated (\d+)/(\d+) " + re.escape(what) + r"(?:: (.*))?$")
        match = next(filter(None, (pattern.match(l) for l in self.result.stdout.splitlines())), None)
        if match is None:
            return None, []
        return (int(match.group(1)), int(match.group(2))), sorted(match.group(3).split(", ")) if match.group(3) else []


def scons(project, *args, target=LIBRARY):
    env = {k: v for k, v in os.environ.items() if k not in ("OPGEN_CACHE_DIR", "SCONSFLAGS", "OPGEN_DEBUG")}
    # CUDA has its own tests (test_cuda_build.py); these compare against the CLI's default keys.
    args = ["--cuda=off", *args, target] if target else ["--cuda=off", *args]
    result = subprocess.run([sys.executable, "-m", "SCons", "-Q", "-j2", *args], cwd=project, env=env,
                            capture_output=True, text=True, timeout=900)
    return Build(result)


def ok(build):
    assert build.result.returncode == 0, build.output[-4000:]
    return build


def hand_written_objects_including(header):
    """build/obj/... objects of the library's hand-written sources that #include the header."""
    found = set()
    for library_dir in ("core", "dispatch", "native"):
        for directory, _, files in os.walk(os.path.join(REPO_ROOT, "csrc", library_dir)):
            for name in files:
                path = os.path.join(directory, name)
                if name.endswith(".cpp") and f'#include "{header}"' in open(path, encoding="utf-8").read():
                    relative = os.path.relpath(path, os.path.join(REPO_ROOT, "csrc"))
                    found.add(os.path.join("build", "obj", relative[:-len(".cpp")] + ".os"))
    return found


def snapshot(root):
    result = {}
    for directory, _, files in os.walk(root):
        for name in files:
            if name not in STATE_FILES:
                path = os.path.join(directory, name)
                with open(path, "rb") as handle:
                    result[os.path.relpath(path, root)] = (handle.read(), os.stat(path).st_mtime_ns)
    return result


def changed_files(before, after):
    return {p for p in set(before) | set(after) if before.get(p) != after.get(p)}


def ccache_stats():
    out = subprocess.run(["ccache", "--print-stats"], capture_output=True, text=True, check=True).stdout
    stats = dict(line.split("\t", 1) for line in out.splitlines() if "\t" in line)
    hits = int(stats.get("direct_cache_hit", 0)) + int(stats.get("preprocessed_cache_hit", 0))
    return hits, int(stats.get("cache_miss", 0))


def zero_ccache_stats():
    subprocess.run(["ccache", "--zero-stats"], check=True, capture_output=True)


def rewrite_in_a_later_second(path, text):
    """Writes ``text`` to ``path`` once the clock has passed the second of its current mtime.

    SCons records source timestamps in whole seconds and, with content-timestamp (and max_drift),
    trusts the stored signature while the timestamp is unchanged: an edit and its undo inside one
    second, around a build, would look like no change at all."""
    while int(time.time()) <= int(os.stat(path).st_mtime):
        time.sleep(0.05)
    path.write_text(text)
