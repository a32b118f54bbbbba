"""Autograd with the other layers: gradients computed under functionalization, on the sample
XLA backend (scons --backend=xla) and on CUDA equal eager CPU's. The lazy backend's training
steps run in their own interpreter (test_lazy_backend.py, lazy_programs.py).

The CUDA cases skip without a device (opdispatch.cuda.is_available()); the XLA ones run the same
programs, so the device-generic parts of the engine (gradients on the device, AccumulateGrad
there, moves between devices, 0-d cpu tensors among device tensors) are exercised everywhere."""
import numpy as np
import pytest

RNG = np.random.default_rng(29)


def floats(*shape) -> np.ndarray:
    return RNG.standard_normal(shape)


def host(t) -> np.ndarray:
    return t.detach().to("cpu").numpy()


def device_type(t) -> str:
    return t.device.split(":")[0]


@pytest.fixture(params=["xla", "cuda"])
def device(request, opdispatch) -> str:
    """A device other than the cpu: the sample xla backend (built and loaded), or cuda when a
    device can run kernels."""
    if request.param == "cuda":
        if not opdispatch.cuda.is_available():
            pytest.skip("no CUDA device available")
    else:
        request.getfixturevalue("xla")
    return request.param


# ----- functionalization ---------------------------------------------------------------------------

def loss_with_views_and_mutations(x, w):
    """A loss over a copy of x written in place through views (select, a flat view's slice, a
    transposed column), so its gradient goes through CopySlices nodes."""
    y = x.clone()
    y[0].mul_(3)
    flat = y.view(12)
    flat[2:5].add_(w.view(12)[0:3])
    y.t()[1].sub_(x.t()[1] * w.t()[1])
    return (y * w).sum() + (y.exp() * 0.1).sum()


def grads_of_loss(od):
    def fn(x, w):
        loss = loss_with_views_and_mutations(x, w)
        return (loss, *od.autograd.grad(loss, [x, w]))
    return fn


def test_functionalized_function_differentiates_its_inputs_as_eager_does(opdispatch):
    od = opdispatch
    a, b = floats(3, 4), floats(3, 4)
    eager = grads_of_loss(od)(od.tensor(a, requires_grad=True), od.tensor(b, requires_grad=True))
    x, w = od.tensor(a, requires_grad=True), od.tensor(b, requires_grad=True)
    functional = od.functionalize(grads_of_loss(od))(x, w)
    for got, expected in zip(functional, eager):
        assert not od.is_functional(got)
        np.testing.assert_allclose(got.numpy(), host(expected), rtol=1e-12)
    # The caller's tensors: unchanged, no .grad (autograd.grad leaves .grad alone).
    assert x.grad is None and w.grad is None
    np.testing.assert_array_equal(x.detach().numpy(), a)


def test_backward_under_functionalization_is_functional_too(opdispatch):
    od = opdispatch
    a, b = floats(3, 4), floats(3, 4)
    _, calls = od.functionalization.trace(grads_of_loss(od), od.tensor(a, requires_grad=True),
                                          od.tensor(b, requires_grad=True))
    # The backward pass (ones_like onwards) ran under the mode as well: CopySlices' in-place
    # writes reach the layer below as scatters, no view and no in-place call gets there.
    backward = calls[calls.index("aten::ones_like.default"):]
    assert any(c.endswith("_scatter.default") for c in backward), backward
    for call in calls:
        name = call.split("::", 1)[1].split(".", 1)[0]
        assert not name.endswith("_") and name not in {"view", "select", "slice", "t", "as_strided"}, call


def test_inputs_that_require_grad_stay_differentiable_leaves_inside_functionalize(opdispatch):
    od = opdispatch
    seen = {}

    def fn(x, w, plain):
        seen.update(x=(x.requires_grad, x.is_leaf), plain=plain.requires_grad, functional=od.is_functional(x))
        loss = loss_with_views_and_mutations(x, w)
        loss.backward()  # into the wrappers' .grad, returned as plain tensors
        return x.grad, w.grad

    a, b = floats(3, 4), floats(3, 4)
    gx, gw = od.functionalize(fn)(od.tensor(a, requires_grad=True), od.tensor(b, requires_grad=True), od.tensor(a))
    assert seen == {"x": (True, True), "plain": False, "functional": True}
    x, w = od.tensor(a, requires_grad=True), od.tensor(b, requires_grad=True)
    loss_with_views_and_mutations(x, w).backward()
    np.testing.assert_allclose(gx.numpy(), x.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gw.numpy(), w.grad.numpy(), rtol=1e-12)


def test_functionalized_gradients_on_a_device_equal_eager_cpu(opdispatch, device):
    od = opdispatch
    a, b = floats(3, 4), floats(3, 4)
    eager = grads_of_loss(od)(od.tensor(a, requires_grad=True), od.tensor(b, requires_grad=True))
    x, w = (od.tensor(v).to(device).requires_grad_() for v in (a, b))
    functional = od.functionalize(grads_of_loss(od))(x, w)
    for got, expected in zip(functional, eager):
        assert device_type(got) == device
        np.testing.assert_allclose(host(got), host(expected), rtol=1e-10)


# ----- a small model on a device -------------------------------------------------------------------

def small_model(od, x, w, b, v, matmul=False):
    hidden = (x.mm(w) + b).relu()
    out = (od.matmul(hidden, v) if matmul else hidden.mm(v)).tanh()
    return (out * out).sum() + hidden.sum([0]).sigmoid().sum()


