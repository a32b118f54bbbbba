"""Gradients through operators from Python: backward, grad_fn graphs, accumulation, retain_graph,
no_grad, autograd.grad, gradcheck of real operators, in-place checks and CopySlices.

They run through the generated Autograd kernels (ops/<g>_Autograd.cpp, from yaml/derivatives.yaml);
the API on leaves is tested in test_py_autograd_api.py."""
import numpy as np
import pytest


def test_the_build_has_the_generated_autograd_kernels(opdispatch):
    assert opdispatch.dispatcher.dump_table("aten::mul.Tensor")["AutogradCPU"].startswith("Autograd")


def _leaf(od, rows):
    return od.tensor(rows, requires_grad=True)


def _random(od, *shape, low=None, transposed=False):
    """A float64 leaf of `shape` with random values (in [low, low + 1) when given); transposed:
    a non-contiguous view (the transpose of a contiguous tensor), made a leaf."""
    rng = np.random.default_rng(sum(shape) + (7 if transposed else 0))
    dims = tuple(reversed(shape)) if transposed else shape
    values = rng.uniform(low, low + 1, dims) if low is not None else rng.standard_normal(dims)
    t = od.tensor(values, dtype=od.float64)
    if transposed:
        t = t.t()
        assert not t.is_contiguous()
    return t.requires_grad_()


# --- the first example and the graph -----------------------------------------------------------


def test_square_sum(opdispatch):
    od = opdispatch
    x = _leaf(od, [[1.0, 2.0], [3.0, 4.0]])
    y = (x * x).sum()
    assert y.requires_grad and not y.is_leaf and y.grad_fn.name() == "SumBackward0"
    assert repr(y) == "tensor(30., grad_fn=<SumBackward0>)"
    y.backward()
    assert x.grad.equal(2 * x.detach())
    assert x.grad.tolist() == [[2.0, 4.0], [6.0, 8.0]]


@pytest.mark.parametrize("make, name", [
    (lambda x: x + x, "AddBackward0"),
    (lambda x: x + 1, "AddBackward1"),
    (lambda x: x * x, "MulBackward0"),
    (lambda x: x * 2, "MulBackward1"),
    (lambda x: x / x, "DivBackward0"),
    (lambda x: x.view(4), "ViewBackward0"),
    (lambda x: x.sum(), "SumBackward0"),
    (lambda x: x.sum([1]), "SumBackward1"),
    (lambda x: x.exp(), "ExpBackward0"),
    (lambda x: x.mm(x), "MmBackward0"),
    (lambda x: x.clone(), "CloneBackward0"),
    (lambda x: x.t(), "TBackward0"),
])
def test_grad_fn_names(opdispatch, make, name):
    x = _leaf(opdispatch, [[1.0, 2.0], [3.0, 4.0]])
    y = make(x)
    assert y.grad_fn.name() == name
    assert repr(y).endswith(f", grad_fn=<{name}>)")
    assert repr(y.grad_fn).startswith(f"<{name} object at 0x")


def test_next_functions(opdispatch):
    od = opdispatch
    x = _leaf(od, [1.0, 2.0])
    constant = od.tensor([3.0, 4.0])
    product = x * constant
    (accumulate, nr), (nothing, other_nr) = product.grad_fn.next_functions
    assert accumulate.name() == "torch::autograd::AccumulateGrad" and nr == 0 and (nothing, other_nr) == (None, 0)
    assert accumulate.variable.is_alias_of(x) and repr(accumulate).startswith("<AccumulateGrad object at 0x")
    assert not hasattr(product.grad_fn, "variable")
    total = (product * x).sum()
    ((mul, index),) = total.grad_fn.next_functions
    assert mul.name() == "MulBackward0" and index == 0
    assert mul.next_functions[0][0] is product.grad_fn  # one Python object per live node
    assert mul.next_functions[1][0] is accumulate


