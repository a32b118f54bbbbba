"""Benchmark: a second checkout's full build with warm remote caches vs a cold build, same run.

    python tests/bench/bench_remote.py [--keep]

A report, not a test. It starts redis-server on loopback (both remote tiers live in it: ccache's
remote storage and opgen's codegen cache), then builds the whole library (`scons -j2 --cuda=off`)
in two fresh copies of this repo, each with its own empty local ccache and codegen cache:
  cold          checkout A: nothing cached anywhere; every group renders, every object compiles
                (and both are written through to Redis)
  warm remote   checkout B at another path: every group and object comes from Redis
The table shows wall time, compiles done, groups rendered, and both tiers' remote hits.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
import time
from typing import Optional

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]  # tests/bench, and tests/ for the shared harness (helpers)
from helpers import ccache_stats, copy_project, run_scons  # noqa: E402
from peer_env import REPO  # noqa: E402
from table import render_table  # noqa: E402

sys.path.insert(0, os.path.join(REPO, "tests", "remote"))
CACHE_LINE = re.compile(r"codegen cache: (\d+) hits, (\d+) rendered \(remote: (\d+) hits")
COMPILE = re.compile(r"-o \S+\.os? -c ")  # how SCons prints a compile: "... -o build/obj/x.os -c ..."


def build(root: str, url: str) -> dict:
    ccache_dir = os.path.join(root, "..", os.path.basename(root) + "-ccache")
    args = ["-j2", "--cuda=off", "--ccache=on",
            f"--opgen-cache={os.path.join(root, '..', os.path.basename(root) + '-opgen-cache')}",
            f"--opgen-cache-remote={url}", f"--ccache-remote={url}"]
    start = time.perf_counter()
    # No OPGEN_* setting of the caller's (a read-only remote, say) may change what is measured.
    result = run_scons(root, *args, drop=("OPGEN_*", "SCONSFLAGS*"), ccache_dir=ccache_dir, timeout=None)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(f"build in {root} failed:\n{(result.stdout + result.stderr)[-3000:]}")
    codegen = CACHE_LINE.search(result.stdout)
    counters = ccache_stats(ccache_dir)
    return {"seconds": seconds, "rendered": int(codegen.group(2)) if codegen else 0,
            "codegen_remote_hits": int(codegen.group(3)) if codegen else 0,
            "compiles": counters.get("cache_miss", 0),
            "ccache_remote_hits": counters.get("remote_storage_hit", 0),
            "calls": len(COMPILE.findall(result.stdout))}


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args(argv)
    if shutil.which("ccache") is None or shutil.which("redis-server") is None:
        print("NOTE: needs ccache and redis-server (apt-get install ccache redis-server)")
        return 1
    import pytest  # servers.py reports a server that cannot start with pytest.skip
    from servers import redis_url, start_redis

    work = tempfile.mkdtemp(prefix="opgen-bench-remote-")
    try:
        try:
            server = start_redis(work)
        except pytest.skip.Exception as exc:
            print(f"NOTE: {exc}")
            return 1
        try:
            url = redis_url(server)
            first, second = os.path.join(work, "a"), os.path.join(work, "elsewhere", "b")
            copy_project(first)
            copy_project(second)
            cold = build(first, url)
            warm = build(second, url)
        finally:
            server.stop()
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    rows = []
    for label, m in (("cold (checkout A, empty caches)", cold), ("warm remote (checkout B, empty local caches)", warm)):
        rows.append((label, f"{m['seconds']:.1f}", str(m["calls"]), str(m["compiles"]), str(m["ccache_remote_hits"]),
                     str(m["rendered"]), str(m["codegen_remote_hits"])))
    print(render_table(("full library build (scons -j2 --cuda=off)", "wall s", "compiler calls", "compiled",
                        "ccache remote hits", "groups rendered", "codegen remote hits"), rows, "<>>>>>>"))
    print(f"\nwarm remote / cold: {warm['seconds'] / cold['seconds']:.2f}x "
          f"(both tiers on one loopback redis-server; 2 cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
