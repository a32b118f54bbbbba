"""bench_cuda.py's rows and the process that runs them (``bench_cuda.py --child``): each row's
workload spelled for opdispatch and for torch, the inputs both sides share, the timing loop and
the check of opdispatch's result against torch's. The child prints one protocol line (MARK + a
JSON object) for its environment, then a "start" and a "row" line for each row."""
from __future__ import annotations

import fnmatch
import gc
import json
import math
import os
import sys
import time
import zlib
from typing import Callable, Optional

from peer_env import REPO

OPDISPATCH_PATH = os.path.join(REPO, "build", "python")
MARK = "@@bench "  # the child's protocol lines on stdout start with this; anything else is passed on
ROW_GOAL = 1.25  # every timed row: opdispatch at most this many times torch's time
MATMUL_GOAL = 0.9  # matmul: at least this fraction of torch's TFLOP/s
MLP_GOAL = 1.2  # the MLP train step: at most this many times torch's time
FIRST_OP_GOAL = 0.5  # seconds, the first CUDA op in a fresh process with the JIT cache off
BIG = 1 << 24  # 16M elements
SIDE = 4096  # 4096 x 4096 = 16M elements
MiB = 1 << 20


# ----- the rows --------------------------------------------------------------------------------
# key -> (label, what it measures). kind: "time" (seconds a call; `bytes` for GB/s), "flops"
# (seconds a call; `flops` for TFLOP/s, ratio as throughput), "mib" (a figure, no timing).

ROWS: list[dict] = [
    dict(key="add-16M", label="a + b, 16M elements", kind="time", bytes=3 * 4 * BIG, goal=ROW_GOAL),
    dict(key="mul-16M", label="a * b, 16M", kind="time", bytes=3 * 4 * BIG, goal=ROW_GOAL),
    dict(key="add-1", label="a + b, numel 1 (per-op cost)", kind="time", goal=ROW_GOAL, max_n=5000),
    dict(key="sum-16M", label="a.sum(), 16M", kind="time", bytes=4 * BIG, goal=ROW_GOAL, rtol=1e-3, atol=1.0),
    dict(key="sum-dim1", label="a.sum([1]), 4096x4096", kind="time", bytes=4 * BIG, goal=ROW_GOAL, rtol=1e-3, atol=1e-3),
    dict(key="sum-dim0", label="a.sum([0]), 4096x4096", kind="time", bytes=4 * BIG, goal=ROW_GOAL, rtol=1e-3, atol=1e-3),
    dict(key="amax-dim1", label="a.amax([1]), 4096x4096", kind="time", bytes=4 * BIG, goal=ROW_GOAL),
    dict(key="argmax-dim1", label="a.argmax(1), 4096x4096", kind="time", bytes=4 * BIG, goal=ROW_GOAL),
    dict(key="transpose", label="a.t().contiguous(), 4096x4096", kind="time", bytes=2 * 4 * BIG, goal=ROW_GOAL),
    dict(key="log_softmax", label="log_softmax(a, 1), 4096x4096", kind="time", bytes=2 * 4 * BIG, goal=ROW_GOAL,
         rtol=1e-4, atol=1e-4),
    dict(key="log_softmax-backward", label="_log_softmax_backward_data, 4096x4096", kind="time",
         bytes=3 * 4 * BIG, goal=ROW_GOAL, rtol=1e-4, atol=1e-4),
    dict(key="matmul-1024", label="matmul 1024^3", kind="flops", flops=2 * 1024 ** 3, goal=MATMUL_GOAL,
         rtol=1e-3, atol=1e-3),
    dict(key="matmul-4096", label="matmul 4096^3", kind="flops", flops=2 * 4096 ** 3, goal=MATMUL_GOAL,
         max_n=200, rtol=1e-3, atol=1e-2),
    dict(key="mlp-step", label="MLP train step 1024x1024->4096->10", kind="time", goal=MLP_GOAL, max_n=500,
         rtol=1e-4, atol=1e-5),
    dict(key="empty-16M", label="empty([16M]), freed each call", kind="time"),
    dict(key="memory-allocated", label="memory_allocated() after the empty loop, MiB", kind="mib"),
    dict(key="memory-reserved", label="memory_reserved() after the empty loop, MiB", kind="mib"),
    dict(key="memory-peak", label="max_memory_allocated() over the run, MiB", kind="mib"),
    # Run by the parent, each side in fresh processes (see first_op()).
    dict(key="import", label="import in a fresh process, s", kind="seconds", parent=True),
    dict(key="first-op-jit-off", label="first CUDA op, fresh process, JIT cache off, s", kind="seconds",
         goal=FIRST_OP_GOAL, parent=True),
    dict(key="first-op", label="first CUDA op, fresh process, JIT cache on (2nd run), s", kind="seconds",
         parent=True),
]
ROW_BY_KEY = {row["key"]: row for row in ROWS}


