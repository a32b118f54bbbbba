"""Forward-mode AD (od.autograd.forward_ad, od.autograd.functional.jvp): the API's semantics, and
for every differentiable function of yaml/derivatives.yaml (test_autograd_gradcheck.py's CASES) the
tangent computed by the generated forward formulas against central finite differences and
against reverse mode (<w, J u> == <J^T w, u>)."""
from __future__ import annotations

import numpy as np
import pytest

from test_autograd_gradcheck import CASES, FUNCTIONS, T, _applies, _inputs

# Functions whose entry has no forward formula: a dual input raises (none today: every entry of
# yaml/derivatives.yaml with a backward formula has a forward one).
WITHOUT_FORWARD: set[str] = set()


def _fwad(od):
    return od.autograd.forward_ad


# --- the API ---------------------------------------------------------------------------------------


def test_make_dual_and_unpack_dual(opdispatch):
    od = opdispatch
    fwAD = _fwad(od)
    x = od.tensor([1., 2., 3.], dtype=od.float64)
    u = od.tensor([1., 0., -1.], dtype=od.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, u)
        primal, tangent = fwAD.unpack_dual(d)
        assert primal.tolist() == [1., 2., 3.] and tangent.tolist() == [1., 0., -1.]
        assert fwAD.unpack_dual(d).tangent is not None and fwAD.unpack_dual(d).primal.tolist() == [1., 2., 3.]
        assert fwAD.unpack_dual(x).tangent is None          # x itself carries no tangent
        assert fwAD.unpack_dual(primal).tangent is None     # the primal view neither
        y = d * d
        assert fwAD.unpack_dual(y).tangent.tolist() == [2., 0., -6.]
        assert fwAD.unpack_dual(y).primal.tolist() == [1., 4., 9.]
        z = y.detach()
        assert fwAD.unpack_dual(z).tangent is None
        d.mul_(2)  # d is an alias of x: x's memory changes; d's tangent is doubled in place
        assert fwAD.unpack_dual(d).tangent.tolist() == [2., 0., -2.]
    assert fwAD.unpack_dual(d).tangent is None  # exiting the level cleared the tangents
    assert fwAD.unpack_dual(y).tangent is None
    assert x.tolist() == [2., 4., 6.]


def test_errors(opdispatch):
    od = opdispatch
    fwAD = _fwad(od)
    x = od.zeros(3, dtype=od.float64)
    with pytest.raises(od.Error, match="dual level"):
        fwAD.make_dual(x, x)
    with fwAD.dual_level():
        with pytest.raises(od.Error, match="Nested forward mode AD is not supported"):
            with fwAD.dual_level():
                pass
        with pytest.raises(od.Error, match="different size"):
            fwAD.make_dual(x, od.zeros(2, dtype=od.float64))
        with pytest.raises(od.Error, match="same dtype"):
            fwAD.make_dual(x, od.zeros(3, dtype=od.float32))
        d = fwAD.make_dual(x, od.ones(3, dtype=od.float64))
        # an autogen'd out= function has no entry of its own (torchgen's neither): it refuses
        with pytest.raises(od.Error, match="Trying to use forward AD with clone_out that does not support it because it "
                                           "is an out= function"):
            od.ops.aten.clone.out(d, out=od.empty(3, dtype=od.float64))
    with fwAD.dual_level():  # the level can be entered again after an error inside it
        pass


def test_out_functions_set_the_tangent_of_out(opdispatch):
    """As torchgen's out= kernels: the functional's forward formula, written into out's tangent."""
    od = opdispatch
    fwAD = _fwad(od)
    with fwAD.dual_level():
        d = fwAD.make_dual(od.tensor([1., 2.], dtype=od.float64), od.tensor([1., -1.], dtype=od.float64))
        out = od.empty(2, dtype=od.float64)
        assert od.mul(d, d, out=out) is out
        assert fwAD.unpack_dual(out).tangent.tolist() == [2., -4.]
        od.exp(od.tensor([0., 0.], dtype=od.float64), out=out)  # no tangent in: out's stays (as in PyTorch)
        assert fwAD.unpack_dual(out).tangent.tolist() == [2., -4.]


