"""Issue 42's "torch's values and errors on the same programs": each program below runs once on
opdispatch and once on torch (both imported into one interpreter: the bench venv's torch and
build/python's opdispatch), and the table shows the largest difference of their results, or, for
the programs that must fail, whether opdispatch's error message holds torch's.

    OPGEN_BENCH_VENV=build/bench-venv python tests/bench/compare_autograd_torch.py

It needs torch (tests/bench/peer_env.py's venv, made when missing; without it the script says so
and exits 0) and a built checkout. Programs: tensor hooks and retain_grad, node hooks, double backward (a
Hessian-vector product, a gradient penalty, gradgrad through log_softmax and nll_loss), forward AD
(a jvp through a composite program, make_dual/unpack_dual, in-place on a dual), a custom
Function (first and second order, mark_dirty, once_differentiable) and ten misuses.
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from peer_env import REPO, ensure_torchgen  # noqa: E402


def programs(lib):
    """name -> zero-argument callable returning a list of arrays (or raising)."""
    f64 = lib.float64
    x0 = np.array([[0.3, -1.2, 0.8], [1.5, 0.1, -0.4]])
    w0 = np.array([[0.2, -0.5], [1.0, 0.3], [-0.7, 0.6]])
    t0 = np.array([1, 0])

    def leaf(values):
        return lib.tensor(values, dtype=f64, requires_grad=True)

    def arr(t):
        return None if t is None else t.detach().numpy().copy()

    def hooks():
        x = leaf(x0)
        x.register_hook(lambda g: g * 2)
        y = (x * x).exp()
        y.retain_grad()
        y.register_hook(lambda g: g + 1)
        (y.sum() * 3).backward()
        return [arr(x.grad), arr(y.grad)]

    def node_hooks():
        x, w = leaf(x0), leaf(w0)
        y = lib.matmul(x, w)
        y.grad_fn.register_prehook(lambda go: (go[0] * 0.5,))
        y.grad_fn.register_hook(lambda gi, go: (gi[0] * 2, gi[1]))
        y.sum().backward()
        return [arr(x.grad), arr(w.grad)]

    def hessian_vector():
        x = leaf(x0)
        v = lib.tensor(np.ones_like(x0) * 0.5, dtype=f64)
        (g,) = lib.autograd.grad((x.exp() * x.sin()).sum(), [x], create_graph=True)
        (hv,) = lib.autograd.grad(g, [x], v)
        return [arr(g), arr(hv)]

    def gradient_penalty():
        x, w = leaf(x0), leaf(w0)
        out = lib.log_softmax(lib.matmul(x, w).tanh(), 1)
        nll_loss = getattr(lib, "nll_loss", None) or lib.nn.functional.nll_loss  # torch's is in nn.functional
        loss = nll_loss(out, lib.tensor(t0))
        (gx,) = lib.autograd.grad(loss, [x], create_graph=True)
        ((gx * gx).sum()).backward()
        return [arr(gx), arr(w.grad), arr(x.grad)]

    def forward_ad():
        fwAD = lib.autograd.forward_ad
        x, w = lib.tensor(x0, dtype=f64), lib.tensor(w0, dtype=f64)
        u = lib.tensor(np.ones_like(x0) * 0.3, dtype=f64)
        with fwAD.dual_level():
            dx = fwAD.make_dual(x, u)
            y = lib.log_softmax(lib.matmul(dx.sin() * dx, w), 1)
            z = y * y.exp()
            primal, tangent = fwAD.unpack_dual(z)
            return [arr(primal), arr(tangent)]

    def forward_ad_inplace():
        fwAD = lib.autograd.forward_ad
        x = lib.tensor(x0, dtype=f64)
        with fwAD.dual_level():
            dx = fwAD.make_dual(x.clone(), lib.tensor(np.full_like(x0, 2.0), dtype=f64))
            y = dx * 1.0
            y.mul_(dx).add_(1.0)
            y[0].tanh_()
            return [arr(fwAD.unpack_dual(y).tangent)]

    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x.mul_(2)

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    def custom_function():
        x = leaf(x0)
        y = Exp.apply(x * 1)
        (g,) = lib.autograd.grad(y.sum(), [x], create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), [x])
        z = x * 1
        Double.apply(z).sum().backward()
        return [arr(y), arr(g), arr(h), arr(x.grad)]

    def errors():
        """Each misuse's message (a string; the table compares them)."""
        def message(fn):
            try:
                fn()
            except Exception as exc:  # noqa: BLE001 - the message is the result
                return str(exc)
            return "(no error)"

        def nograd_view():
            x = leaf(x0)
            y = x * 1
            with lib.no_grad():
                v = y[0]
            v.mul_(2)

        def expanded():
            lib.zeros(3, dtype=f64).expand(2, 3).add_(1)

        def nested():
            fwAD = lib.autograd.forward_ad
            with fwAD.dual_level():
                with fwAD.dual_level():
                    pass

        def tangent_shape():
            fwAD = lib.autograd.forward_ad
            with fwAD.dual_level():
                fwAD.make_dual(lib.tensor(x0, dtype=f64), lib.tensor([1.0], dtype=f64))

        def hook_size():
            x = leaf(x0)
            x.register_hook(lambda g: lib.tensor([1.0], dtype=f64))
            x.sum().backward()

        def wrong_count():
            class Bad(lib.autograd.Function):
                @staticmethod
                def forward(ctx, a, b):
                    return a * b

                @staticmethod
                def backward(ctx, grad):
                    return grad

            Bad.apply(leaf(x0), leaf(x0)).sum().backward()

        def twice():
            x = leaf(x0)
            y = (x.exp()).sum()
            y.backward()
            y.backward()

        return [message(lambda: lib.tensor([1.0]).register_hook(lambda g: g)),
                message(lambda: lib.tensor([1.0]).retain_grad()),
                message(nograd_view), message(expanded), message(nested), message(tangent_shape),
                message(hook_size), message(wrong_count), message(twice),
                message(lambda: leaf(x0).add_(1))]

    return {"tensor hooks, retain_grad": hooks, "node pre- and post-hooks": node_hooks,
            "Hessian-vector product": hessian_vector, "gradient penalty (log_softmax, nll_loss)": gradient_penalty,
            "forward AD jvp (matmul, sin, log_softmax, exp)": forward_ad, "forward AD in place (mul_, add_, view tanh_)":
            forward_ad_inplace, "custom Function (2nd order, mark_dirty)": custom_function, "errors": errors}