def select_rows(pattern: Optional[str]) -> list[dict]:
    """The rows whose key or label contains one of PATTERN's comma-separated terms (case-insensitive;
    a term with * or ? is a glob on the key or the label, a row's whole key names that row alone);
    all rows without a pattern."""
    if not pattern:
        return list(ROWS)
    terms = [t.strip().lower() for t in pattern.split(",") if t.strip()]

    keys = {row["key"].lower() for row in ROWS}

    def matches(term: str, row: dict) -> bool:
        if term in keys:  # a row's key names that row alone ("add-1" is not "add-16M")
            return term == row["key"].lower()
        names = (row["key"].lower(), row["label"].lower())
        return any(fnmatch.fnmatch(n, term) if any(c in term for c in "*?[") else term in n for n in names)

    def wanted(row: dict) -> bool:
        return any(matches(term, row) for term in terms)

    return [row for row in ROWS if wanted(row)]


# ----- the child: both libraries in one process --------------------------------------------------

class Side:
    """One library's spelling of each workload on `device`."""

    def __init__(self, name: str, lib, device: str, inputs: Callable):
        self.name, self.lib, self.device, self.inputs = name, lib, device, inputs
        self.cache: dict = {}
        if name == "opdispatch":
            sync = getattr(lib.cuda, "synchronize", None)
            if sync is not None and device != "cpu":
                self.sync, self.sync_how = sync, "od.cuda.synchronize()"
            else:  # today's build: copies are synchronous, so a copy to the host waits for the kernels
                probe = lib.full([1], 0.0, device=device)
                self.sync = lambda: probe.to("cpu")
                self.sync_how = "a one-element copy to the host" + ("" if sync else " (no od.cuda.synchronize)")
        elif device == "cpu":
            self.sync, self.sync_how = (lambda: None), "none (cpu)"
        else:
            self.sync, self.sync_how = lib.cuda.synchronize, "torch.cuda.synchronize()"

    def t(self, name: str, shape=None):
        """The input `name` (an array of Inputs) on the device, made once."""
        key = (name, shape)
        if key not in self.cache:
            array = self.inputs(name)
            if shape is not None:
                array = array.reshape(shape)
            self.cache[key] = self.lib.tensor(array, device=self.device)  # a copy, on both sides
        return self.cache[key]

    def host(self, result):
        if self.name == "opdispatch":
            return result.detach().to("cpu").numpy()
        return result.detach().cpu().numpy()

    # Each returns a zero-argument callable: the workload, returning its result.
    def workload(self, key: str) -> Callable:
        lib, od = self.lib, self.name == "opdispatch"
        sq = (SIDE, SIDE)
        if key == "add-16M":
            a, b = self.t("a"), self.t("b")
            return lambda: a + b
        if key == "mul-16M":
            a, b = self.t("a"), self.t("b")
            return lambda: a * b
        if key == "add-1":
            a, b = self.t("one_a"), self.t("one_b")
            return lambda: a + b
        if key == "sum-16M":
            a = self.t("a")
            return lambda: a.sum()
        if key in ("sum-dim1", "sum-dim0"):
            a, dim = self.t("a", sq), int(key[-1])
            return (lambda: a.sum([dim])) if od else (lambda: a.sum(dim))
        if key == "amax-dim1":
            a = self.t("a", sq)
            return (lambda: a.amax([1])) if od else (lambda: a.amax(1))
        if key == "argmax-dim1":
            a = self.t("a", sq)
            return lambda: a.argmax(1)
        if key == "transpose":
            a = self.t("a", sq)
            return lambda: a.t().contiguous()
        if key == "log_softmax":
            a = self.t("a", sq)
            return lambda: lib.log_softmax(a, 1)
        if key == "log_softmax-backward":
            a, g = self.t("a", sq), self.t("b", sq)
            out = lib.log_softmax(a, 1)
            if od:
                return lambda: lib._log_softmax_backward_data(g, out, 1, lib.float32)
            return lambda: lib.ops.aten._log_softmax_backward_data(g, out, 1, lib.float32)
        if key in ("matmul-1024", "matmul-4096"):
            n = int(key.split("-")[1])
            a, b = self.t(f"m{n}_a", (n, n)), self.t(f"m{n}_b", (n, n))
            return lambda: lib.matmul(a, b)
        if key == "mlp-step":
            return self.mlp_step()
        if key == "empty-16M":  # the tensor is dropped at once: each call allocates and frees
            size, device = ([BIG] if od else BIG), self.device

            def empty():
                lib.empty(size, device=device)

            return empty
        raise KeyError(key)

    def mlp_step(self) -> Callable:
        """linear + relu + linear + log_softmax + nll_loss, backward, SGD: 1024x1024 -> 4096 -> 10."""
        lib, dev = self.lib, self.device
        x = self.t("mlp_x", (1024, 1024))
        labels_array = self.inputs("mlp_labels")
        params = [lib.tensor(self.inputs(f"mlp_{n}"), device=dev, requires_grad=True) for n in ("w1", "b1", "w2", "b2")]
        if self.name == "opdispatch":
            labels = lib.tensor(labels_array, device=dev)
            nll_loss = lib.nll_loss
        else:
            labels = lib.tensor(labels_array, device=dev)
            nll_loss = lib.nn.functional.nll_loss
        w1, b1, w2, b2 = params

        def step(lr=0.01):
            logits = lib.addmm(b2, lib.addmm(b1, x, w1).relu(), w2)
            loss = nll_loss(lib.log_softmax(logits, 1), labels)
            loss.backward()
            with lib.no_grad():
                for p in params:
                    p.sub_(p.grad * lr)
                    p.grad = None
            return loss

        return step

    def memory(self, key: str) -> float:
        cuda = self.lib.cuda
        name = {"memory-allocated": "memory_allocated", "memory-reserved": "memory_reserved",
                "memory-peak": "max_memory_allocated"}[key]
        if not hasattr(cuda, name):
            raise RuntimeError(f"{self.name}.cuda has no {name}()")
        return getattr(cuda, name)() / MiB


