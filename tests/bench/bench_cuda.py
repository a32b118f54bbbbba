"""Benchmark: opdispatch's CUDA kernels, allocator and start-up beside torch on the same GPU, in one run.

    python tests/bench/bench_cuda.py [--quick] [--rows PATTERN] [--json FILE] [--no-peer]

A report, not a test (issue 37's table). It needs a CUDA device, opdispatch built with CUDA
(build/python, found by itself; it never builds) and torch with CUDA in the same interpreter;
without them it prints one line, ``CUDA benchmark skipped: <why>``, and exits 0 (``--no-peer``
runs opdispatch's side alone, without torch).

Each row is timed the same way on both sides: a few warm-up calls, one call to size the loop,
then 3 repeats of N calls with one synchronize after the loop (``od.cuda.synchronize()``, or a
one-element copy to the host where the build has none; ``torch.cuda.synchronize()``); the time
of a row is the best repeat / N. N fills about 0.25 s a repeat (0.05 s with --quick), at most
2,000 (5,000 for numel-1 adds, 200 for 4096^3 matmuls). Inputs are float32, standard normal,
the same values on both sides; before timing, each row checks once that opdispatch's result
equals torch's (np.allclose on the host) and says MISMATCH otherwise.

The rows run in a child process (this script with --child) that holds both libraries; a row
that kills it (a crash, or no answer within --row-timeout seconds) is reported as an error and a
new child runs the rows after it. The first CUDA op is timed in fresh processes of its own, with
the JIT cache off (CUDA_CACHE_DISABLE=1) and on (the second of two runs). Every row is
independent: a failure prints ``error: <message>`` in its cell and the other rows still run.

A hidden ``--device cpu`` runs every code path on the host against torch's CPU build (a dry run
of the script, not a benchmark): ``PYTHONPATH=<torch cpu> python tests/bench/bench_cuda.py --device cpu --quick``.
"""
from __future__ import annotations

import argparse
import json
import os
import selectors
import subprocess
import sys
import time
from typing import Callable, Optional

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
from cuda_workloads import MARK, OPDISPATCH_PATH, ROW_BY_KEY, ROWS, child, select_rows, short_error  # noqa: E402
from peer_env import REPO  # noqa: E402
from table import render_table  # noqa: E402


# ----- the parent: children, first-op processes, the table ---------------------------------------

def child_lines(proc, timeout: Callable[[], float]):
    """The child's stdout line by line (read straight from the pipe, so no line waits in a buffer
    unseen); raises TimeoutError when `timeout()` seconds pass without a line."""
    fd, pending = proc.stdout.fileno(), b""
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                yield line.decode("utf-8", "replace")
            limit = timeout()
            if not selector.select(timeout=limit):
                raise TimeoutError(f"no answer within {limit:.0f} s")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                if pending:
                    yield pending.decode("utf-8", "replace")
                return
            pending += chunk


def exit_text(rc: Optional[int]) -> str:
    if rc is not None and rc < 0:
        return f"killed by signal {-rc}"
    return f"exit {rc}"