def test_results_require_grad_and_are_not_leaves(opdispatch):
    od = opdispatch
    x = _leaf(od, [1.0, 2.0])
    y = x * 2
    assert y.requires_grad and not y.is_leaf and not (y.detach().requires_grad or y.detach().grad_fn)
    assert not (od.tensor([1.0]) * 2).requires_grad  # no input requires grad: nothing recorded
    with pytest.raises(od.Error, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad = False
    with pytest.warns(UserWarning, match="The .grad attribute of a Tensor that is not a leaf Tensor is being accessed"):
        assert y.grad is None


# --- accumulation, broadcasting, retain_graph --------------------------------------------------


def test_gradients_accumulate_across_backwards(opdispatch):
    od = opdispatch
    x = _leaf(od, [1.0, 2.0])
    (x * 3).sum().backward()
    (x * x).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0]
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_broadcast_gradients_are_summed_to_the_input_shape(opdispatch):
    od = opdispatch
    x = _leaf(od, [1.0, 2.0, 3.0])
    y = od.ones(2, 3, requires_grad=True)
    (x + y).sum().backward()
    assert x.grad.shape == (3,) and x.grad.tolist() == [2.0, 2.0, 2.0]
    assert y.grad.tolist() == [[1.0] * 3] * 2
    z = _leaf(od, [2.0])
    (x * z).sum().backward()  # [1] broadcast against [3]
    assert z.grad.tolist() == [6.0]


