"""Programs for the real lazy backend, each run in a fresh interpreter by test_lazy_backend.py
(`python lazy_programs.py NAME`): the backend registers its kernels and fallback at the Lazy key,
where the other runtime tests register Python kernels, and a fresh process starts with an empty
graph cache. Each program checks its values against eager CPU with numpy and prints a JSON
object of facts (metrics, IR text) for the test to assert on."""
import json
import re
import sys
import time

import numpy as np

import opdispatch as od
import opdispatch.lazy as lazy

RNG = np.random.default_rng(18)
VIEW_OPS = {"view", "t", "transpose", "permute", "expand", "squeeze", "unsqueeze", "select", "slice", "as_strided",
            "reshape", "contiguous", "alias"}


def values(t) -> np.ndarray:
    assert t.device == "lazy", t.device
    cpu = t.to("cpu")
    assert cpu.device == "cpu" and not od.is_functional(cpu)  # to("cpu") syncs and unwraps
    return cpu.numpy()


def same(lazy_tensor, eager_tensor) -> None:
    assert lazy_tensor.dtype is eager_tensor.dtype, (lazy_tensor.dtype, eager_tensor.dtype)
    assert lazy_tensor.shape == eager_tensor.shape, (lazy_tensor.shape, eager_tensor.shape)
    np.testing.assert_allclose(values(lazy_tensor), eager_tensor.numpy(), rtol=1e-5, atol=1e-6)


def ops_in(text: str) -> list[str]:
    """The op of every node line of an ir_text."""
    return re.findall(r"^%\d+ = ([\w:.]+)\(", text, re.M)


def is_view_or_inplace(op: str) -> bool:
    name = op.split("::")[-1].split(".")[0]
    return name in VIEW_OPS or name.endswith("_")


def floats(*shape) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


# ----- programs -----

def mlp(x, w1, b1, w2, b2):
    hidden = od.addmm(b1, x, w1).relu()
    out = od.addmm(b2, hidden, w2)
    return out, out.sum(), out.mean()


def program_mlp() -> dict:
    """Two steps of a two-layer MLP forward with new data: the second is a graph-cache hit."""
    params = [floats(4, 8), floats(8), floats(8, 3), floats(3)]
    facts = {}
    for step in ("first", "second"):
        data = floats(5, 4)
        eager = mlp(od.tensor(data), *[od.tensor(p) for p in params])
        outputs = mlp(od.tensor(data).to("lazy"), *[od.tensor(p).to("lazy") for p in params])
        if step == "first":
            facts["ir"] = lazy.ir_text(*outputs)
        start = time.perf_counter()
        lazy.mark_step()
        facts[f"{step}_mark_step_s"] = time.perf_counter() - start
        for got, expected in zip(outputs, eager):
            same(got, expected)
        facts[step] = lazy.metrics()
    return facts


def pointwise(od_, a, b, c, d):
    scaled = a * 2 + b                      # float32 (2, 3) with float64 (3,): broadcast, promoted
    mixed = scaled / c - od_.exp(a).neg()   # int32 (2, 1) divides: true division
    gated = od_.where(d, mixed, c)          # bool condition, an int32 branch
    clipped = od_.maximum(gated.sigmoid(), od_.minimum(c, b)).clamp(0.1, 0.9)
    powered = (a.abs() + 1) ** 2 - c ** 2   # pow with a Python number and an int tensor
    return scaled, mixed, gated, clipped, powered, (a > b) != d, (c + 1).sum([0], True)


def program_pointwise() -> dict:
    arrays = [floats(2, 3), RNG.standard_normal(3), np.array([[2], [-3]], dtype=np.int32),
              np.array([[True, False, True], [False, True, True]])]
    facts = {}
    for step in ("first", "second"):
        eager = pointwise(od, *[od.tensor(a) for a in arrays])
        got = pointwise(od, *[od.tensor(a).to("lazy") for a in arrays])
        lazy.mark_step()
        for g, e in zip(got, eager):
            same(g, e)
        facts[step] = lazy.metrics()
        arrays = [a + 1 if a.dtype != np.bool_ else ~a for a in arrays]  # new data, same structure
    return facts


