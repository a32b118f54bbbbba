"""The one harness of the test suites and benchmarks: copy the project, run SCons on it, snapshot
a tree, read ccache's counters. Every room imports it as `helpers` (tests/conftest.py puts tests/
on sys.path; benchmarks, run as scripts, put it there themselves)."""
from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Optional

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# What the build reads: a copy of these builds like the checkout (csrc/ may be left out to generate only).
PROJECT_INPUTS = ("SConstruct", "site_scons", "opgen", "csrc", "yaml")
IGNORE = shutil.ignore_patterns("build", "__pycache__", "*.pyc", ".sconsign*")
# opgen's bookkeeping in an output tree (opgen.gen.engine.plan.STATE_FILE): rewritten by every run, so
# snapshots that look for changed generated files leave it out.
STATE_FILES = (".opgen-state.json",)
# A caller's settings that would change what a test build does (flags, cache location, debug output).
# PYTEST_CURRENT_TEST names the test and its phase: no build reads it, and the no-op shortcut
# (opgen/scons/noop.py) would see a fixture's build and the test's as different invocations; so
# would it a build of one parallel worker and one of another (xdist names each: PYTEST_XDIST_WORKER).
DROPPED_ENV = ("SCONSFLAGS", "OPGEN_CACHE_DIR", "OPGEN_DEBUG", "PYTEST_CURRENT_TEST", "PYTEST_XDIST_*")
# The build every SCons test compares against: two jobs, CUDA off (tests/scons/test_cuda_build.py
# covers CUDA; the others compare with the CLI's default keys).
PROJECT_BUILD = ("-j2", "--cuda=off")

Snapshot = dict[str, tuple[bytes, int]]  # relative path -> (bytes, mtime_ns)


# ----- projects -----

def copy_project(root, names=PROJECT_INPUTS):
    """Copies the build's inputs (no build outputs, caches or .sconsign) into ``root``; returns root."""
    os.makedirs(root, exist_ok=True)
    for name in names:
        source, target = os.path.join(REPO_ROOT, name), os.path.join(root, name)
        if os.path.isdir(source):
            shutil.copytree(source, target, ignore=IGNORE)
        else:
            shutil.copy(source, target)
    return root


def copy_built(built, destination):
    """A copy of a built project that SCons finds up to date: copytree keeps mtimes, and neither
    the build's signatures nor its ccache keys name the checkout's path."""
    shutil.copytree(built, destination, symlinks=True)
    return destination


# ----- SCons -----

def scons_env(drop=DROPPED_ENV, env: Optional[dict] = None, ccache_dir=None) -> dict:
    """os.environ without the variables matching ``drop`` (fnmatch patterns), then ``env`` on top
    (None unsets). ``ccache_dir`` gives the build a private ccache: every CCACHE_* goes, CCACHE_DIR is set."""
    patterns = (*drop, "CCACHE_*") if ccache_dir is not None else tuple(drop)
    result = {k: v for k, v in os.environ.items() if not any(fnmatch.fnmatchcase(k, p) for p in patterns)}
    if ccache_dir is not None:
        result["CCACHE_DIR"] = str(ccache_dir)
    for name, value in (env or {}).items():
        if value is None:
            result.pop(name, None)
        else:
            result[name] = value
    return result


def run_scons(cwd, *args, drop=DROPPED_ENV, env: Optional[dict] = None, ccache_dir=None,
              timeout: Optional[float] = 900) -> subprocess.CompletedProcess:
    """`python -m SCons -Q ARGS` in ``cwd`` with scons_env(drop, env, ccache_dir); output as text."""
    return subprocess.run([sys.executable, "-m", "SCons", "-Q", *map(str, args)], cwd=cwd,
                          env=scons_env(drop, env, ccache_dir), capture_output=True, text=True, timeout=timeout)


def run_scons_loud(cwd, *args, drop=DROPPED_ENV, env: Optional[dict] = None, ccache_dir=None,
                   timeout: Optional[float] = 900) -> subprocess.CompletedProcess:
    """run_scons without -Q: the build also prints what -Q quiets, SCons' "Reading SConscript
    files ..." and opgen's notices ("[opgen] N functions in M operator groups", "[opgen] CUDA: ...")."""
    return subprocess.run([sys.executable, "-m", "SCons", *map(str, args)], cwd=cwd,
                          env=scons_env(drop, env, ccache_dir), capture_output=True, text=True, timeout=timeout)


def same_second_env() -> dict:
    """Variables under which a build rewrites each generated file (a .h/.cpp under gen/) with an
    mtime in the whole second of its previous write (tests/same_second/sitecustomize.py), as a
    build that runs within the second of the build before does: pass as run_scons(env=...)."""
    return {"PYTHONPATH": os.path.join(REPO_ROOT, "tests", "same_second"), "OPGEN_TEST_SAME_SECOND": "1"}


# ----- trees -----

def snapshot(root, ignore=STATE_FILES) -> Snapshot:
    """Every file under ``root`` but those named in ``ignore`` -> (bytes, mtime_ns)."""
    result = {}
    for directory, _, files in os.walk(root):
        for name in files:
            if name in ignore:
                continue
            path = os.path.join(directory, name)
            with open(path, "rb") as handle:
                result[os.path.relpath(path, root)] = (handle.read(), os.stat(path).st_mtime_ns)
    return result


def written(before: Snapshot, after: Snapshot) -> list[str]:
    """Files created or rewritten between two snapshots (a rewrite with equal bytes counts too)."""
    return sorted(path for path, state in after.items() if before.get(path) != state)


# ----- ccache -----

def ccache_stats(ccache_dir=None) -> dict[str, int]:
    """ccache 4.7's counters (`ccache --print-stats`) of ``ccache_dir``, or of the default cache."""
    env = dict(os.environ, CCACHE_DIR=str(ccache_dir)) if ccache_dir is not None else None
    out = subprocess.run(["ccache", "--print-stats"], env=env, capture_output=True, text=True, check=True).stdout
    pairs = (line.split("\t", 1) for line in out.splitlines() if "\t" in line)
    return {name: int(value) for name, value in pairs if value.strip().isdigit()}


def ccache_log_stats(stats_log) -> dict[str, int]:
    """The counters ccache wrote to ``stats_log`` (CCACHE_STATSLOG): only the compiles of the builds
    that logged there, whatever else shares the cache."""
    lines = Path(stats_log).read_text().splitlines() if os.path.exists(stats_log) else []
    return dict(Counter(line for line in lines if line and not line.startswith("#")))


def ccache_hits(stats: dict[str, int]) -> int:
    """Local hits of either mode (direct: the manifest matched; preprocessed: the preprocessor output did)."""
    return stats.get("direct_cache_hit", 0) + stats.get("preprocessed_cache_hit", 0)


def zero_ccache_stats(ccache_dir=None) -> None:
    env = dict(os.environ, CCACHE_DIR=str(ccache_dir)) if ccache_dir is not None else None
    subprocess.run(["ccache", "--zero-stats"], env=env, capture_output=True, check=True)
