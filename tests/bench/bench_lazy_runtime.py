"""Benchmark: the lazy backend's runtime against eager cpu on a two-layer MLP forward.

    scons -j2 --backend=lazy && python tests/bench/bench_lazy_runtime.py [--steps N] [--batch B]

Per step, eager: the forward on cpu tensors. Lazy: the inputs moved to lazy, the forward traced
(IR recorded, shapes from meta tensors), mark_step() (the graph hashed, its plan found in the
graph cache after the first step, the nodes lowered to eager cpu calls) and the outputs read back
with to("cpu"). Columns: median milliseconds per step over N steps after the first (which
compiles the plan and is shown on its own), and the metrics the backend counted, with the graph
cache's hits and misses.

Then a scalar loop: N steps of an SGD-like update whose learning rate is a new Python float each
step (w = w - lr * tanh(w)). Scalars are IR operands, so every step is the first step's graph:
the figures printed are the graph cache's (one miss, then a hit per step).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.join(os.path.dirname(os.path.dirname(_HERE)), "build", "python")]
from table import render_table  # noqa: E402

import numpy as np  # noqa: E402


def mlp(od, x, w1, b1, w2, b2):
    out = od.addmm(b2, od.addmm(b1, x, w1).relu(), w2)
    return out, out.sum(), out.mean()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--features", type=int, nargs=3, default=(256, 512, 10), metavar=("IN", "HIDDEN", "OUT"))
    args = parser.parse_args()
    import opdispatch as od
    import opdispatch.lazy as lazy
    if not lazy.is_built():
        sys.exit("the lazy backend is not built: scons -j2 --backend=lazy")
    rng = np.random.default_rng(0)
    n_in, hidden, n_out = args.features
    arrays = [rng.standard_normal(s).astype(np.float32) for s in [(n_in, hidden), (hidden,), (hidden, n_out), (n_out,)]]
    eager_params = [od.tensor(a) for a in arrays]
    lazy_params = [t.to("lazy") for t in eager_params]
    lazy.mark_step()
    lazy.reset_metrics()

    eager, trace, step, total = [], [], [], []
    for _ in range(args.steps + 1):
        data = rng.standard_normal((args.batch, n_in)).astype(np.float32)
        start = time.perf_counter()
        expected = [t.numpy() for t in mlp(od, od.tensor(data), *eager_params)]
        eager.append(time.perf_counter() - start)

        start = time.perf_counter()
        outputs = mlp(od, od.tensor(data).to("lazy"), *lazy_params)
        traced = time.perf_counter()
        lazy.mark_step()
        stepped = time.perf_counter()
        got = [t.to("cpu").numpy() for t in outputs]
        done = time.perf_counter()
        trace.append(traced - start)
        step.append(stepped - traced)
        total.append(done - start)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4)

    def ms(values):
        return f"{statistics.median(values) * 1e3:.3f}"

    rows = [["first step (plan compiled)", f"{eager[0] * 1e3:.3f}", f"{trace[0] * 1e3:.3f}", f"{step[0] * 1e3:.3f}",
             f"{total[0] * 1e3:.3f}"],
            [f"median of the next {args.steps}", ms(eager[1:]), ms(trace[1:]), ms(step[1:]), ms(total[1:])]]
    print(f"MLP {args.batch}x{n_in} -> {hidden} -> {n_out} (float32), ms per step")
    print(render_table(["", "eager cpu", "lazy: trace", "lazy: mark_step", "lazy: total"], rows, "<>>>>"))
    metrics = lazy.metrics()
    print({k: metrics[k] for k in ("graphs_compiled", "graph_cache_hits", "graph_cache_misses", "nodes_executed",
                                   "last_plan", "fallbacks")})
    scalar_loop(od, lazy, rng, args.steps)


def scalar_loop(od, lazy, rng, steps: int) -> None:
    """A learning rate that changes every step: one graph for all of them (Scalars are operands)."""
    data = rng.standard_normal((256, 256)).astype(np.float32)
    w_eager, w_lazy = od.tensor(data), od.tensor(data).to("lazy")
    lazy.mark_step()
    lazy.reset_metrics()
    start = time.perf_counter()
    for step in range(steps + 1):
        lr = 0.1 / (1 + step)  # a new float every step
        w_lazy = w_lazy - lr * od.tanh(w_lazy)
        w_eager = w_eager - lr * od.tanh(w_eager)
        lazy.mark_step()
    seconds = time.perf_counter() - start
    np.testing.assert_allclose(w_lazy.to("cpu").numpy(), w_eager.numpy(), rtol=1e-5, atol=1e-6)
    metrics = lazy.metrics()
    print(f"scalar loop: {steps + 1} steps, a new learning rate each, {seconds / (steps + 1) * 1e3:.3f} ms per step")
    print({k: metrics[k] for k in ("graphs_compiled", "graph_cache_hits", "graph_cache_misses", "graph_cache_size")})


if __name__ == "__main__":
    main()
