"""Benchmark: opgen's operator model vs torchgen's parse + grouping, on PyTorch 2.13's yaml.

    python tests/bench/bench_model.py [--runs N]

A report, not a test: it prints one table and exits 0 (2 when PyTorch's yaml is absent).
torchgen runs in the peer virtualenv (see peer_env.py); opgen runs in this interpreter's
environment. Every measurement is run once to warm up (and to fill the parse cache) before the N
timed runs; whole-process times include interpreter start-up and imports.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_env import REPO, ensure_torchgen, pytorch_yaml  # noqa: E402
from table import render_table  # noqa: E402

EXPECTED = {"functions": 3101, "variant groups": 1105, "base names": 1342}
WHOLE_PROCESS_GOAL = 0.5  # opgen whole process <= 0.5x torchgen whole process
REPEATED_PARSE_GOAL = 0.1  # seconds, load_model_cached on a warm cache

TORCHGEN_SNIPPET = """\
import json, sys
from torchgen.gen import get_grouped_native_functions, parse_native_yaml
from torchgen.model import NativeFunctionsGroup
fs = parse_native_yaml(sys.argv[1], sys.argv[2]).native_functions
groups = get_grouped_native_functions(fs)
print(json.dumps({"functions": len(fs),
                  "variant groups": sum(isinstance(g, NativeFunctionsGroup) for g in groups),
                  "base names": len({f.func.name.name.base for f in fs})}))
"""

# Times one call in a fresh process (imports excluded), groupings included; prints JSON.
OPGEN_SNIPPET = """\
import json, sys, time
from opgen.cache.parse_cache import load_model_cached
from opgen.model import VariantGroup, load_model
load = load_model_cached if sys.argv[1] == "cached" else load_model
start = time.perf_counter()
model = load(sys.argv[2], sys.argv[3])
model.variant_groups, model.operator_groups
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "functions": len(model.functions),
                  "variant groups": sum(isinstance(g, VariantGroup) for g in model.variant_groups),
                  "base names": len(model.operator_groups)}))
