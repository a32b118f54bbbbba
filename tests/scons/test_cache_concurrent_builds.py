"""Two real SCons builds at once, in two checkouts with their own build directories, sharing one
codegen cache (--opgen-cache=DIR): both succeed, generate the same bytes, leave a consistent
cache (verify clean, one entry per operator group), and a third checkout gets every group from
the cache without rendering.

Only build/gen is built (--codegen-only): the cache is about generation, and compiling the
library twice at once is not needed to exercise it.
"""
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from helpers import REPO_ROOT, copy_project, snapshot
from scons_helpers import GEN, GROUPS, ok, scons

CACHE_LINE = re.compile(r"^\[opgen\] codegen cache: (\d+) hits, (\d+) rendered$", re.MULTILINE)


def checkout(root):
    """A copy of the project's build inputs at ``root`` (a new directory)."""
    root.mkdir(parents=True)
    return copy_project(root)


def generate(project, cache_dir):
    return scons(project, "--codegen-only", f"--opgen-cache={cache_dir}", target=None)


def cache_figures(build):
    """(hits, rendered) from the build's '[opgen] codegen cache: H hits, R rendered' line."""
    match = CACHE_LINE.search(build.result.stdout)
    assert match is not None, build.output[-4000:]
    return int(match.group(1)), int(match.group(2))


def generated_bytes(project):
    return {path: data for path, (data, _) in snapshot(project / GEN).items()}


def cache_cli(cache_dir, *args):
    env = {k: v for k, v in os.environ.items() if k not in ("OPGEN_CACHE_DIR", "OPGEN_DEBUG")}
    return subprocess.run([sys.executable, "-m", "opgen", "cache", "--cache-dir", str(cache_dir), *args],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)


def assert_cache_consistent(cache_dir):
    verify = cache_cli(cache_dir, "verify", "--json")
    assert verify.returncode == 0, verify.stdout + verify.stderr
    report = json.loads(verify.stdout)
    assert (report["corrupt"], report["orphaned"], report["missing"]) == ([], [], []), report
    assert report["ok"] == GROUPS, report

    stats = cache_cli(cache_dir, "stats", "--json")
    assert stats.returncode == 0, stats.stdout + stats.stderr
    assert json.loads(stats.stdout)["entries"] == GROUPS, stats.stdout

    listed = cache_cli(cache_dir, "ls", "--json")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    groups = [entry["group"] for entry in json.loads(listed.stdout)]
    assert len(groups) == len(set(groups)) == GROUPS, sorted(groups)


def test_two_concurrent_builds_share_one_cache(tmp_path):
    cache_dir = tmp_path / "shared-cache"
    projects = [checkout(tmp_path / name) for name in ("first", "second")]
    for project in projects:
        assert not (project / "build").exists()

    # Both builds are started together and run side by side against the empty cache.
    with ThreadPoolExecutor(max_workers=2) as pool:
        builds = list(pool.map(lambda project: generate(project, cache_dir), projects))
    for build in builds:
        ok(build)
        assert build.regenerated == (GROUPS, GROUPS), build.output[-4000:]
        hits, rendered = cache_figures(build)
        assert hits + rendered == GROUPS, build.output[-4000:]
    # The cache started empty: every group was rendered by at least one of the two builds.
    assert sum(cache_figures(build)[1] for build in builds) >= GROUPS

    first, second = (generated_bytes(project) for project in projects)
    assert first and "ops/add.h" in first
    assert first == second

    assert_cache_consistent(cache_dir)

    # A third checkout with a fresh build directory gets every group from the shared cache.
    third_project = checkout(tmp_path / "third")
    third = ok(generate(third_project, cache_dir))
    assert third.regenerated == (GROUPS, GROUPS)
    assert f"[opgen] codegen cache: {GROUPS} hits, 0 rendered" in third.output
    assert generated_bytes(third_project) == first

    assert_cache_consistent(cache_dir)