def run_children(args, keys: list[str], deadline: float) -> tuple[Optional[dict], dict, Optional[str]]:
    """(env, {key: result}, skip reason): the rows in children, a new child after one dies; rows
    not finished by `deadline` (time.monotonic()) are reported as not run."""
    env, results, skip = None, {}, None
    remaining, first = list(keys), True
    while remaining or first:  # one child at least: it says whether there is a device at all
        first = False
        cmd = [sys.executable, os.path.abspath(__file__), "--child", "--child-rows", ",".join(remaining),
               "--device", args.device] + (["--quick"] if args.quick else []) + (["--no-peer"] if args.no_peer else [])
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, cwd=REPO)
        state = {"current": None, "wait": max(args.row_timeout, 120.0)}  # the first answer follows the imports
        started_any, failure = False, None

        def wait() -> float:
            return max(0.1, min(state["wait"], deadline - time.monotonic()))

        try:
            for line in child_lines(proc, wait):
                if not line.startswith(MARK):
                    print(line, file=sys.stderr)
                    continue
                message = json.loads(line[len(MARK):])
                kind = message.pop("type")
                state["wait"] = args.row_timeout
                if kind == "skip":
                    skip = message["reason"]
                elif kind == "env":
                    env = env or message
                elif kind == "start":
                    state["current"], started_any = message["key"], True
                elif kind == "row":
                    results[message["key"]] = message
                    if message["key"] in remaining:
                        remaining.remove(message["key"])
                    state["current"] = None
                    progress(message)
                elif kind == "done":
                    break
        except TimeoutError as exc:
            failure = f"{exc} (killed)"
            proc.kill()
        finally:
            try:
                rc = proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                rc = proc.wait()
            proc.stdout.close()
        if skip:
            return env, results, skip
        if not remaining:
            break
        if time.monotonic() >= deadline:
            for key in remaining:
                results[key] = {"key": key, "od_error": f"not run: the run's --budget of {args.budget:.0f} s was spent"}
            break
        why = failure or f"the benchmark process died ({exit_text(rc)})"
        current = state["current"]
        if current is None:
            if not started_any:  # it died before its first row: another would too
                for key in remaining:
                    results[key] = {"key": key, "od_error": why}
                break
            continue  # it died between two rows: the next child starts at the next row
        print(f"bench_cuda: row {current}: {why}; going on in a new process", file=sys.stderr)
        results[current] = {"key": current, "od_error": why, "torch_error": why}
        remaining.remove(current)
    return env, results, None


FIRST_OP = r"""
import json, os, sys, time
lib, device = sys.argv[1], sys.argv[2]
start = time.perf_counter()
if lib == "opdispatch":
    import opdispatch as od
    imported = time.perf_counter()
    a = od.full([4], 1.0, device=device)
    b = od.full([4], 2.0, device=device)
    c = a + b
    sync = getattr(od.cuda, "synchronize", None)
    if device == "cpu" or sync is None:
        c.to("cpu")
    else:
        sync()
    done = time.perf_counter()
    value = c.to("cpu").numpy().tolist()
else:
    import torch
    imported = time.perf_counter()
    a = torch.full((4,), 1.0, device=device)
    b = torch.full((4,), 2.0, device=device)
    c = a + b
    if device != "cpu":
        torch.cuda.synchronize()
    done = time.perf_counter()
    value = c.cpu().tolist()
if value != [3.0] * 4:
    raise SystemExit(f"a + b gave {value}, not [3.0, 3.0, 3.0, 3.0]")
print(json.dumps({"import_s": imported - start, "first_op_s": done - imported}))
"""