def test_retain_graph(opdispatch):
    od = opdispatch
    x = _leaf(od, [1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]
    with pytest.raises(od.Error, match="Trying to backward through the graph a second time"):
        y.backward()
    z = (x * x).sum()
    z.backward()
    with pytest.raises(od.Error, match="Trying to backward through the graph a second time"):
        z.backward()
    w = (x * x).sum()
    od.autograd.grad(w, x, retain_graph=True)
    od.autograd.backward([w])
    with pytest.raises(od.Error, match="Trying to backward through the graph a second time"):
        od.autograd.grad(w, x)


def test_backward_with_a_gradient(opdispatch):
    od = opdispatch
    x = _leaf(od, [1.0, 2.0])
    (x * x).backward(od.tensor([1.0, 10.0]))
    assert x.grad.tolist() == [2.0, 40.0]
    with pytest.raises(od.Error, match="grad can be implicitly created only for scalar outputs"):
        (x * x).backward()


# --- grad mode ---------------------------------------------------------------------------------


def test_no_grad_outputs_do_not_require_grad(opdispatch):
    od = opdispatch
    x = _leaf(od, [1.0, 2.0])
    with od.no_grad():
        y = x * 2
        with od.enable_grad():
            z = x * 2
    assert not y.requires_grad and y.is_leaf and y.grad_fn is None
    assert z.requires_grad and z.grad_fn.name() == "MulBackward1"

    @od.no_grad()
    def doubled(t):
        return t * 2

    assert not doubled(x).requires_grad and (x * 2).requires_grad
    with od.set_grad_enabled(False):
        assert not (x * 2).requires_grad


# --- autograd.grad -----------------------------------------------------------------------------


def test_autograd_grad_leaves_grad_untouched(opdispatch):
    od = opdispatch
    x = _leaf(od, [[1.0, 2.0], [3.0, 4.0]])
    unused = _leaf(od, [1.0])
    y = (x * x).sum()
    (gx,) = od.autograd.grad(y, x, retain_graph=True)
    assert gx.tolist() == [[2.0, 4.0], [6.0, 8.0]] and x.grad is None
    gx, gu = od.autograd.grad([y], [x, unused], allow_unused=True, retain_graph=True)
    assert gu is None and gx.tolist() == [[2.0, 4.0], [6.0, 8.0]]
    with pytest.raises(od.Error, match="One of the differentiated Tensors appears to not have been used in the graph"):
        od.autograd.grad([y], [x, unused])
    (gx,) = od.autograd.grad(x * x, x, od.full([2, 2], 0.5))
    assert gx.tolist() == [[1.0, 2.0], [3.0, 4.0]] and x.grad is None and unused.grad is None


# --- gradcheck on real operators ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["mul", "div", "mm", "sum", "sum_dim", "exp", "add_alpha", "chain"])
@pytest.mark.parametrize("transposed", [False, True], ids=["contiguous", "transposed"])
def test_gradcheck_operators(opdispatch, name, transposed):
    od = opdispatch
    a = _random(od, 3, 4, transposed=transposed)
    b = _random(od, 3, 4, low=1.0)  # away from zero: a divisor
    m = _random(od, 4, 2, transposed=transposed)
    cases = {
        "mul": (lambda p, q: p * q, (a, b)),
        "div": (lambda p, q: p / q, (a, b)),
        "mm": (lambda p, q: od.mm(p, q), (a, m)),
        "sum": (lambda p: p.sum(), (a,)),
        "sum_dim": (lambda p: p.sum([1], True), (a,)),
        "exp": (lambda p: od.exp(p), (a,)),
        "add_alpha": (lambda p, q: od.add(p, q, alpha=2), (a, b)),
        "chain": (lambda p, q: ((p * q).exp() / q).sum([0]), (a, b)),
    }
    fn, inputs = cases[name]
    before = [t.numpy() for t in inputs]
    assert od.autograd.gradcheck(fn, inputs)
    assert all(np.array_equal(t.numpy(), v) for t, v in zip(inputs, before))
    assert all(t.grad is None for t in inputs)


def test_gradcheck_catches_a_wrong_gradient(opdispatch):
    od = opdispatch
    x = _random(od, 3)

    def detached_half(t):  # half of the function is invisible to autograd
        return t * t.detach()

    assert od.autograd.gradcheck(detached_half, (x,), raise_exception=False) is False
    with pytest.raises(od.autograd.GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        od.autograd.gradcheck(detached_half, (x,))


# --- in-place operations -----------------------------------------------------------------------


def test_in_place_on_a_view_of_a_clone_goes_through_copy_slices(opdispatch):
    od = opdispatch
    x = od.ones(3, 2, requires_grad=True)
    y = x.clone()
    y[0].mul_(3)
    y.sum().backward()
    assert x.grad.tolist() == [[3.0, 3.0], [1.0, 1.0], [1.0, 1.0]]


def test_in_place_on_a_leaf_that_requires_grad_raises(opdispatch):
    od = opdispatch
    x = _leaf(od, [1.0, 2.0])
    with pytest.raises(od.Error, match="a leaf Variable that requires grad is being used in an in-place operation."):
        x.add_(1)
    with pytest.raises(od.Error, match="a leaf Variable that requires grad is being used in an in-place operation."):
        x *= 2
    with od.no_grad():
        x.add_(1)  # allowed without grad mode
    assert x.tolist() == [2.0, 3.0] and x.is_leaf


def test_a_saved_tensor_modified_in_place_raises_at_backward(opdispatch):
    od = opdispatch
    x = _leaf(od, [1.0, 2.0])
    y = x.clone()
    z = y * y  # saves y
    version = y._version
    y.add_(1)
    assert y._version > version
    with pytest.raises(od.Error, match="modified by an inplace operation"):
        z.sum().backward()
    e = x.exp()  # saves its result
    e.detach().zero_()  # detach shares the version counter
    with pytest.raises(od.Error, match="modified by an inplace operation"):
        e.sum().backward()


def test_detach_of_a_result(opdispatch):
    od = opdispatch
    x = _leaf(od, [1.0, 2.0])
    y = x * 2
    d = y.detach()
    assert d.is_leaf and not d.requires_grad and d.is_alias_of(y) and d.tolist() == [2.0, 4.0]
    (d * x).sum().backward()  # d is a constant
    assert x.grad.tolist() == [2.0, 4.0]