def test_enter_and_exit(opdispatch):
    od = opdispatch
    fwAD = _fwad(od)
    level = fwAD.enter_dual_level()
    try:
        assert level == 0
        d = fwAD.make_dual(od.ones(2), od.ones(2))
        assert fwAD.unpack_dual(d.exp()).tangent is not None
    finally:
        fwAD.exit_dual_level()
    assert fwAD.unpack_dual(d).tangent is None


def test_forward_ad_with_reverse_mode(opdispatch):
    """Tangents and the tape are independent: a dual tensor that requires grad records history,
    and its tangent formulas run with grad mode as it is."""
    od = opdispatch
    fwAD = _fwad(od)
    x = od.tensor([0.5, 1.5], dtype=od.float64, requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, od.tensor([1., 2.], dtype=od.float64))
        y = (d.sin() * d).sum()
        y.backward()
        expected_t = sum((np.cos(v) * v + np.sin(v)) * t for v, t in [(0.5, 1.), (1.5, 2.)])
        assert abs(fwAD.unpack_dual(y).tangent.item() - expected_t) < 1e-12
    np.testing.assert_allclose(x.grad.numpy(), np.cos([0.5, 1.5]) * [0.5, 1.5] + np.sin([0.5, 1.5]))


def test_view_tangents_follow_in_place_changes(opdispatch):
    od = opdispatch
    fwAD = _fwad(od)
    with fwAD.dual_level():
        base = fwAD.make_dual(od.ones(2, 3, dtype=od.float64), od.zeros(2, 3, dtype=od.float64)).clone()
        row = base[1]
        row.add_(fwAD.make_dual(od.zeros(3, dtype=od.float64), od.ones(3, dtype=od.float64)))
        assert fwAD.unpack_dual(base).tangent.tolist() == [[0., 0., 0.], [1., 1., 1.]]


def test_a_view_changed_in_place_gives_its_base_a_tangent(opdispatch):
    """PyTorch's rule: the base gets a zero tangent, the view a view of it holding the new values."""
    od = opdispatch
    fwAD = _fwad(od)
    with fwAD.dual_level():
        x = od.zeros(2, 3, dtype=od.float64)
        row = x[1]
        row.copy_(fwAD.make_dual(od.ones(3, dtype=od.float64), od.full([3], 2.0, dtype=od.float64)))
        assert fwAD.unpack_dual(x).tangent.tolist() == [[0., 0., 0.], [2., 2., 2.]]
        column = x.t()[2]
        column.mul_(fwAD.make_dual(od.ones(2, dtype=od.float64), od.ones(2, dtype=od.float64)))
        # d(x[:, 2] * y) = x_t[:, 2] * y + x[:, 2] * y_t, with y = 1 and x[:, 2] = [0, 1]
        assert fwAD.unpack_dual(x).tangent.tolist() == [[0., 0., 0.], [2., 2., 3.]]


def test_custom_function_jvp(opdispatch):
    """A custom Function's forward computes no tangents; its jvp gives the outputs' (PyTorch's)."""
    od = opdispatch
    fwAD = _fwad(od)

    class Exp(od.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale):
            y = x.exp() * scale
            assert fwAD.unpack_dual(y).tangent is None  # forward AD is off inside forward
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            y, = ctx.saved_tensors
            return grad * y, None

        @staticmethod
        def jvp(ctx, x_t, scale_t):
            assert scale_t is None
            y, = ctx.saved_tensors
            return x_t * y

    class NoJvp(od.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    x = od.tensor([0.5, 1.0], dtype=od.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, od.tensor([1.0, 2.0], dtype=od.float64))
        y = Exp.apply(d, 3.0)
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(), 3 * np.exp([0.5, 1.0]) * [1.0, 2.0])
        with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
            NoJvp.apply(d)
        assert fwAD.unpack_dual(NoJvp.apply(x)).tangent is None  # no dual input: jvp is not called


def test_functional_jvp_and_vjp(opdispatch):
    od = opdispatch
    F = od.autograd.functional
    x = od.tensor([[1., 2.], [3., 4.]], dtype=od.float64)
    u = od.tensor([[1., 0.], [0., 1.]], dtype=od.float64)
    out, jvp = F.jvp(lambda a: a.mm(a), x, u)
    np.testing.assert_allclose(out.numpy(), x.numpy() @ x.numpy())
    np.testing.assert_allclose(jvp.numpy(), u.numpy() @ x.numpy() + x.numpy() @ u.numpy())
    (o1, o2), (j1, j2) = F.jvp(lambda a, b: (a * b, a.sum()), (x, x), (u, u))
    np.testing.assert_allclose(j1.numpy(), 2 * x.numpy() * u.numpy())
    assert j2.item() == 2.0
    out, vjp = F.vjp(lambda a: a.exp().sum(), x)
    np.testing.assert_allclose(vjp.numpy(), np.exp(x.numpy()))


