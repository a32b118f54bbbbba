"""Property test of functionalization: random programs of views and mutations over tensors that
alias each other give eager's results (every alias and the input), and the layer below the
Functionalize key sees no view, in-place or out= call.

A program is a list of steps, each a view of one alias (view, reshape, transpose, t, permute,
expand, squeeze, unsqueeze, select, slice, as_strided of the input), an in-place view of one
(transpose_, unsqueeze_) or a mutation of one (add_, mul_, fill_, zero_, copy_, clamp_). Steps eager execution rejects (a view of
non-contiguous memory, ...) are dropped before the functionalized run; expanded views are only
read (writing through one writes one element several times)."""
import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from test_functionalization import assert_functional_trace  # noqa: E402

SHAPE = (4, 6)
VIEWS = ("view", "reshape", "transpose", "t", "permute", "expand", "squeeze", "unsqueeze", "select", "slice",
         "as_strided")
MUTATIONS = ("add_", "mul_", "fill_", "zero_", "copy_", "clamp_")
INPLACE_VIEWS = ("transpose_", "unsqueeze_")  # change an alias's own view of the memory

steps = st.lists(
    st.tuples(st.sampled_from(VIEWS + MUTATIONS + INPLACE_VIEWS), st.integers(0, 63), st.integers(0, 63), st.integers(0, 63),
              st.integers(-3, 3)),
    min_size=1, max_size=8)


def _view_args(kind, t, a, b, c):
    """Arguments of view `kind` for alias t from raw integers, or None when it does not apply."""
    shape = list(t.shape)
    n = len(shape)
    if kind == "view" or kind == "reshape":
        numel = int(np.prod(shape)) if shape else 1
        if numel == 0:
            return None
        divisors = [d for d in range(1, numel + 1) if numel % d == 0]
        d = divisors[a % len(divisors)]
        return ([d, -1],) if b % 2 else ([numel // d, d],)
    if kind == "transpose":
        return (a % n, b % n) if n else None
    if kind == "t":
        return () if n <= 2 else None
    if kind == "permute":
        if not n:
            return None
        dims = list(range(n))
        np.random.default_rng(a).shuffle(dims)
        return (dims,)
    if kind == "expand":
        return ([1 + a % 3] + shape,) if n < 3 else None
    if kind == "squeeze":
        ones = [i for i, s in enumerate(shape) if s == 1]
        return (ones[a % len(ones)],) if ones else None
    if kind == "unsqueeze":
        return (a % (n + 1),) if n < 4 else None
    if kind == "select":
        return (a % n, b % shape[a % n]) if n and shape[a % n] else None
    if kind == "slice":
        if not n:
            return None
        dim = a % n
        size = shape[dim]
        start = b % (size + 1)
        return (dim, start, start + c % (size - start + 1), 1 + abs(c) % 2) if size else None
    if kind == "as_strided":  # of the input only: offsets are into its (contiguous) storage
        rows, cols = 1 + a % SHAPE[0], 1 + b % SHAPE[1]
        offset = (c % (SHAPE[0] - rows + 1)) * SHAPE[1] + (a // 7) % (SHAPE[1] - cols + 1)
        return ([rows, cols], [SHAPE[1], 1], offset)
    raise AssertionError(kind)


def _apply(od, aliases, step, fresh):
    """Applies one step to `aliases` (list of (tensor, writable)); returns False when it does not apply."""
    kind, i, a, b, c = step
    if kind == "as_strided":
        t, writable = aliases[0]
    else:
        t, writable = aliases[i % len(aliases)]
    if kind in INPLACE_VIEWS:
        if i % len(aliases) == 0:  # not the input: the caller's tensor would change shape
            return False
        args = _view_args(kind[:-1], t, a, b, c)
        if args is None:
            return False
        getattr(t, kind)(*args)
        return True
    if kind in VIEWS:
        args = _view_args(kind, t, a, b, c)
        if args is None:
            return False
        if kind == "slice":
            dim, start, end, step_ = args
            v = t.slice(dim, start, end, step_)
        else:
            v = getattr(t, kind)(*args)
        aliases.append((v, writable and kind != "expand"))
        return True
    if not writable:
        return False
    if kind == "add_":
        t.add_(c) if a % 2 else t.add_(fresh(t.shape, a))
    elif kind == "mul_":
        t.mul_(c) if a % 2 else t.mul_(fresh(t.shape, a))
    elif kind == "fill_":
        t.fill_(c)
    elif kind == "zero_":
        t.zero_()
    elif kind == "copy_":
        t.copy_(fresh(t.shape, a))
    elif kind == "clamp_":
        t.clamp_(-abs(c) - a % 5, abs(c) + b % 5)
    return True


def _program(od, program, fresh):
    def fn(x):
        aliases = [(x, True)]
        for step in program:
            _apply(od, aliases, step, fresh)
        return [t + 0 for t, _ in aliases]  # every alias's value as a new tensor
    return fn


@settings(max_examples=500, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(program=steps)
def test_random_programs_match_eager_and_trace_only_functional_calls(opdispatch, program):
    od = opdispatch
    base = np.arange(-11, 13, dtype=np.float64).reshape(SHAPE)

    def fresh(shape, seed):
        values = np.random.default_rng(seed).integers(-4, 5, size=tuple(shape)).astype(np.float64)
        return od.tensor(values)

    # Eager first, keeping the steps it accepts.
    kept, aliases = [], [(od.tensor(base), True)]
    for step in program:
        try:
            if _apply(od, aliases, step, fresh):
                kept.append(step)
        except od.Error:
            pass
    eager_input = od.tensor(base)
    eager = _program(od, kept, fresh)(eager_input)
    functional_input = od.tensor(base)
    functional, calls = od.functionalization.trace(_program(od, kept, fresh), functional_input)
    assert len(eager) == len(functional)
    for e, f in zip(eager, functional):
        assert not od.is_functional(f)
        np.testing.assert_array_equal(e.numpy(), f.numpy(), err_msg=str(kept))
    np.testing.assert_array_equal(eager_input.numpy(), functional_input.numpy(), err_msg=str(kept))
    assert_functional_trace(calls)
