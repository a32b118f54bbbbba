"""The MLP of test_py_record_operators.py as a program of its own, for builds that are not the
checkout's: tests/scons/test_selective_build.py and tests/bench/bench_selective.py run it in a
fresh interpreter against a project's build (PYTHONPATH=PROJECT/build/python).

    python tests/runtime/mlp_program.py [--record ops.yaml] [--steps N] [--call OP] [--inference]

One training step of a two-layer classifier (addmm, relu, log_softmax, nll_loss, backward) on the
data and weights _mlp makes (numpy's default_rng(0)), then --steps more, each on fresh leaves
and timed alone. --record writes the operators of the whole run (opdispatch.record_operators),
--call OP then calls ``opdispatch.OP(x, x)`` and reports its error. Prints one JSON object: the
first step's loss and gradients (as floats: equal runs print equal text), the step times, the
recorded operators (name -> is root) and the call's error. --inference runs the forward alone, on
leaves that need no gradient (its gradients: [])."""
import argparse
import contextlib
import json
import time

import numpy as np

import opdispatch as od

SHAPES = [(6, 5), (5,), (5, 3), (3,)]  # w1, b1, w2, b2


def data():
    """(x, labels, [w1, b1, w2, b2]) as numpy arrays, drawn in _mlp's order."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 6))
    labels = rng.integers(0, 3, 8)
    return x, labels, [rng.standard_normal(shape) * 0.1 for shape in SHAPES]


def step(x, labels, weights):
    """Forward and backward on fresh leaves made from ``weights``: (loss, [leaf.grad])."""
    w1, b1, w2, b2 = leaves = [od.tensor(w, requires_grad=True) for w in weights]
    logits = od.addmm(b2, od.addmm(b1, x, w1).relu(), w2)
    loss = od.nll_loss(od.log_softmax(logits, 1), labels)
    loss.backward()
    return loss, [leaf.grad for leaf in leaves]


def forward(x, labels, weights):
    """The forward alone, without autograd (a recording marks an inference): (loss, [])."""
    with od.no_grad():
        w1, b1, w2, b2 = [od.tensor(w) for w in weights]
        logits = od.addmm(b2, od.addmm(b1, x, w1).relu(), w2)
        return od.nll_loss(od.log_softmax(logits, 1), labels), []


def run(steps: int, inference: bool = False) -> dict:
    x, labels, weights = data()
    x, labels = od.tensor(x), od.tensor(labels)
    one = forward if inference else step
    loss, grads = one(x, labels, weights)
    seconds = []
    for _ in range(steps):
        start = time.perf_counter()
        one(x, labels, weights)
        seconds.append(time.perf_counter() - start)
    return {"loss": loss.item(), "grads": [grad.tolist() for grad in grads], "step_s": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", metavar="FILE",
                        help="record the run's operators into FILE (torchgen's selection yaml)")
    parser.add_argument("--steps", type=int, default=0, help="timed steps after the first (default 0)")
    parser.add_argument("--call", metavar="OP", help="then call opdispatch.OP(x, x) and report its error")
    parser.add_argument("--inference", action="store_true", help="the forward alone, no gradients")
    args = parser.parse_args()
    # An inference run records its operators as used for no training: no autograd layer for them.
    recording = od.record_operators(args.record, training=not args.inference) if args.record else contextlib.nullcontext()
    with recording as recorded:
        result = run(args.steps, args.inference)
    result["operators"] = recorded.operators if recorded is not None else None
    result["error"] = None
    if args.call:
        x = od.tensor([[1.0, 2.0], [3.0, 4.0]])
        try:
            getattr(od, args.call)(x, x)
        except od.Error as error:
            result["error"] = str(error)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