"""


@dataclass
class Row:
    label: str
    times: list[float]
    goal: str = ""
    goal_met: Optional[bool] = None

    @property
    def best(self) -> float:
        return min(self.times)

    @property
    def median(self) -> float:
        return statistics.median(self.times)


class CommandFailed(Exception):
    pass


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    """Wall time of one process and its stdout."""
    start = time.perf_counter()
    result = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise CommandFailed(f"exit {result.returncode}: {' '.join(cmd[:2])} ...\n{result.stderr.strip()}")
    return seconds, result.stdout


def whole_process(cmd: list[str], env: dict[str, str], runs: int) -> tuple[list[float], str]:
    run(cmd, env)  # warm-up: page cache, .pyc files, parse cache
    results = [run(cmd, env) for _ in range(runs)]
    return [seconds for seconds, _ in results], results[-1][1]


def in_process(mode: str, yaml_path: str, tags_path: str, env: dict[str, str], runs: int) -> tuple[list[float], dict]:
    cmd = [sys.executable, "-c", OPGEN_SNIPPET, mode, yaml_path, tags_path]
    run(cmd, env)
    reports = [json.loads(run(cmd, env)[1]) for _ in range(runs)]
    return [r["seconds"] for r in reports], reports[-1]


def measure(yaml_path: str, tags_path: str, peer_python: Optional[str], cache_dir: str, runs: int):
    """(rows, torchgen counts or None, opgen counts)."""
    env = dict(os.environ, OPGEN_CACHE_DIR=cache_dir)
    rows, torchgen_counts = [], None
    if peer_python:
        try:
            times, out = whole_process([peer_python, "-c", TORCHGEN_SNIPPET, yaml_path, tags_path], env, runs)
            rows.append(Row("torchgen parse + grouping (process)", times))
            torchgen_counts = json.loads(out)
        except CommandFailed as exc:
            print(f"bench: NOTE torchgen failed, reporting opgen's numbers only ({exc})", file=sys.stderr)
    opgen_cli = [sys.executable, "-m", "opgen", "model", yaml_path]
    whole_goal = f"<= {WHOLE_PROCESS_GOAL}x torchgen"
    rows.append(Row("opgen model --no-cache (process)", whole_process(opgen_cli + ["--no-cache"], env, runs)[0], whole_goal))
    rows.append(Row("opgen model, warm cache (process)", whole_process(opgen_cli, env, runs)[0], whole_goal))
    times, opgen_counts = in_process("cached", yaml_path, tags_path, env, runs)
    rows.append(Row("load_model_cached, warm (in-process)", times, f"<= {REPEATED_PARSE_GOAL} s",
                    statistics.median(times) <= REPEATED_PARSE_GOAL))
    rows.append(Row("load_model, no cache (in-process)", in_process("plain", yaml_path, tags_path, env, runs)[0]))
    opgen_counts.pop("seconds")
    return rows, torchgen_counts, opgen_counts


def judge_whole_process(rows: list[Row], torchgen: Optional[Row]) -> None:
    for row in rows:
        if row.goal.endswith("x torchgen"):
            row.goal_met = None if torchgen is None else row.median / torchgen.median <= WHOLE_PROCESS_GOAL


def format_table(rows: list[Row], torchgen: Optional[Row]) -> str:
    def ratio(row: Row) -> str:
        return "n/a" if torchgen is None else f"{row.median / torchgen.median:.2f}x"

    def met(row: Row) -> str:
        return {True: "yes", False: "NO", None: "" if not row.goal else "n/a"}[row.goal_met]

    header = ("measurement", "best s", "median s", "vs torchgen", "goal", "met")
    body = [(r.label, f"{r.best:.3f}", f"{r.median:.3f}", ratio(r), r.goal, met(r)) for r in rows]
    return render_table(header, body, "<>>><<")


def format_counts(torchgen_counts: Optional[dict], opgen_counts: dict) -> tuple[str, bool]:
    """The counts side by side, and whether everything agrees (with torchgen and the expected)."""
    lines, ok = [f"{'count':16s} {'torchgen':>9s} {'opgen':>9s} {'expected':>9s}"], True
    for key, expected in EXPECTED.items():
        theirs = torchgen_counts[key] if torchgen_counts else None
        ours = opgen_counts[key]
        agree = ours == expected and theirs in (None, expected)
        ok = ok and agree
        flag = "" if agree else "   <-- MISMATCH"
        lines.append(f"{key:16s} {'n/a' if theirs is None else theirs:>9} {ours:>9} {expected:>9}{flag}")
    return "\n".join(lines), ok


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs per measurement (default 5)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    yaml_path, tags_path = pytorch_yaml()
    peer_python = ensure_torchgen()
    with tempfile.TemporaryDirectory(prefix="opgen-bench-cache-") as cache_dir:
        try:
            rows, torchgen_counts, opgen_counts = measure(yaml_path, tags_path, peer_python, cache_dir, args.runs)
        except CommandFailed as exc:  # opgen itself failed: a bug, not a slow run
            print(f"bench: opgen failed: {exc}", file=sys.stderr)
            return 1
    torchgen = rows[0] if torchgen_counts else None
    judge_whole_process(rows, torchgen)
    counts, counts_ok = format_counts(torchgen_counts, opgen_counts)
    print(f"{yaml_path}, {args.runs} runs each after one warm-up; ratios and goals use medians\n")
    print(format_table(rows, torchgen))
    print()
    print(counts)
    if torchgen is None:
        print("\nNOTE: torchgen (torch 2.13.0) is unavailable in the peer virtualenv; opgen's numbers only.")
    if not counts_ok:
        print("\n!!! COUNT MISMATCH: opgen's model does not match torchgen / the expected counts !!!")
    return 0


if __name__ == "__main__":
    sys.exit(main())