def views_and_mutations(x):
    y = x.view(6)          # a view of x ...
    y.add_(1)              # ... written through: x changes
    z = x.t()
    z.mul_(2)              # through a transposed view
    row = x[1]
    row.sub_(0.5)          # through select
    part = x[:, 1:]        # slice
    part.clamp_(max=5.0)
    x.unsqueeze_(0)        # an in-place view
    total = x.sum([2])
    return x, y, z, row, total


def program_views() -> dict:
    base = floats(2, 3)
    eager = views_and_mutations(od.tensor(base))
    got = views_and_mutations(od.tensor(base).to("lazy"))
    text = lazy.ir_text(*got)
    for g, e in zip(got, eager):
        same(g, e)
    return {"ir": text, "ops": ops_in(text), "metrics": lazy.metrics()}


def program_aliasing_across_steps() -> dict:
    base = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = od.tensor(base).to("lazy")
    y = x.view(6)
    lazy.mark_step()
    y.add_(1)                                   # after the step: x still sees it
    np.testing.assert_array_equal(values(x), base + 1)
    x.mul_(2)
    lazy.mark_step()
    np.testing.assert_array_equal(values(y), ((base + 1) * 2).reshape(6))
    col = x[:, 0]
    lazy.mark_step()
    col.fill_(-1)
    expected = (base + 1) * 2
    expected[:, 0] = -1
    np.testing.assert_array_equal(values(x), expected)
    np.testing.assert_array_equal(values(y), expected.reshape(6))
    return {"metrics": lazy.metrics()}


def program_fallbacks() -> dict:
    seed = 7
    r = od.rand([4], generator=od.Generator().manual_seed(seed), device="lazy")  # uniform_ falls back
    np.testing.assert_array_equal(values(r), od.rand([4], generator=od.Generator().manual_seed(seed)).numpy())
    ramp = od.arange(5, device="lazy")  # arange fills its out= tensor on the cpu
    np.testing.assert_array_equal(values(ramp * 2), np.arange(5) * 2)  # fallback data feeds the IR
    x = od.tensor(floats(2, 3)).to("lazy")
    np.testing.assert_allclose(values(od.matmul(x, x.t())), od.matmul(od.tensor(values(x)), od.tensor(values(x)).t()).numpy(),
                               rtol=1e-5)
    return {"metrics": lazy.metrics()}


def program_cache_and_buffers() -> dict:
    """A chain of unary operators: its plan reuses buffers; scalar constants are not structure."""
    facts = {}
    for value in (3.0, 5.0):
        x = od.tensor(floats(4, 4)).to("lazy")
        y = x + od.full([4, 4], value, device="lazy")
        for _ in range(10):
            y = y.tanh().abs()
        eager = od.tensor(values(x)) + value
        for _ in range(10):
            eager = eager.tanh().abs()
        lazy.mark_step()
        same(y, eager)
        facts[str(value)] = lazy.metrics()
    return facts


def program_scalar_loop() -> dict:
    """A loop that multiplies by a different Python float each step (a learning rate or decay that
    changes): the float is a constant operand, not an attribute, so every step is one graph,
    compiled at the first step and found in the graph cache after it, with eager's values."""
    data = floats(3, 4)
    x_lazy, x_eager = od.tensor(data).to("lazy"), od.tensor(data)
    lazy.mark_step()
    lazy.reset_metrics()
    facts = {"steps": []}
    for step in range(6):
        scale = 0.9 - 0.137 * step   # a new float every step
        x_lazy = (x_lazy * scale).tanh() + step
        x_eager = (x_eager * scale).tanh() + step
        if step == 0:
            facts["ir"] = lazy.ir_text(x_lazy)
        lazy.mark_step()
        same(x_lazy, x_eager)
        facts["steps"].append(lazy.metrics())
    return facts