class Inputs:
    """float32 standard-normal arrays by name, each from its own seed: the same values on both sides."""

    SHAPES = {"a": (BIG,), "b": (BIG,), "one_a": (1,), "one_b": (1,), "m1024_a": (1024 * 1024,),
              "m1024_b": (1024 * 1024,), "m4096_a": (SIDE * SIDE,), "m4096_b": (SIDE * SIDE,),
              "mlp_x": (1024 * 1024,), "mlp_w1": (1024, 4096), "mlp_b1": (4096,), "mlp_w2": (4096, 10),
              "mlp_b2": (10,)}
    SCALE = {"mlp_w1": 0.03, "mlp_b1": 0.03, "mlp_w2": 0.015, "mlp_b2": 0.015}

    def __init__(self, np):
        self.np, self.arrays = np, {}

    def __call__(self, name: str):
        if name not in self.arrays:
            np = self.np
            rng = np.random.default_rng(zlib.crc32(name.encode()))
            if name == "mlp_labels":
                self.arrays[name] = rng.integers(0, 10, 1024).astype(np.int64)
            else:
                array = rng.standard_normal(self.SHAPES[name], dtype=np.float32)
                self.arrays[name] = array * np.float32(self.SCALE.get(name, 1.0))
        return self.arrays[name]

    def clear(self):
        self.arrays.clear()


def time_calls(fn: Callable, sync: Callable, quick: bool, max_n: int) -> tuple[float, int]:
    """(best seconds a call, calls a repeat): warm-up calls, one call to size the loop, 3 repeats
    of n calls and one sync each. A slow call (over a repeat's target) skips the other warm-ups."""
    target = 0.05 if quick else 0.25
    one = math.inf
    for _ in range(2 if quick else 4):  # the last one sizes the loop
        start = time.perf_counter()
        result = fn()
        sync()
        one = time.perf_counter() - start
        del result
        if one > target:
            break
    cap = max(1, max_n // 5) if quick else max_n
    n = max(1, min(cap, int(target / max(one, 1e-7))))
    best = math.inf
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(n):
            result = fn()
        sync()
        best = min(best, (time.perf_counter() - start) / n)
        del result
    return best, n


def check(row: dict, expected, got) -> str:
    """'ok' or 'MISMATCH ...': opdispatch's result (got) against torch's (expected), on the host."""
    import numpy as np
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape:
        return f"MISMATCH: shape {got.shape} vs torch's {expected.shape}"
    if expected.dtype.kind in "biu":
        bad = int(np.count_nonzero(got != expected))
        return "ok" if bad == 0 else f"MISMATCH: {bad} of {expected.size} differ"
    rtol, atol = row.get("rtol", 1e-5), row.get("atol", 1e-5)
    if np.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True):
        return "ok"
    diff = float(np.nanmax(np.abs(got.astype(np.float64) - expected.astype(np.float64))))
    return f"MISMATCH: max abs diff {diff:.3g} (rtol {rtol:g}, atol {atol:g})"


