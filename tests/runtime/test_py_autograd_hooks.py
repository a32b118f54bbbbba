"""Autograd hooks with PyTorch's semantics: Tensor.register_hook on leaves and non-leaves (a
returned Tensor replaces the gradient, hooks run in registration order, handles remove them),
retain_grad, a node's register_hook and register_prehook, and their errors."""
import threading

import pytest


def _leaf(od, values=(1.0, 2.0, 3.0)):
    return od.tensor(list(values)).requires_grad_()


def test_a_leaf_hook_sees_the_gradient_and_its_result_replaces_it(opdispatch):
    x = _leaf(opdispatch)
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()) or g * 2)
    (x * x).sum().backward()
    assert seen == [[2.0, 4.0, 6.0]]
    assert x.grad.tolist() == [4.0, 8.0, 12.0]


def test_hooks_run_in_registration_order_each_seeing_the_last_result(opdispatch):
    x = _leaf(opdispatch)
    order = []
    x.register_hook(lambda g: order.append(("first", g.tolist())) or g + 1)
    x.register_hook(lambda g: order.append(("second", g.tolist())) or g * 10)
    x.register_hook(lambda g: order.append(("third", g.tolist())))  # None: keeps the gradient
    x.sum().backward()
    assert order == [("first", [1.0, 1.0, 1.0]), ("second", [2.0, 2.0, 2.0]), ("third", [20.0, 20.0, 20.0])]
    assert x.grad.tolist() == [20.0, 20.0, 20.0]


def test_a_removed_hook_no_longer_runs_and_removing_twice_is_harmless(opdispatch):
    x = _leaf(opdispatch)
    calls = []
    handle = x.register_hook(lambda g: calls.append(1))
    handle.remove()
    handle.remove()
    x.sum().backward()
    assert calls == []
    with x.register_hook(lambda g: g * 0) as scoped:  # a `with` block removes it at its end
        x.grad = None
        x.sum().backward()
        assert x.grad.tolist() == [0.0, 0.0, 0.0]
    assert scoped is not None
    x.grad = None
    x.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]


def test_a_non_leaf_hook_changes_what_flows_to_the_inputs(opdispatch):
    x = _leaf(opdispatch)
    y = x * 3
    y.register_hook(lambda g: g * 0.5)
    y.sum().backward()
    assert x.grad.tolist() == [1.5, 1.5, 1.5]


def test_hooks_run_once_per_backward_with_the_summed_gradient(opdispatch):
    # y feeds two uses: its hook sees the sum of both, once.
    x = _leaf(opdispatch)
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()))
    (y + y * 3).sum().backward()
    assert seen == [[4.0, 4.0, 4.0]]


def test_retain_grad_keeps_a_non_leaf_gradient_after_its_hooks_and_accumulates(opdispatch):
    x = _leaf(opdispatch)
    y = x * x
    assert not y.retains_grad
    y.retain_grad()
    y.retain_grad()  # twice: still one retained gradient
    y.register_hook(lambda g: g + 1)  # registered later, runs first: retain_grad comes last
    y.sum().backward(retain_graph=True)
    assert y.retains_grad and y.grad.tolist() == [2.0, 2.0, 2.0]
    y.sum().backward()
    assert y.grad.tolist() == [4.0, 4.0, 4.0]


def test_retain_grad_on_a_leaf_changes_nothing(opdispatch):
    x = _leaf(opdispatch)
    x.retain_grad()
    assert not x.retains_grad
    x.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]


def test_autograd_grad_applies_tensor_hooks_but_retains_nothing(opdispatch):
    od = opdispatch
    x = _leaf(od)
    x.register_hook(lambda g: g * 2)
    y = x * x
    y.retain_grad()
    (gx,) = od.autograd.grad(y.sum(), [x])
    assert gx.tolist() == [4.0, 8.0, 12.0]
    assert x.grad is None and y.grad is None


def test_a_node_prehook_replaces_the_gradients_it_is_given(opdispatch):
    x = _leaf(opdispatch)
    y = x * 3
    seen = []
    y.grad_fn.register_prehook(lambda grad_outputs: seen.append(len(grad_outputs)) or (grad_outputs[0] * 10,))
    y.sum().backward()
    assert seen == [1]
    assert x.grad.tolist() == [30.0, 30.0, 30.0]


def test_a_node_hook_sees_inputs_and_outputs_and_replaces_what_it_computed(opdispatch):
    od = opdispatch
    a, b = _leaf(od), _leaf(od, (4.0, 5.0, 6.0))
    y = a * b
    seen = []

    def hook(grad_inputs, grad_outputs):
        seen.append(([g.tolist() for g in grad_inputs], [g.tolist() for g in grad_outputs]))
        return (grad_inputs[0], None)  # b gets no gradient

    handle = y.grad_fn.register_hook(hook)
    y.sum().backward(retain_graph=True)
    assert seen == [([[4.0, 5.0, 6.0], [1.0, 2.0, 3.0]], [[1.0, 1.0, 1.0]])]
    assert a.grad.tolist() == [4.0, 5.0, 6.0] and b.grad is None
    handle.remove()
    y.sum().backward()
    assert b.grad.tolist() == [1.0, 2.0, 3.0]


def test_a_hook_may_remove_itself_while_running(opdispatch):
    x = _leaf(opdispatch)
    calls = []
    handles = []

    def once(g):
        calls.append(1)
        handles[0].remove()

    handles.append(x.register_hook(once))
    x.sum().backward()
    x.sum().backward()
    assert calls == [1]


def test_hooks_run_when_backward_runs_on_another_thread(opdispatch):
    x = _leaf(opdispatch)
    seen = []
    x.register_hook(lambda g: seen.append(threading.get_ident()) or g * 3)
    worker = threading.Thread(target=lambda: x.sum().backward())
    worker.start()
    worker.join()
    assert len(seen) == 1 and x.grad.tolist() == [3.0, 3.0, 3.0]


def test_bad_hooks_raise_in_pytorchs_words(opdispatch):
    od = opdispatch
    with pytest.raises(od.Error, match="cannot register a hook on a tensor that doesn't require gradient"):
        od.tensor([1.0]).register_hook(lambda g: g)
    with pytest.raises(od.Error, match="can't retain_grad on Tensor that has requires_grad=False"):
        od.tensor([1.0]).retain_grad()
    x = _leaf(od)
    x.register_hook(lambda g: od.tensor([1.0]))
    with pytest.raises(od.Error, match="^hook '<lambda>' has changed the size of value$"):
        x.sum().backward()

    def doubled(g):
        return od.tensor([1.0, 2.0, 3.0], dtype=od.float64)

    v = _leaf(od)
    v.register_hook(doubled)
    with pytest.raises(od.Error, match=r"^hook 'doubled' has changed the type of value \(was "):
        v.sum().backward()
    y = _leaf(od)
    y.register_hook(lambda g: "not a tensor")
    with pytest.raises(TypeError, match="a tensor hook must return a Tensor or None, not str"):
        y.sum().backward()
    z = _leaf(od)
    w = z * 2
    w.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0], grad_outputs[0]))
    with pytest.raises(od.Error, match="pre-hook returned 2 gradients, expected 1"):
        w.sum().backward()


def test_an_exception_in_a_hook_reaches_the_caller_and_leaves_the_grad_alone(opdispatch):
    x = _leaf(opdispatch)

    def broken(g):
        raise ValueError("broken hook")

    x.register_hook(broken)
    with pytest.raises(ValueError, match="broken hook"):
        x.sum().backward()
    assert x.grad is None