def program_errors() -> dict:
    x = od.tensor(floats(2, 3)).to("lazy")
    messages = {}
    for name, call in {
        "device": lambda: x + od.ones([2, 3]),
        "shape": lambda: x + od.ones([4], device="lazy"),
        "plain_view": lambda: od.from_functional(x).view(6).sum(),
        "ir_text": lambda: lazy.ir_text(od.ones([2])),
        "ir_text_type": lambda: lazy.ir_text([x]),
    }.items():
        try:
            call()
        except (od.Error, TypeError) as e:
            messages[name] = f"{type(e).__name__}: {e}"
        else:
            messages[name] = "no error"
    same(x * 1, od.tensor(values(x)))  # x is still usable
    return messages


def program_dtypes_and_moves() -> dict:
    ints = od.tensor(np.array([1, 2, 3], dtype=np.int32)).to("lazy")
    as_float = ints.to(od.float64)            # a dtype change on the device: a cast node
    text = lazy.ir_text(as_float)
    np.testing.assert_array_equal(values(as_float), [1.0, 2.0, 3.0])
    assert as_float.dtype is od.float64
    mixed = od.zeros([2, 3], dtype=od.int64, device="lazy")
    mixed.copy_(od.tensor([0.5, 1.5, 2.5]).to("lazy"))  # float32 -> int64, broadcast: cast, expand_copy
    text += lazy.ir_text(mixed)
    np.testing.assert_array_equal(values(mixed), [[0, 1, 2]] * 2)
    z = od.zeros([2, 2], device="lazy")
    z.copy_(od.tensor([1.5, 2.5]))            # cpu -> lazy, broadcast
    np.testing.assert_array_equal(values(z), [[1.5, 2.5]] * 2)
    assert z.to(od.int64).to("cpu").tolist() == [[1, 2], [1, 2]]  # converted on the device, then moved
    total = z.sum()  # reads run what they need and read a cpu copy
    assert float(total) == 8.0 and total.item() == 8.0 and f"{total:.1f}" == "8.0" and bool(total > 0)
    assert (z * 2).tolist() == [[3.0, 5.0]] * 2 and z.numpy().tolist() == np.asarray(z).tolist() == [[1.5, 2.5]] * 2
    made = od.tensor([[1.0, 2.0]], device="lazy")
    assert od.is_functional(made) and made.device == "lazy"
    assert repr(made) == "tensor([[1., 2.]], device='lazy')"
    ones = od.ones_like(made)
    np.testing.assert_array_equal(values(ones + made), [[2.0, 3.0]])
    return {"metrics": lazy.metrics(), "ops": ops_in(text)}


def program_long_chain() -> dict:
    """200,000 operations in one graph: collected, run and freed without deep recursion."""
    n = 200_000
    y = od.tensor([1.0, -2.0]).to("lazy")
    for _ in range(n):
        y = y.neg()
    lines = lazy.ir_text(y).count("\n")
    lazy.mark_step()
    np.testing.assert_array_equal(values(y), [1.0, -2.0])  # an even number of negations
    z = od.ones([2], device="lazy")
    for _ in range(n):
        z = z.neg()
    del z  # a pending chain freed unrun
    return {"lines": lines, "metrics": lazy.metrics()}


# ----- autograd on lazy tensors -----

def mlp_training_step(params, x, target, lr, zero_grads=False):
    """Forward, loss.backward(), SGD under no_grad; the gradients are dropped (w.grad = None) or,
    with zero_grads, kept and zeroed in place."""
    w1, b1, w2, b2 = params
    hidden = (x.mm(w1) + b1).relu()
    out = hidden.mm(w2) + b2
    diff = out - target
    loss = (diff * diff).mean()
    loss.backward()
    with od.no_grad():
        for p in params:
            p.sub_(p.grad * lr)
            if zero_grads:
                p.grad.zero_()
            else:
                p.grad = None
    return loss