# --- every differentiable function -----------------------------------------------------------------


def _params():
    for name in sorted(CASES):
        for c in CASES[name]:
            for layout in ("contiguous", "transposed"):
                if layout not in c.layouts:
                    continue
                if _applies(layout, c.specs):
                    yield pytest.param(name, c, layout, id=f"{name}-{c.id}-{layout}")


def _outputs(out):
    return list(out) if isinstance(out, tuple) else [out]


def _float_outputs(od, outs):
    return [i for i, o in enumerate(outs) if isinstance(o, od.Tensor) and o.dtype in (od.float64, od.float32)]


def test_every_differentiable_function_has_a_case():
    assert set(CASES) == set(FUNCTIONS)


@pytest.mark.parametrize("name, c, layout", list(_params()))
def test_jvp(opdispatch, name, c, layout):
    od = opdispatch
    fwAD = _fwad(od)
    inputs = _inputs(od, c, layout)
    diff = [i for i, s in enumerate(c.specs) if isinstance(s, T)]
    rng = np.random.default_rng(5 + len(diff))
    tangents = {i: od.tensor(rng.standard_normal(c.specs[i].shape), dtype=od.float64) for i in diff}
    fn = lambda *args: _outputs(c.fn(od, *args))  # noqa: E731
    base = name.split(".")[0]
    with fwAD.dual_level():
        duals = [fwAD.make_dual(t.detach(), tangents[i]) if i in tangents else t for i, t in enumerate(inputs)]
        if base in WITHOUT_FORWARD:
            with pytest.raises(od.Error, match=f"Trying to use forward AD with {base} that does not support it"):
                fn(*duals)
            return
        outs = fn(*duals)
        which = _float_outputs(od, outs)
        jvps = {}
        for i in which:
            t = fwAD.unpack_dual(outs[i]).tangent
            jvps[i] = np.zeros(outs[i].shape) if t is None else t.numpy().copy()
    # central differences along the tangents, in float64
    eps = c.eps  # a float32 case's differences take a larger step, and are rougher
    atol = c.atol if c.eps <= 1e-6 else 10 * c.atol
    def at(sign):
        # each input moved in place (its layout kept: as_strided reads it), then restored
        with od.no_grad():
            saved = {i: inputs[i].detach().numpy().copy() for i in tangents}
            for i in tangents:
                inputs[i].detach().copy_(od.tensor(saved[i] + sign * eps * tangents[i].numpy(), dtype=od.float64))
            values = [o.numpy().copy() if j in which else None for j, o in enumerate(_outputs(c.fn(od, *inputs)))]
            for i in tangents:
                inputs[i].detach().copy_(od.tensor(saved[i], dtype=od.float64))
        return values
    plus, minus = at(1), at(-1)
    for i in which:
        numeric = (plus[i] - minus[i]) / (2 * eps)
        np.testing.assert_allclose(jvps[i], numeric, atol=atol, rtol=c.rtol, err_msg=f"output {i}: J u vs differences")
    # reverse mode: <w, J u> == <J^T w, u>
    outs = fn(*inputs)
    ws = {i: od.tensor(rng.standard_normal(tuple(outs[i].shape)), dtype=od.float64) for i in which}
    used = [i for i in which if outs[i].requires_grad]
    if not used:
        return
    grads = od.autograd.grad([outs[i] for i in used], [inputs[i] for i in diff], [ws[i] for i in used],
                             allow_unused=True)
    left = sum(float((ws[i].numpy() * jvps[i]).sum()) for i in used)
    right = sum(float((g.numpy() * tangents[i].numpy()).sum()) for g, i in zip(grads, diff) if g is not None)
    tolerance = 1e-8 if c.eps <= 1e-6 else 1e-5  # float32 cases compute in float32
    assert abs(left - right) <= tolerance * max(1.0, abs(left)), (left, right)