def model_inputs():
    return [floats(5, 3), floats(3, 4), floats(4), floats(4, 2)]


def gradients(od, where, arrays, **kwargs):
    leaves = [od.tensor(a, dtype=od.float32).to(where).requires_grad_() for a in arrays]
    loss = small_model(od, *leaves, **kwargs)
    loss.backward()
    for leaf in leaves:
        assert leaf.grad is not None and device_type(leaf.grad) == where and leaf.grad.dtype is od.float32
    return host(loss), [host(leaf.grad) for leaf in leaves]


@pytest.mark.parametrize("matmul", [False, True], ids=["mm", "matmul"])
def test_model_gradients_on_a_device_equal_cpu(opdispatch, device, matmul):
    od = opdispatch
    arrays = model_inputs()
    cpu_loss, cpu_grads = gradients(od, "cpu", arrays, matmul=matmul)
    loss, grads = gradients(od, device, arrays, matmul=matmul)
    np.testing.assert_allclose(loss, cpu_loss, rtol=1e-5)
    for got, expected in zip(grads, cpu_grads):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_xla_backward_runs_on_xla(opdispatch, xla):
    od = opdispatch
    leaves = [od.tensor(a, dtype=od.float32).to("xla").requires_grad_() for a in model_inputs()]
    loss = small_model(od, *leaves)
    xla.reset_metrics()
    loss.backward()
    metrics = xla.metrics()
    # The backward formulas' operators ran at the XLA key: its kernels (mul, sum, ...) and its
    # CPU fallback (each mm's two gradients); nothing ran on plain cpu tensors.
    assert metrics["fallbacks"]["aten::mm"] == 4
    assert metrics["kernels"]["aten::mul.Tensor"] >= 2


def test_matmul_autograd_kernel_on_xla_records_the_decomposition(opdispatch, xla):
    """matmul's AutogradXLA kernel runs matmul's decomposition above autograd: its mm records a
    node, so the inputs of matmul get gradients (it used to run below autograd: no graph)."""
    od = opdispatch
    a = od.tensor(floats(2, 3), dtype=od.float32).to("xla").requires_grad_()
    b = od.tensor(floats(3), dtype=od.float32).to("xla").requires_grad_()
    xla.reset_metrics()
    y = od.matmul(a, b)
    assert xla.metrics()["autograd"] == {"aten::matmul": 1}
    assert y.requires_grad and y.grad_fn is not None
    y.sum().backward()
    ca, cb = (od.tensor(host(t), requires_grad=True) for t in (a, b))
    od.matmul(ca, cb).sum().backward()
    np.testing.assert_allclose(host(a.grad), ca.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(host(b.grad), cb.grad.numpy(), rtol=1e-6)
    with od.no_grad():
        assert od.matmul(a, b).grad_fn is None


def test_gradients_accumulate_on_the_device(opdispatch, device):
    od = opdispatch
    arrays = model_inputs()
    leaves = [od.tensor(a, dtype=od.float32).to(device).requires_grad_() for a in arrays]
    small_model(od, *leaves).backward()
    first = leaves[1].grad
    small_model(od, *leaves).backward()  # AccumulateGrad adds in place: the first .grad object sees it
    assert leaves[1].grad is first or np.array_equal(host(leaves[1].grad), host(first))
    _, cpu_grads = gradients(od, "cpu", arrays)
    for leaf, expected in zip(leaves, cpu_grads):
        assert device_type(leaf.grad) == device
        np.testing.assert_allclose(host(leaf.grad), 2 * expected, rtol=1e-5, atol=1e-6)
    with od.no_grad():  # an SGD step on the device, then the gradients dropped
        for leaf in leaves:
            leaf.sub_(leaf.grad * 0.5)
            leaf.grad = None
    for leaf, array, expected in zip(leaves, arrays, cpu_grads):
        assert leaf.is_leaf and leaf.grad is None
        np.testing.assert_allclose(host(leaf), array.astype(np.float32) - expected, rtol=1e-5, atol=1e-6)


def test_gradients_cross_devices(opdispatch, device):
    """A cpu leaf used on the device gets a cpu gradient (ToCopyBackward0), a device leaf used on
    the cpu a device gradient, and a 0-d cpu tensor that requires grad among device tensors (a
    wrapped number) a cpu gradient: the engine moves 0-d gradients to their input's device."""
    od = opdispatch
    a, b = floats(3, 4), floats(3, 4)

    def run(where):
        x = od.tensor(a, requires_grad=True)
        w = od.tensor(b).to(where).requires_grad_()
        s = od.tensor(0.5, dtype=od.float64, requires_grad=True)
        moved = x.to(where)
        assert where == "cpu" or moved.grad_fn.name() == "ToCopyBackward0"
        loss = ((moved * w * s).tanh()).sum() + (w.to("cpu") * x).sum()
        loss.backward()
        assert (device_type(x.grad), device_type(w.grad), device_type(s.grad)) == ("cpu", where, "cpu")
        return [host(t.grad) for t in (x, w, s)]

    for got, expected in zip(run(device), run("cpu")):
        np.testing.assert_allclose(got, expected, rtol=1e-10)


def test_a_gradient_assigned_from_another_device_is_refused(opdispatch, device):
    od = opdispatch
    w = od.zeros([2], dtype=od.float32).to(device).requires_grad_()
    with pytest.raises(od.Error, match="assigned grad has data located on a different device"):
        w.grad = od.ones([2], dtype=od.float32)