def first_op(lib: str, device: str, jit_cache: bool, timeout: float) -> dict:
    """{"import_s", "first_op_s"} of one fresh process."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (OPDISPATCH_PATH, env.get("PYTHONPATH")) if p)
    if not jit_cache:
        env["CUDA_CACHE_DISABLE"] = "1"
    else:
        env.pop("CUDA_CACHE_DISABLE", None)
    result = subprocess.run([sys.executable, "-c", FIRST_OP, lib, device], env=env, cwd=REPO,
                            capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        tail = (result.stderr.strip() or result.stdout.strip()).splitlines()[-1:] or ["(no output)"]
        raise RuntimeError(f"exit {result.returncode}: {tail[0]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def first_op_rows(args, keys: list[str], deadline: float) -> dict:
    libs = [("od", "opdispatch")] + ([] if args.no_peer else [("torch", "torch")])
    results = {key: {"key": key} for key in keys}

    def timeout() -> float:
        left = deadline - time.monotonic()
        if left < 1:
            raise RuntimeError(f"not run: the run's --budget of {args.budget:.0f} s was spent")
        return min(args.row_timeout, left)

    for tag, lib in libs:
        off = on = None
        try:
            if "first-op-jit-off" in keys or "import" in keys:
                off = first_op(lib, args.device, False, timeout())
        except Exception as exc:  # noqa: BLE001
            off = exc
        try:
            if "first-op" in keys:
                first_op(lib, args.device, True, timeout())  # fills the JIT cache
                on = first_op(lib, args.device, True, timeout())
        except Exception as exc:  # noqa: BLE001
            on = exc
        for key, source, field in (("import", off, "import_s"), ("first-op-jit-off", off, "first_op_s"),
                                   ("first-op", on, "first_op_s")):
            if key not in results:
                continue
            if isinstance(source, Exception):
                results[key][f"{tag}_error"] = short_error(source)
            elif source is not None:
                results[key][tag] = source[field]
        for key in keys:
            progress(results[key], tag)
    return results


def progress(result: dict, only: Optional[str] = None) -> None:
    """One line on stderr as a row finishes, so a run cut short still shows its figures."""
    parts = []
    for tag in ("od", "torch"):
        if only and tag != only:
            continue
        if f"{tag}_error" in result:
            parts.append(f"{tag} error: {result[f'{tag}_error']}")
        elif tag in result:
            parts.append(f"{tag} {result[tag]:.6g}")
    if result.get("check"):
        parts.append(f"check {result['check']}")
    print(f"bench_cuda: {result['key']}: {'; '.join(parts)}", file=sys.stderr, flush=True)


def fmt_time(seconds: float) -> str:
    if seconds >= 1.0:
        return f"{seconds:,.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:,.3f} ms"
    return f"{seconds * 1e6:,.1f} us"


def cell(row: dict, result: dict, tag: str) -> str:
    if f"{tag}_error" in result:
        message = result[f"{tag}_error"]
        return "error: " + (message if len(message) <= 48 else message[:45] + "...")
    if tag not in result:
        return ""
    value = result[tag]
    kind = row["kind"]
    if kind == "mib":
        return f"{value:,.1f}"
    if kind == "seconds":
        return f"{value:.3f}"
    text = fmt_time(value)
    if kind == "flops":
        return f"{text} ({row['flops'] / value / 1e12:,.1f} TFLOP/s)"
    if "bytes" in row:
        return f"{text} ({row['bytes'] / value / 1e9:,.0f} GB/s)"
    return text


def judge(row: dict, result: dict) -> tuple[str, str, str]:
    """(ratio, goal, met) of a row."""
    ours, theirs = result.get("od"), result.get("torch")
    kind, goal = row["kind"], row.get("goal")
    ratio, goal_text, met = "", "", ""
    if ours is not None and theirs is not None and ours > 0 and theirs > 0:
        value = theirs / ours if kind == "flops" else ours / theirs
        ratio = f"{value:.2f}x"
    else:
        value = None
    if goal is None:
        return ratio, goal_text, met
    if kind == "seconds":  # an absolute goal on opdispatch's own figure
        goal_text = f"<= {goal} s"
        met = "" if ours is None else ("yes" if ours <= goal else "NO")
    elif kind == "flops":
        goal_text = f">= {goal}x"
        met = "" if value is None else ("yes" if value >= goal else "NO")
    else:
        goal_text = f"<= {goal}x"
        met = "" if value is None else ("yes" if value <= goal else "NO")
    if met == "yes" and str(result.get("check", "ok")).startswith(("MISMATCH", "check failed")):
        met = "NO (mismatch)"
    return ratio, goal_text, met


def report(rows: list[dict], results: dict, no_peer: bool) -> str:
    body = []
    for row in rows:
        result = results.get(row["key"], {"key": row["key"], "od_error": "not run"})
        ratio, goal, met = judge(row, result)
        body.append((row["label"], cell(row, result, "od"), "" if no_peer else cell(row, result, "torch"),
                     ratio, goal, met, result.get("check", "")))
    header = ("row", "opdispatch", "torch", "ratio", "goal", "met", "check")
    return render_table(header, body, "<>>><<<")


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter loops (~0.05 s a repeat instead of ~0.25 s)")
    parser.add_argument("--rows", metavar="PATTERN",
                        help="only the rows whose key or label contains one of these comma-separated terms "
                             "(case-insensitive; * and ? glob), e.g. 'matmul,mlp' or 'sum*'")
    parser.add_argument("--json", metavar="FILE", help="also write the environment and every row's figures to FILE")
    parser.add_argument("--no-peer", action="store_true", help="opdispatch alone, without torch")
    parser.add_argument("--row-timeout", type=float, default=120.0,
                        help="seconds a row may take before its process is killed (default 120)")
    parser.add_argument("--budget", type=float, default=420.0,
                        help="seconds for the whole run: rows not run by then are reported as not run (default 420)")
    parser.add_argument("--list", action="store_true", help="print the rows' keys and labels and exit")
    parser.add_argument("--device", default="cuda", help=argparse.SUPPRESS)  # cpu: a dry run of every code path
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child-rows", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args)
    if args.list:
        for row in ROWS:
            print(f"{row['key']:22s} {row['label']}")
        return 0
    rows = select_rows(args.rows)
    if not rows:
        print(f"bench_cuda: no row matches {args.rows!r} (--list shows them)", file=sys.stderr)
        return 2
    started = time.perf_counter()
    in_child = [row["key"] for row in rows if not row.get("parent")]
    in_parent = [row["key"] for row in rows if row.get("parent")]
    # The child says whether there is anything to run; even with first-op rows alone it runs (no rows).
    deadline = time.monotonic() + args.budget
    env, results, skip = run_children(args, in_child, deadline)
    if skip:
        print(f"CUDA benchmark skipped: {skip}")
        return 0
    if env is None:
        print("bench_cuda: the benchmark process failed before it ran any row (its stderr is above)")
        if not in_parent:
            return 1
        env = {}
    if in_parent:
        results.update(first_op_rows(args, in_parent, deadline))
    elapsed = time.perf_counter() - started
    gpu = env.get("gpu", "cpu (a dry run: --device cpu)" if args.device == "cpu" else "?")
    print(f"GPU: {gpu}")
    versions = f"opdispatch {env.get('opdispatch', '?')}"
    if not args.no_peer:
        versions += f", torch {env.get('torch', '?')} (CUDA {env.get('torch_cuda')})"
    print(f"versions: {versions}; python {env.get('python', '?')}")
    sync = env.get("sync", {})
    print(f"sync: opdispatch: {sync.get('od', '?')}" + ("" if args.no_peer else f"; torch: {sync.get('torch', '?')}"))
    if "tf32" in env:
        print(f"torch.backends.cuda.matmul.allow_tf32: {env['tf32']}")
    print(f"float32; best of 3 repeats of N calls, one synchronize after each loop{' (--quick)' if args.quick else ''}; "
          f"{elapsed:.0f} s in all\n")
    print(report(rows, results, args.no_peer))
    print("\nratio: opdispatch time / torch time (lower is better); TFLOP/s rows: opdispatch TFLOP/s / "
          "torch TFLOP/s (higher is better); MiB rows: opdispatch / torch.")
    print("goal: issue 37's (rows <= 1.25x, matmul >= 0.9x of torch's TFLOP/s, MLP step <= 1.2x, "
          "first op with the JIT cache off <= 0.5 s); check: opdispatch's result against torch's (np.allclose).")
    errors = [(key, tag, r[f"{tag}_error"]) for key, r in results.items() for tag in ("od", "torch")
              if f"{tag}_error" in r and len(r[f"{tag}_error"]) > 48]
    if errors:
        print("\nerrors in full:")
        for key, tag, message in errors:
            print(f"  {key} ({'opdispatch' if tag == 'od' else 'torch'}): {message}")
    if args.no_peer:
        print("\nNOTE: --no-peer: opdispatch's figures only.")
    if args.json:
        document = {"env": env, "quick": args.quick, "device": args.device, "seconds": elapsed,
                    "rows": [dict(ROW_BY_KEY[row["key"]], **{k: v for k, v in results.get(row["key"], {}).items()
                                                               if k != "key"},
                                  ratio=judge(row, results.get(row["key"], {}))[0],
                                  met=judge(row, results.get(row["key"], {}))[2])
                             for row in rows]}
        with open(args.json, "w") as handle:
            json.dump(document, handle, indent=1)
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