def short_error(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    return text.splitlines()[0] if text else type(exc).__name__


def run_row(row: dict, sides: dict, quick: bool) -> dict:
    """One row on each side: {"od": figure or None, "torch": ..., "od_error", "torch_error", "check", "n"}."""
    out = {"key": row["key"]}
    key = row["key"]
    if row["kind"] == "mib":
        for tag, side in sides.items():
            try:
                gc.collect()
                out[tag] = side.memory(key)
            except Exception as exc:  # noqa: BLE001 - a report: say what failed and go on
                out[f"{tag}_error"] = short_error(exc)
        return out
    if key == "empty-16M":  # the allocator's figures: nothing but this row's tensors alive
        for side in sides.values():
            side.cache.clear()
        gc.collect()
    fns, results = {}, {}
    for tag, side in sides.items():
        try:
            fns[tag] = side.workload(key)
            if key != "empty-16M":
                results[tag] = side.host(fns[tag]())  # the check's call, which is also a warm-up
        except Exception as exc:  # noqa: BLE001
            out[f"{tag}_error"] = short_error(exc)
            fns.pop(tag, None)
    if "od" in results and "torch" in results:
        try:
            out["check"] = check(row, results["torch"], results["od"])
        except Exception as exc:  # noqa: BLE001
            out["check"] = f"check failed: {short_error(exc)}"
    results.clear()
    for tag, fn in fns.items():
        try:
            seconds, n = time_calls(fn, sides[tag].sync, quick, row.get("max_n", 2000))
            out[tag], out[f"{tag}_n"] = seconds, n
        except Exception as exc:  # noqa: BLE001
            out[f"{tag}_error"] = short_error(exc)
    return out


def emit(message: dict) -> None:
    sys.stdout.write(MARK + json.dumps(message) + "\n")
    sys.stdout.flush()


def child(args) -> int:
    """Prints one "env" (or "skip") message, then "start" and "row" messages for each row."""
    device, keys = args.device, [k for k in args.child_rows.split(",") if k]
    if os.path.isdir(OPDISPATCH_PATH) and OPDISPATCH_PATH not in sys.path:
        sys.path.insert(0, OPDISPATCH_PATH)
    try:
        import numpy as np
        import opdispatch as od
    except Exception as exc:  # noqa: BLE001
        emit({"type": "skip", "reason": f"cannot import opdispatch ({short_error(exc)}; build it with scons, "
                                        f"or put build/python on PYTHONPATH)"})
        return 0
    env = {"type": "env", "opdispatch": od.__version__, "device": device, "python": sys.version.split()[0]}
    if device != "cpu":
        built = od.cuda.is_built() if hasattr(od.cuda, "is_built") else "?"
        if not od.cuda.is_available():
            emit({"type": "skip", "reason": f"no CUDA device (opdispatch.cuda.is_available() is False; "
                                            f"built with CUDA: {built})"})
            return 0
    torch = None
    if not args.no_peer:
        try:
            import torch
        except Exception as exc:  # noqa: BLE001
            emit({"type": "skip", "reason": f"torch is not importable ({short_error(exc)}); "
                                            f"--no-peer runs opdispatch alone"})
            return 0
        env["torch"] = torch.__version__
        env["torch_cuda"] = getattr(torch.version, "cuda", None)
        if device != "cpu":
            if not torch.cuda.is_available():
                emit({"type": "skip", "reason": "no CUDA device (torch.cuda.is_available() is False); "
                                                "--no-peer runs opdispatch alone"})
                return 0
            env["gpu"] = torch.cuda.get_device_name()
            try:
                env["tf32"] = bool(torch.backends.cuda.matmul.allow_tf32)
            except Exception:  # noqa: BLE001
                pass
    inputs = Inputs(np)
    sides = {}
    try:
        sides["od"] = Side("opdispatch", od, device, inputs)
        if torch is not None:
            sides["torch"] = Side("torch", torch, device, inputs)
    except Exception as exc:  # noqa: BLE001
        emit({"type": "skip", "reason": f"cannot set up the {device} device: {short_error(exc)}"})
        return 0
    env["sync"] = {tag: side.sync_how for tag, side in sides.items()}
    emit(env)
    for key in keys:
        emit({"type": "start", "key": key})
        row = ROW_BY_KEY[key]
        try:
            result = run_row(row, sides, args.quick)
        except Exception as exc:  # noqa: BLE001
            result = {"key": key, "od_error": f"row failed: {short_error(exc)}"}
        if key == "empty-16M":
            inputs.clear()  # the inputs of the rows after it are made again
        emit({"type": "row", **result})
    emit({"type": "done"})
    return 0
