"""Benchmark: which operators opgen and torchgen register at each in-tree dispatch key,
on PyTorch 2.13's yaml (../shared/data/pytorch-2.13).

    python tests/bench/bench_registrations.py [--work DIR] [--write-reference] [--show N]

Runs `python -m opgen generate --keys <the keys below>` and torchgen (torch==2.13.0 in
build/bench-venv, see peer_env.py; its packaged templates), collects the `m.impl("...")`
names per key from opgen's ops/<group>_<Key>.cpp and torchgen's Register<Key>*.cpp, and prints
both counts side by side with the differences. --write-reference stores torchgen's sets in
tests/data/torchgen_registrations_2.13.json, which tests/codegen/test_registration_parity.py
compares opgen against (without torch). A report, not a test: exits 0, or 1 when a generator
failed.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)), os.path.join(_TESTS, "codegen")]
from peer_env import REPO, ensure_torchgen, pytorch_yaml  # noqa: E402
from registrations import (KEYS, REFERENCE, opgen_registrations, torchgen_registrations,  # noqa: E402
                           write_reference)
from table import render_table  # noqa: E402


def run_opgen(yaml_path: str, tags_path: str, out: str, work: str, keys: tuple[str, ...] = KEYS) -> float:
    """Seconds `opgen generate --keys KEYS` takes to write ``out`` from scratch."""
    env = dict(os.environ, OPGEN_CACHE_DIR=os.path.join(work, "opgen-cache"))
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "opgen", "generate", yaml_path, "--tags", tags_path, "--keys", ",".join(keys),
                    "--out", out, "--no-cache"], cwd=REPO, env=env, check=True, capture_output=True, text=True)
    return time.perf_counter() - start


def run_torchgen(python: str, yaml_path: str, tags_path: str, out: str, work: str) -> float:
    """torchgen.gen over a source tree holding the yaml, tags and torchgen's packaged templates."""
    src = os.path.join(work, "torchgen-src")
    os.makedirs(os.path.join(src, "native"), exist_ok=True)
    shutil.copy(yaml_path, os.path.join(src, "native", "native_functions.yaml"))
    shutil.copy(tags_path, os.path.join(src, "native", "tags.yaml"))
    templates = subprocess.run(
        [python, "-c", "import os, torchgen; print(os.path.join(os.path.dirname(torchgen.__file__), 'packaged', 'ATen', 'templates'))"],
        capture_output=True, text=True, check=True).stdout.strip()
    link = os.path.join(src, "templates")
    if not os.path.exists(link):
        os.symlink(templates, link)
    start = time.perf_counter()
    subprocess.run([python, "-m", "torchgen.gen", "--source-path", src, "--per-operator-headers",
                    "--install-dir", out, "--aoti-install-dir", os.path.join(out, "aoti")],
                   cwd=work, check=True, capture_output=True, text=True)
    return time.perf_counter() - start


def _sample(names: set[str], n: int) -> str:
    shown = sorted(names)[:n]
    more = len(names) - len(shown)
    return ", ".join(shown) + (f", ... (+{more})" if more > 0 else "")


def report(ours: dict[str, set[str]], theirs: dict[str, set[str]] | None, show: int) -> str:
    if theirs is None:
        return render_table(["key", "opgen"], [[k, f"{len(ours[k]):,}"] for k in KEYS], "<>")
    rows = []
    for key in KEYS:
        missing, extra = theirs[key] - ours[key], ours[key] - theirs[key]
        verdict = "identical" if not missing and not extra else f"{len(missing)} missing, {len(extra)} extra"
        rows.append([key, f"{len(ours[key]):,}", f"{len(theirs[key]):,}", verdict])
    lines = [render_table(["key", "opgen", "torchgen", ""], rows, "<>><")]
    for key in KEYS:
        for label, names in (("missing in opgen", theirs[key] - ours[key]), ("only in opgen", ours[key] - theirs[key])):
            if names:
                lines.append(f"{key}: {label}: {_sample(names, show)}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", help="scratch directory (default: a fresh temp dir, removed afterwards)")
    parser.add_argument("--write-reference", action="store_true", help=f"store torchgen's sets in {os.path.relpath(REFERENCE, REPO)}")
    parser.add_argument("--show", type=int, default=12, help="names listed per difference (default 12)")
    args = parser.parse_args()
    yaml_path, tags_path = pytorch_yaml()
    work = args.work or tempfile.mkdtemp(prefix="bench-registrations-")
    try:
        os.makedirs(work, exist_ok=True)
        opgen_out, torchgen_out = os.path.join(work, "opgen-out"), os.path.join(work, "torchgen-out")
        shutil.rmtree(opgen_out, ignore_errors=True)
        seconds = run_opgen(yaml_path, tags_path, opgen_out, work)
        print(f"opgen generate: {seconds:.1f} s", file=sys.stderr)
        ours = opgen_registrations(opgen_out)
        theirs = None
        python = ensure_torchgen()
        if python:
            shutil.rmtree(torchgen_out, ignore_errors=True)
            seconds = run_torchgen(python, yaml_path, tags_path, torchgen_out, work)
            print(f"torchgen: {seconds:.1f} s", file=sys.stderr)
            theirs = torchgen_registrations(torchgen_out)
        print(report(ours, theirs, args.show))
        if args.write_reference:
            if theirs is None:
                print("bench: --write-reference needs torchgen", file=sys.stderr)
                return 1
            write_reference(theirs, "torchgen (torch 2.13.0) on PyTorch 2.13's native_functions.yaml and tags.yaml")
            print(f"wrote {os.path.relpath(REFERENCE, REPO)}", file=sys.stderr)
    except subprocess.CalledProcessError as exc:
        print(f"bench: {exc.cmd[0:3]} exited {exc.returncode}:\n{(exc.stderr or exc.stdout or '')[-1500:]}", file=sys.stderr)
        return 1
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
