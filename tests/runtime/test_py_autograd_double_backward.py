"""Double backward: backward(create_graph=True) and autograd.grad(create_graph=True) record the
backward pass, so gradients can be differentiated again (Hessian-vector products, gradient
penalties). The per-function check is test_autograd_gradcheck.py's test_gradgradcheck; these
cover the engine's side: history on gradients and on .grad, saved outputs, in-place saves,
retain_graph's default, hooks, and gradgradcheck's own logic."""
import numpy as np
import pytest


def _x(od, values=(0.5, -1.0, 2.0)):
    return od.tensor(list(values), dtype=od.float64, requires_grad=True)


def test_a_second_derivative_through_autograd_grad(opdispatch):
    od = opdispatch
    x = _x(od)
    (g,) = od.autograd.grad((x * x * x).sum(), [x], create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    np.testing.assert_allclose(g.detach().numpy(), 3 * np.array([0.5, -1.0, 2.0]) ** 2)
    (h,) = od.autograd.grad(g.sum(), [x])
    np.testing.assert_allclose(h.numpy(), 6 * np.array([0.5, -1.0, 2.0]))


def test_without_create_graph_gradients_have_no_history(opdispatch):
    od = opdispatch
    x = _x(od)
    (g,) = od.autograd.grad((x * x).sum(), [x])
    assert not g.requires_grad and g.grad_fn is None


def test_a_hessian_vector_product(opdispatch):
    # f(x) = sum(exp(x) * x): H = diag(exp(x) * (x + 2)); H v through two vector-Jacobian products.
    od = opdispatch
    values = np.array([0.5, -1.0, 2.0])
    x, v = _x(od, values), od.tensor([1.0, 2.0, -1.0], dtype=od.float64)
    (g,) = od.autograd.grad((x.exp() * x).sum(), [x], create_graph=True)
    (hv,) = od.autograd.grad(g, [x], v)
    np.testing.assert_allclose(hv.numpy(), np.exp(values) * (values + 2) * np.array([1.0, 2.0, -1.0]))


def test_backward_with_create_graph_leaves_a_grad_with_history(opdispatch):
    od = opdispatch
    x = _x(od)
    (x.exp().sum()).backward(create_graph=True)  # exp's formula uses its saved output
    grad = x.grad
    assert grad.grad_fn is not None and grad.grad_fn.name() == "CloneBackward0"
    penalty = (grad * grad).sum()  # a gradient penalty: d/dx sum(exp(x)^2) = 2 exp(2x)
    x.grad = None
    penalty.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(2 * np.array([0.5, -1.0, 2.0])))


def test_a_second_create_graph_backward_adds_out_of_place(opdispatch):
    od = opdispatch
    x = _x(od)
    (x * x).sum().backward(create_graph=True)
    first = x.grad
    (x * x).sum().backward(create_graph=True)
    assert x.grad is not first and first.detach().numpy().tolist() == [1.0, -2.0, 4.0]
    assert x.grad.detach().numpy().tolist() == [2.0, -4.0, 8.0]
    assert x.grad.grad_fn.name() == "AddBackward0"


def test_create_graph_retains_the_graph_unless_told_otherwise(opdispatch):
    od = opdispatch
    x = _x(od)
    y = (x * x).sum()
    y.backward(create_graph=True)
    y.backward(create_graph=True)  # retain_graph defaults to create_graph
    z = (x * x).sum()
    z.backward(create_graph=True, retain_graph=False)
    with pytest.raises(od.Error, match="Trying to backward through the graph a second time"):
        z.backward()


def test_an_in_place_function_is_differentiated_twice_through_the_saved_copy(opdispatch):
    od = opdispatch
    x = _x(od)

    def f(t):
        y = t * 1.0
        y.cos_()  # saves a copy of y before it changes: the copy keeps y's history
        return y.sum()

    (g,) = od.autograd.grad(f(x), [x], create_graph=True)
    (h,) = od.autograd.grad(g.sum(), [x])
    np.testing.assert_allclose(h.numpy(), -np.cos(np.array([0.5, -1.0, 2.0])))


def test_a_non_differentiable_output_stays_without_history(opdispatch):
    # nll_loss_forward's total_weight has no history: its backward must not see it require grad.
    od = opdispatch
    x = od.tensor([[0.1, 0.2, 0.7], [0.3, 0.3, 0.4]], dtype=od.float64, requires_grad=True)
    target = od.tensor([2, 0])
    loss = od.nll_loss(od.log_softmax(x, 1), target)
    (g,) = od.autograd.grad(loss, [x], create_graph=True)
    assert g.requires_grad
    assert od.autograd.gradgradcheck(lambda t: od.nll_loss(od.log_softmax(t, 1), target), (x,))


def test_hooks_run_under_create_graph_and_their_results_are_differentiated(opdispatch):
    od = opdispatch
    x = _x(od)
    y = x * x
    y.register_hook(lambda g: g * x)  # the hook's own op is recorded too
    (g,) = od.autograd.grad(y.sum(), [x], create_graph=True)  # 2x * x
    (h,) = od.autograd.grad(g.sum(), [x])  # d/dx 2x^2 = 4x
    np.testing.assert_allclose(h.numpy(), 4 * np.array([0.5, -1.0, 2.0]))


def test_gradgradcheck_passes_and_catches_a_wrong_second_derivative(opdispatch):
    od = opdispatch
    x = od.tensor(np.random.default_rng(1).standard_normal((2, 3)), dtype=od.float64, requires_grad=True)
    assert od.autograd.gradgradcheck(lambda t: (t * t).exp().sum([1]), (x,))

    def cut(t):
        # A hook that detaches the gradient: first order stays right, but the backward pass no
        # longer depends on its grad_output as a graph, so the second order is wrong.
        y = t * t
        if y.requires_grad:  # (gradcheck evaluates it under no_grad too)
            y.register_hook(lambda g: g.detach())
        return y

    assert od.autograd.gradcheck(cut, (x,))
    assert not od.autograd.gradgradcheck(cut, (x,), raise_exception=False)
    with pytest.raises(od.autograd.GradcheckError, match="Jacobian mismatch"):
        od.autograd.gradgradcheck(cut, (x,))


def test_gradgradcheck_checks_the_grad_outputs_it_is_given(opdispatch):
    od = opdispatch
    x = od.tensor([[0.3, -0.2], [1.1, 0.4]], dtype=od.float64, requires_grad=True)
    v = od.tensor([[1.0, 2.0], [0.5, -1.0]], dtype=od.float64, requires_grad=True)
    assert od.autograd.gradgradcheck(lambda t: t.exp() * t, (x,), (v,))
    with pytest.raises(ValueError, match="one grad_output per output that requires grad"):
        od.autograd.gradgradcheck(lambda t: t.exp(), (x,), (v, v))
