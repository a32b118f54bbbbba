"""Functionalization (opdispatch.functionalize, functionalization.trace): programs with views and
mutations give eager's results, mutate their inputs once, and the layer below the Functionalize
key receives no view and no in-place or out= call. Bad use raises an exception naming the
operator."""
import numpy as np
import pytest

VIEW_OPS = {"view", "reshape", "transpose", "t", "permute", "expand", "squeeze", "unsqueeze", "select", "slice",
            "as_strided", "alias", "contiguous", "lift_fresh"}


def base_name(call: str) -> str:
    return call.split("::", 1)[1].split(".", 1)[0]


def assert_functional_trace(calls):
    """No view, no in-place (name ending in _) and no out= overload below the Functionalize key."""
    assert calls, "nothing reached the layer below"
    for call in calls:
        name, overload = call.split("::", 1)[1].split(".", 1)
        assert name not in VIEW_OPS, f"view {call} reached the backend: {calls}"
        assert not name.endswith("_"), f"in-place {call} reached the backend: {calls}"
        assert "out" not in overload, f"out= {call} reached the backend: {calls}"


def run_both(od, fn, *arrays):
    """fn eagerly and functionalized (traced) on fresh tensors of `arrays`; returns
    (eager results, functional results, eager inputs, functional inputs, calls) as numpy."""
    eager_in = [od.tensor(a) for a in arrays]
    func_in = [od.tensor(a) for a in arrays]
    eager = fn(*eager_in)
    functional, calls = od.functionalization.trace(fn, *func_in)
    as_np = lambda r: [t.numpy() for t in r] if isinstance(r, (list, tuple)) else [r.numpy()]  # noqa: E731
    return (as_np(eager), as_np(functional), [t.numpy() for t in eager_in], [t.numpy() for t in func_in], calls)


def check(od, fn, *arrays):
    eager, functional, eager_in, func_in, calls = run_both(od, fn, *arrays)
    for e, f in zip(eager, functional):
        np.testing.assert_array_equal(e, f)
    for e, f in zip(eager_in, func_in):
        np.testing.assert_array_equal(e, f)
    assert_functional_trace(calls)
    return calls


A = np.arange(12, dtype=np.float32).reshape(3, 4)


def test_view_then_inplace_add_changes_the_base(opdispatch):
    def fn(x):
        y = x.view(12)
        y.add_(1)
        return x
    calls = check(opdispatch, fn, A)
    assert calls[:2] == ["aten::view_copy.default", "aten::add.Scalar"]


def test_transpose_then_mul_(opdispatch):
    def fn(x):
        y = x.transpose(0, 1)
        y.mul_(2)
        return x + 0, y + 0
    calls = check(opdispatch, fn, A)
    assert "aten::transpose_copy.int" in calls and "aten::mul.Scalar" in calls


def test_slice_then_fill_(opdispatch):
    def fn(x):
        x.slice(1, 1, 3).fill_(-1)
        return x * 1
    calls = check(opdispatch, fn, A)
    assert "aten::slice_scatter.default" in calls and "aten::fill.Scalar" in calls


def test_select_then_copy_(opdispatch):
    def fn(x, src):
        x.select(0, 1).copy_(src)
        return x.sum()
    calls = check(opdispatch, fn, A, np.array([9, 8, 7, 6], dtype=np.float32))
    assert "aten::copy.default" in calls and "aten::select_scatter.default" in calls


def test_chain_of_three_views_then_mutation_seen_by_base_and_sibling(opdispatch):
    def fn(x):
        sibling = x.select(1, 2)
        v = x.t().slice(0, 1, 3).select(1, 0)
        v.add_(100)
        return x + 0, sibling + 0, v + 0
    check(opdispatch, fn, A)


def test_out_call_inside_the_function(opdispatch):
    def fn(x, y):
        out = opdispatch.empty([3, 4])
        opdispatch.add(x, y, out=out)
        opdispatch.mul(out, y, out=x)
        return out
    calls = check(opdispatch, fn, A, A + 1)
    assert "aten::add.Tensor" in calls


def test_mutated_input_is_written_back_once(opdispatch):
    x = opdispatch.tensor(A)
    counter = {"calls": 0}

    def fn(t):
        counter["calls"] += 1
        t.add_(1)
        t.mul_(2)
        return t.sum()
    result = opdispatch.functionalize(fn)(x)
    np.testing.assert_array_equal(x.numpy(), (A + 1) * 2)
    assert result.item() == float(((A + 1) * 2).sum())
    assert counter["calls"] == 1
    assert not opdispatch.is_functional(x) and not opdispatch.is_functional(result)


def test_expand_then_read(opdispatch):
    def fn(x):
        e = x.select(0, 0).expand([2, 4])
        x.add_(1)
        return e * 2
    check(opdispatch, fn, A)