ERROR_LABELS = ["hook on a tensor without grad", "retain_grad without grad", "no_grad view changed in place",
                "write through an expanded view", "nested dual levels", "tangent of another shape",
                "hook changes the size", "Function: wrong gradient count", "backward twice",
                "leaf changed in place"]


def run_side(which: str) -> dict:
    if which == "torch":
        import torch as lib  # noqa: PLC0415 - the peer, in its own process
    else:
        sys.path.insert(0, os.path.join(REPO, "build", "python"))
        import opdispatch as lib  # noqa: PLC0415
    results = {}
    for name, fn in programs(lib).items():
        try:
            results[name] = ("ok", fn())
        except Exception as exc:  # noqa: BLE001 - reported in the table
            results[name] = ("error", f"{type(exc).__name__}: {exc}")
    return results


def _essence(message: str) -> str:
    """The part of a message both libraries word alike: after the operator name opdispatch puts
    first ("aten::mul_.Scalar: ..."), up to the first period."""
    text = message.split(": ", 1)[1] if message.startswith("aten::") else message
    return text.split(". ")[0].strip()


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--side":
        import pickle  # noqa: PLC0415
        sys.stdout.buffer.write(pickle.dumps(run_side(sys.argv[2])))
        return 0
    python = ensure_torchgen()  # the bench venv's python, torch installed there
    if python is None:
        print("autograd comparison skipped: no venv with torch (set OPGEN_BENCH_VENV)")
        return 0
    import pickle  # noqa: PLC0415
    sides = {}
    for which, interpreter in (("opdispatch", sys.executable), ("torch", python)):
        run = subprocess.run([interpreter, __file__, "--side", which], capture_output=True, timeout=600)
        if run.returncode != 0:
            print(f"{which} side failed:\n{run.stderr.decode()[-3000:]}")
            return 1
        sides[which] = pickle.loads(run.stdout)
    mismatches = 0
    print(f"{'program':48} {'max |opdispatch - torch|':>26}")
    for name in sides["torch"]:
        ours, theirs = sides["opdispatch"][name], sides["torch"][name]
        if name == "errors":
            continue
        if ours[0] != "ok" or theirs[0] != "ok":
            print(f"{name:48} {'error: ' + str(ours[1] if ours[0] != 'ok' else theirs[1])[:60]}")
            mismatches += 1
            continue
        diff = max(float(np.max(np.abs(a - b))) if a is not None and b is not None else (0.0 if a is b else np.inf)
                   for a, b in zip(ours[1], theirs[1]))
        mismatches += diff > 1e-10
        print(f"{name:48} {diff:>26.2e}")
    print()
    print(f"{'misuse':34} {'same message':>12}  torch's message (opdispatch's, when it differs)")
    for label, ours, theirs in zip(ERROR_LABELS, sides["opdispatch"]["errors"][1], sides["torch"]["errors"][1]):
        same = _essence(theirs) in ours or _essence(ours) == _essence(theirs)
        mismatches += not same
        print(f"{label:34} {'yes' if same else 'NO':>12}  {theirs[:110]}" + ("" if same else f"\n{'':48}{ours[:110]}"))
    print(f"\n{mismatches} difference(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
