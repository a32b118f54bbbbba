"""select_scatter, slice_scatter, as_strided_scatter (and their out= variants), the views'
inverses under functionalization: a contiguous copy of self with src written where the view
would be, checked against numpy on the cpu and, with a GPU, on cuda; lift and lift_fresh."""
import numpy as np
import pytest

BASE = np.arange(24, dtype=np.float32).reshape(4, 6)


def _expected(view):
    out = BASE.copy()
    target = view(out)
    target[...] = -1 - np.arange(target.size, dtype=np.float32).reshape(target.shape)
    return out, target.copy()


CASES = [
    ("select_scatter", lambda a: a[:, 2], (1, 2)),
    ("slice_scatter", lambda a: a[1:4:2], (0, 1, 4, 2)),
    ("as_strided_scatter", lambda a: np.lib.stride_tricks.as_strided(a[0:, 1:], (2, 3), (6 * 4 * 2, 4 * 2)),
     ([2, 3], [12, 2], 1)),
]


def _run(od, device, name, view, args):
    expected, src = _expected(view)
    op = getattr(od.ops.aten, name)
    self_t, src_t = od.tensor(BASE), od.tensor(src)
    if device != "cpu":
        self_t, src_t = self_t.to(device), src_t.to(device)
    result = op.default(self_t, src_t, *args)
    np.testing.assert_array_equal(result.to("cpu").numpy(), expected)
    np.testing.assert_array_equal(self_t.to("cpu").numpy(), BASE)  # self is not written
    out = od.empty([1], device=device)
    op.out(self_t, src_t, *args, out=out)
    np.testing.assert_array_equal(out.to("cpu").numpy(), expected)


@pytest.mark.parametrize("name, view, args", CASES, ids=[c[0] for c in CASES])
def test_scatter_on_cpu(opdispatch, name, view, args):
    _run(opdispatch, "cpu", name, view, args)


@pytest.mark.parametrize("name, view, args", CASES, ids=[c[0] for c in CASES])
def test_scatter_on_cuda(opdispatch, name, view, args):
    if not opdispatch._C._cuda_is_available():
        pytest.skip("no CUDA device available")
    _run(opdispatch, "cuda", name, view, args)


def test_scatter_on_meta_gives_shapes(opdispatch):
    od = opdispatch
    r = od.ops.aten.select_scatter.default(od.empty([4, 6], device="meta"), od.empty([4], device="meta"), 1, 2)
    assert r.device == "meta" and list(r.shape) == [4, 6]


def test_scatter_errors_name_the_operator(opdispatch):
    od = opdispatch
    with pytest.raises(od.Error, match="select_scatter: expected src of shape \\[4\\]"):
        od.ops.aten.select_scatter.default(od.tensor(BASE), od.ones([5]), 1, 2)
    with pytest.raises(od.Error, match="slice"):
        od.ops.aten.slice_scatter.default(od.tensor(BASE), od.ones([1]), 0, 0, 4, 0)


def test_lift_copies_and_lift_fresh_returns_self(opdispatch):
    od = opdispatch
    x = od.tensor([1.0, 2.0])
    assert not od.ops.aten.lift.default(x).is_alias_of(x)
    assert od.ops.aten.lift_fresh.default(x).is_alias_of(x)