def test_inplace_views_then_mutations(opdispatch):
    def fn(x):
        y = x.view(2, 6)
        y.transpose_(0, 1)
        y.add_(1)
        z = x.select(0, 1)
        z.unsqueeze_(0)
        z.mul_(2)
        assert list(y.shape) == [6, 2] and list(z.shape) == [1, 4]
        return x + 0, y + 0, z + 0
    calls = check(opdispatch, fn, A)
    assert "aten::transpose_copy.int" in calls and "aten::unsqueeze_copy.default" in calls


def test_reshape_and_matmul_decompose_above_the_key(opdispatch):
    def fn(x):
        r = x.reshape([4, 3])
        r.sub_(1)
        return opdispatch.matmul(x, r)
    calls = check(opdispatch, fn, A)
    assert "aten::mm.default" in calls


def test_tensor_created_inside_is_functional(opdispatch):
    seen = []

    def fn(x):
        y = opdispatch.tensor([1.0, 2.0, 3.0, 4.0])  # lift_fresh under functionalization
        y.view(2, 2).mul_(10)
        z = opdispatch.zeros([4])  # factories reach the Functionalize fallback through the thread's include set
        z.add_(y)
        seen.append((opdispatch.is_functional(x), opdispatch.is_functional(y), opdispatch.is_functional(z)))
        return x + z
    check(opdispatch, fn, A)
    assert seen == [(False, False, False), (True, True, True)]  # eager, then functionalized


def test_trace_shows_only_functional_calls(opdispatch):
    out, calls = opdispatch.functionalization.trace(lambda x: x.view(4).add_(1), opdispatch.ones([2, 2]))
    # the last view_copy regenerates the input from the mutated view, to write it back
    assert calls == ["aten::view_copy.default", "aten::add.Scalar", "aten::view_copy.default"]
    np.testing.assert_array_equal(out.numpy(), np.full(4, 2.0, dtype=np.float32))


def test_to_and_from_functional(opdispatch):
    x = opdispatch.tensor([1.0, 2.0])
    f = opdispatch.to_functional(x)
    assert opdispatch.is_functional(f) and not opdispatch.is_functional(x)
    v = f.view(2, 1)
    v.mul_(3)
    np.testing.assert_array_equal(opdispatch.from_functional(f).numpy(), [3.0, 6.0])
    np.testing.assert_array_equal(f.numpy(), [3.0, 6.0])  # numpy() reads the synced value
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])  # the original is untouched
    assert opdispatch.dispatcher.dump_table("aten::add_.Tensor")["Functionalize"] == "Functionalize kernel"


def test_bad_use_raises_naming_the_operator(opdispatch):
    od = opdispatch
    with pytest.raises(od.Error, match="from_functional"):
        od.from_functional(od.ones([2]))
    with pytest.raises(od.Error, match="to_functional"):
        od.to_functional(od.to_functional(od.ones([2])))
    with pytest.raises(TypeError, match="functionalize"):
        od.functionalize(3)
    with pytest.raises(od.Error, match="add_"):  # in place, with a broadcast result
        od.functionalize(lambda x, y: x.add_(y))(od.ones([1]), od.ones([3]))
    with pytest.raises(od.Error, match="expand"):  # writing through an expanded view
        od.functionalize(lambda x: x.expand([3, 2]).add_(1) + 0)(od.ones([2]))
    with pytest.raises(od.Error, match="add_"):  # a plain tensor mutated with a functional argument
        plain = od.ones([2])
        od.functionalize(lambda x: plain.add_(x))(od.ones([2]))
    with pytest.raises(od.Error, match="view"):
        od.functionalize(lambda x: x.view(5))(od.ones([4]))


def test_mutation_without_functional_variant_raises_naming_it(opdispatch, make_lib, ns):
    lib = make_lib(ns, "DEF")
    lib.define("bump_(Tensor(a!) self) -> Tensor(a!)")
    lib.impl("bump_", "CPU", lambda self: self)
    with pytest.raises(opdispatch.Error, match=f"{ns}::bump_"):
        opdispatch.functionalize(lambda x: getattr(opdispatch.ops, ns).bump_(x))(opdispatch.ones([2]))


def test_functionalize_on_cuda(opdispatch):
    od = opdispatch
    if not od._C._cuda_is_available():
        pytest.skip("no CUDA device available")

    def fn(x):
        x.t().select(0, 1).mul_(3)
        x.slice(0, 0, 2).add_(1)
        return x * 2

    eager_in = od.tensor(A).to("cuda")
    eager = fn(eager_in)
    func_in = od.tensor(A).to("cuda")
    functional, calls = od.functionalization.trace(fn, func_in)
    np.testing.assert_array_equal(eager.to("cpu").numpy(), functional.to("cpu").numpy())
    np.testing.assert_array_equal(eager_in.to("cpu").numpy(), func_in.to("cpu").numpy())
    assert functional.device.startswith("cuda")
    assert_functional_trace(calls)