def train(device, initial, batches, zero_grads=False):
    """Three steps (one per batch) from the same initial weights: the losses, the final weights
    (as numpy) and, on lazy, the metrics after each step's mark_step() and the first step's IR."""
    params = [od.tensor(p).to(device).requires_grad_() for p in initial]
    losses, steps, text = [], [], None
    for x, target in batches:
        loss = mlp_training_step(params, od.tensor(x).to(device), od.tensor(target).to(device), 0.1, zero_grads)
        if device == "lazy":
            assert all(p.grad is None or p.grad.device == "lazy" for p in params)
            if text is None:
                text = lazy.ir_text()  # forward, backward and update: one graph
            lazy.mark_step()
            steps.append(lazy.metrics())
        losses.append(float(loss))
    for p in params:
        assert p.is_leaf and p.requires_grad and p.device == device
    return losses, [p.detach().to("cpu").numpy() for p in params], steps, text


def program_mlp_training() -> dict:
    """Three SGD steps of an MLP (x [8, 16] -> 32 -> 4, relu, mean squared error) on lazy and on
    the cpu from the same weights: same losses and weights; steps 2 and 3 reuse step 1's graph."""
    initial = [floats(16, 32) * 0.3, floats(32) * 0.3, floats(32, 4) * 0.3, floats(4) * 0.3]
    batches = [(floats(8, 16), floats(8, 4)) for _ in range(3)]
    eager_losses, eager_weights, _, _ = train("cpu", initial, batches)
    lazy_losses, lazy_weights, steps, text = train("lazy", initial, batches)
    np.testing.assert_allclose(lazy_losses, eager_losses, rtol=1e-5, atol=1e-5)
    for got, expected in zip(lazy_weights, eager_weights):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    return {"steps": steps, "losses": lazy_losses, "ir": text, "ops": ops_in(text)}


def program_mlp_training_zeroed_grads() -> dict:
    """The same training with gradients kept and zeroed in place: step 2 accumulates into
    existing gradients (a graph of its own); step 3 has step 2's structure."""
    initial = [floats(16, 32) * 0.3, floats(32) * 0.3, floats(32, 4) * 0.3, floats(4) * 0.3]
    batches = [(floats(8, 16), floats(8, 4)) for _ in range(3)]
    eager_losses, eager_weights, _, _ = train("cpu", initial, batches, zero_grads=True)
    lazy_losses, lazy_weights, steps, _ = train("lazy", initial, batches, zero_grads=True)
    np.testing.assert_allclose(lazy_losses, eager_losses, rtol=1e-5, atol=1e-5)
    for got, expected in zip(lazy_weights, eager_weights):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    return {"steps": steps}


def program_autograd_across_devices() -> dict:
    """Gradients that cross devices: a cpu leaf moved to lazy, a lazy leaf moved to the cpu, a
    0-d cpu tensor that requires grad in a lazy computation; autograd.grad; a write through a
    view of a lazy tensor (CopySlices) -- each against the same program on the cpu."""
    a, b = floats(3, 4), floats(3, 4)

    def program(device):
        x = od.tensor(a, requires_grad=True)             # cpu leaf, used on `device`
        w = od.tensor(b).to(device).requires_grad_()      # leaf on `device`, partly used on the cpu
        s = od.tensor(0.5, requires_grad=True)            # a 0-d cpu tensor joining `device` tensors
        y = (x.to(device) * w).clone()
        y[1].mul_(s)                                      # in place through a view
        y.t()[0].add_(w.t()[2].tanh())
        loss = (y.exp() * 0.1).sum() + (w.to("cpu") * 2).sum()
        gx, gw, gs = od.autograd.grad(loss, [x, w, s], retain_graph=True)
        assert (gx.device, gw.device, gs.device) == ("cpu", device, "cpu"), (gx.device, gw.device, gs.device)
        loss.backward()
        assert (x.grad.device, w.grad.device, s.grad.device) == ("cpu", device, "cpu")
        return [g.to("cpu").numpy() for g in (gx, gw, gs, x.grad, w.grad, s.grad)]

    for got, expected in zip(program("lazy"), program("cpu")):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    return {"metrics": lazy.metrics()}


PROGRAMS = {name[len("program_"):]: f for name, f in globals().items() if name.startswith("program_")}

if __name__ == "__main__":
    print(json.dumps(PROGRAMS[sys.argv[1]]()))
