"""log_softmax and the losses of a training step (_log_softmax and its backward, nll_loss_forward
/ nll_loss_backward with the composites nll_loss and nll_loss_nd, mse_loss and its backward)
against numpy: every reduction, class weights, ignore_index, float32 and float64, 1-d and 2-d
inputs, non-contiguous inputs and outputs, out= variants, Meta shapes, the backward kernels
against finite differences of the forward ones, and error messages that name the operator."""
import numpy as np
import pytest

FLOATS = ["float32", "float64"]
NONE, MEAN, SUM = 0, 1, 2
REDUCTIONS = [NONE, MEAN, SUM]


@pytest.fixture
def rng():
    return np.random.default_rng(2813)


def check_close(actual, expected, dtype):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == np.dtype(dtype), (actual.dtype, dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(actual, expected.astype(dtype), equal_nan=True, **tol)


def T(opdispatch, array):
    """A tensor sharing the array's memory and strides (a non-contiguous view stays one)."""
    return opdispatch.from_numpy(np.asarray(array))


# ----- references (float64) -----

def log_softmax_ref(x, dim):
    x = x.astype(np.float64)
    if x.ndim == 0 or x.size == 0:
        return x - x
    m = x.max(axis=dim, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=dim, keepdims=True))


def nll_ref(x, target, weight, reduction, ignore_index):
    """(output, total_weight) of nll_loss_forward on rows [N, C] (or one row [C] with a 0-d target)."""
    rows = x.reshape(-1, x.shape[-1]).astype(np.float64)
    t = np.asarray(target).reshape(-1)
    kept = t != ignore_index
    cls = np.where(kept, t, 0)
    w = (weight.astype(np.float64)[cls] if weight is not None else np.ones(len(t))) * kept
    losses = -rows[np.arange(len(t)), cls] * w
    if reduction == NONE:
        return (losses if x.ndim == 2 else losses.reshape(())), np.float64(0)
    total = w.sum()
    loss = losses.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        return (np.float64(loss / total) if reduction == MEAN else np.float64(loss)), np.float64(total)


def nll_backward_ref(grad_output, x, target, weight, reduction, ignore_index, total_weight):
    rows = x.reshape(-1, x.shape[-1])
    t = np.asarray(target).reshape(-1)
    g = np.asarray(grad_output, dtype=np.float64).reshape(-1)
    out = np.zeros(rows.shape)
    for i, c in enumerate(t):
        if c == ignore_index:
            continue
        grad = -g[i] if reduction == NONE else (-g[0] / total_weight if reduction == MEAN else -g[0])
        out[i, c] = grad * (weight[c] if weight is not None else 1.0)
    return out.reshape(x.shape)


def mse_ref(x, t, reduction):
    errors = (x.astype(np.float64) - t.astype(np.float64)) ** 2
    return errors if reduction == NONE else (errors.mean() if reduction == MEAN else errors.sum())


def numeric_vjp(f, x, v, eps=1e-6):
    """d/dx of sum(v * f(x)) by central differences, in float64."""
    grad = np.zeros_like(x, dtype=np.float64)
    for index in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[index] += eps
        down[index] -= eps
        grad[index] = (np.sum(v * f(up)) - np.sum(v * f(down))) / (2 * eps)
    return grad


def random_targets(rng, n, classes):
    return rng.integers(0, classes, size=n).astype(np.int64)


# ----- log_softmax -----

SOFTMAX_CASES = [((6,), 0), ((6,), -1), ((4, 7), 1), ((4, 7), 0), ((4, 7), -1), ((3, 4, 5), 1),
                 ((3, 4, 5), 2), ((2, 3, 4, 5), 0), ((2, 3, 4, 5), 2), ((), 0), ((), -1), ((3, 0), 1), ((1, 300), 1)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,dim", SOFTMAX_CASES)
def test_log_softmax_matches_numpy(opdispatch, aten, rng, dtype, shape, dim):
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    expected = log_softmax_ref(x, dim)
    check_close(aten._log_softmax.default(T(opdispatch, x), dim, False).numpy(), expected, dtype)
    check_close(opdispatch.log_softmax(T(opdispatch, x), dim).numpy(), expected, dtype)
    check_close(T(opdispatch, x).log_softmax(dim).numpy(), expected, dtype)


def test_log_softmax_is_stable_for_large_logits(opdispatch, aten):
    x = np.array([[1000.0, 0.0, -1000.0], [-1e30, -1e30, -1e30]], dtype=np.float32)
    result = aten._log_softmax.default(T(opdispatch, x), 1, False).numpy()
    np.testing.assert_allclose(result[0], [0.0, -1000.0, -2000.0], rtol=1e-6)
    np.testing.assert_allclose(result[1], [-np.log(3)] * 3, rtol=1e-6)
    assert np.isnan(aten._log_softmax.default(opdispatch.tensor([1.0, float("nan")]), 0, False).numpy()).all()


@pytest.mark.parametrize("dtype", FLOATS)
def test_log_softmax_of_noncontiguous_inputs_and_into_a_strided_out(opdispatch, aten, rng, dtype):
    base = rng.standard_normal((6, 8)).astype(dtype)
    for view, dim in ((base.T, 1), (base.T, 0), (base[::2, 1::3], 1), (base.reshape(2, 3, 8).transpose(2, 0, 1), 2)):
        assert not view.flags.c_contiguous
        check_close(aten._log_softmax.default(T(opdispatch, view), dim, False).numpy(), log_softmax_ref(view, dim), dtype)
    out = np.zeros((8, 6), dtype=dtype).T  # a transposed out= keeps its strides
    returned = aten._log_softmax.out(T(opdispatch, base), 1, False, out=T(opdispatch, out))
    check_close(out, log_softmax_ref(base, 1), dtype)
    assert returned.strides == (1, 6)


def test_log_softmax_into_its_own_input(opdispatch, aten, rng):
    x = rng.standard_normal((3, 5))
    expected = log_softmax_ref(x, 1)
    t = T(opdispatch, x)
    aten._log_softmax.out(t, 1, False, out=t)
    check_close(x, expected, "float64")


def test_log_softmax_dtype_and_out(opdispatch, aten, rng):
    x = rng.standard_normal((3, 4)).astype(np.float32)
    as_double = opdispatch.log_softmax(T(opdispatch, x), 1, dtype=opdispatch.float64)
    assert as_double.dtype == opdispatch.float64
    check_close(as_double.numpy(), log_softmax_ref(x.astype(np.float64), 1), "float64")
    out = opdispatch.empty([0], dtype=opdispatch.float64)
    aten.log_softmax.int_out(T(opdispatch, x), 0, dtype=opdispatch.float64, out=out)
    check_close(out.numpy(), log_softmax_ref(x.astype(np.float64), 0), "float64")
    # An integer input computes once converted by dtype=.
    ints = opdispatch.tensor([[1, 2, 3]])
    check_close(opdispatch.log_softmax(ints, 1, dtype=opdispatch.float32).numpy(),
                log_softmax_ref(np.array([[1.0, 2.0, 3.0]]), 1), "float32")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,dim", [((4, 7), 1), ((4, 7), 0), ((3, 4, 5), 1), ((5,), 0), ((), 0)])
def test_log_softmax_backward_matches_numpy(opdispatch, aten, rng, dtype, shape, dim):
    x = rng.standard_normal(shape).astype(dtype)
    grad = rng.standard_normal(shape).astype(dtype)
    output = log_softmax_ref(x, dim).astype(dtype)
    expected = grad - np.exp(output.astype(np.float64)) * grad.astype(np.float64).sum(
        axis=dim if x.ndim else None, keepdims=True)
    result = aten._log_softmax_backward_data.default(T(opdispatch, grad), T(opdispatch, output), dim,
                                                     getattr(opdispatch, dtype))
    check_close(result.numpy(), expected, dtype)


@pytest.mark.parametrize("dim", [0, 1])
def test_log_softmax_backward_is_the_gradient_of_log_softmax(opdispatch, aten, rng, dim):
    x = rng.standard_normal((3, 4))
    v = rng.standard_normal((3, 4))
    forward = lambda a: aten._log_softmax.default(opdispatch.from_numpy(a), dim, False).numpy()  # noqa: E731
    output = aten._log_softmax.default(T(opdispatch, x), dim, False)
    analytic = aten._log_softmax_backward_data.default(T(opdispatch, v), output, dim, opdispatch.float64).numpy()
    np.testing.assert_allclose(analytic, numeric_vjp(forward, x, v), rtol=1e-6, atol=1e-8)


def test_log_softmax_backward_of_strided_operands(opdispatch, aten, rng):
    x = rng.standard_normal((5, 4))
    grad = rng.standard_normal((4, 5)).T  # transposed views
    output = np.ascontiguousarray(log_softmax_ref(x, 1).T).T
    expected = grad - np.exp(output) * grad.sum(axis=1, keepdims=True)
    result = aten._log_softmax_backward_data.default(T(opdispatch, grad), T(opdispatch, output), 1, opdispatch.float64)
    check_close(result.numpy(), expected, "float64")


def test_log_softmax_on_meta(opdispatch, aten):
    m = opdispatch.zeros([4, 3], device="meta")
    result = aten._log_softmax.default(m, 1, False)
    assert result.device == "meta" and result.shape == (4, 3) and result.dtype == opdispatch.float32
    assert opdispatch.log_softmax(m, 0, dtype=opdispatch.float64).dtype == opdispatch.float64
    back = aten._log_softmax_backward_data.default(m, m, 1, opdispatch.float32)
    assert back.device == "meta" and back.shape == (4, 3)


def test_log_softmax_errors_name_the_operator(opdispatch, aten):
    x = opdispatch.zeros([2, 3])
    with pytest.raises(opdispatch.Error, match=r"^_log_softmax: dimension 2 is out of range for a 2-d tensor"):
        aten._log_softmax.default(x, 2, False)
    with pytest.raises(opdispatch.Error, match="^_log_softmax: expected self to have a floating point dtype, but got int64"):
        aten._log_softmax.default(opdispatch.tensor([1, 2]), 0, False)
    with pytest.raises(opdispatch.Error, match="^_log_softmax: half_to_float=True"):
        aten._log_softmax.default(x, 1, True)
    with pytest.raises(opdispatch.Error, match=r"^_log_softmax_backward_data: expected input_dtype \(float64\)"):
        aten._log_softmax_backward_data.default(x, x, 1, opdispatch.float64)
    with pytest.raises(opdispatch.Error, match=r"^_log_softmax_backward_data: grad_output of shape \[2, 3\] does not match"):
        aten._log_softmax_backward_data.default(x, opdispatch.zeros([3, 2]), 1, opdispatch.float32)
    with pytest.raises(opdispatch.Error, match="^_log_softmax: expected out= to have dtype float32, but got float64"):
        aten._log_softmax.out(x, 1, False, out=opdispatch.zeros([2, 3], dtype=opdispatch.float64))


# ----- nll_loss -----

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 2])
def test_nll_loss_forward_matches_numpy(opdispatch, aten, rng, dtype, reduction, weighted, ignore_index):
    x = rng.standard_normal((9, 5)).astype(dtype)
    target = random_targets(rng, 9, 5)
    weight = (rng.random(5) + 0.5).astype(dtype) if weighted else None
    out, total = aten.nll_loss_forward.default(T(opdispatch, x), T(opdispatch, target),
                                               None if weight is None else T(opdispatch, weight), reduction, ignore_index)
    expected_out, expected_total = nll_ref(x, target, weight, reduction, ignore_index)
    check_close(out.numpy(), expected_out, dtype)
    check_close(total.numpy(), expected_total, dtype)
    composite = opdispatch.nll_loss(T(opdispatch, x), T(opdispatch, target),
                                    None if weight is None else T(opdispatch, weight), reduction, ignore_index)
    check_close(composite.numpy(), expected_out, dtype)


def test_nll_loss_defaults_are_mean_and_ignore_index_minus_100(opdispatch, aten, rng):
    x = rng.standard_normal((4, 3))
    target = np.array([0, -100, 2, 1])
    expected, _ = nll_ref(x, target, None, MEAN, -100)
    check_close(aten.nll_loss.default(T(opdispatch, x), T(opdispatch, target)).numpy(), expected, "float64")
    check_close(aten.nll_loss_nd.default(T(opdispatch, x), T(opdispatch, target)).numpy(), expected, "float64")


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_of_one_row_without_a_batch_dimension(opdispatch, aten, rng, reduction):
    x = rng.standard_normal(6)
    target = np.array(4)
    weight = rng.random(6) + 0.5
    out, total = aten.nll_loss_forward.default(T(opdispatch, x), T(opdispatch, target), T(opdispatch, weight),
                                               reduction, -100)
    expected_out, expected_total = nll_ref(x, target, weight, reduction, -100)
    assert out.shape == () and total.shape == ()
    check_close(out.numpy(), expected_out, "float64")
    check_close(total.numpy(), expected_total, "float64")


@pytest.mark.parametrize("dtype", FLOATS)
def test_nll_loss_of_noncontiguous_inputs(opdispatch, aten, rng, dtype):
    x = rng.standard_normal((5, 8)).astype(dtype).T  # [8, 5], transposed
    targets = random_targets(rng, 16, 5)[::2]         # strided
    weight = (rng.random(10) + 0.5).astype(dtype)[::2]
    for reduction in REDUCTIONS:
        out, total = aten.nll_loss_forward.default(T(opdispatch, x), T(opdispatch, targets), T(opdispatch, weight),
                                                   reduction, -100)
        expected_out, expected_total = nll_ref(x, targets, weight, reduction, -100)
        check_close(out.numpy(), expected_out, dtype)
        check_close(total.numpy(), expected_total, dtype)
        grad_output = np.ones(8, dtype=dtype)[::1] if reduction == NONE else np.array(1.5, dtype=dtype)
        grad = aten.nll_loss_backward.default(T(opdispatch, grad_output), T(opdispatch, x), T(opdispatch, targets),
                                              T(opdispatch, weight), reduction, -100, total)
        check_close(grad.numpy(), nll_backward_ref(grad_output, x, targets, weight, reduction, -100,
                                                   expected_total), dtype)


def test_nll_loss_with_every_target_ignored_or_no_rows(opdispatch, aten):
    x = opdispatch.zeros([3, 4])
    ignored = opdispatch.tensor([-100, -100, -100])
    mean, total = aten.nll_loss_forward.default(x, ignored, None, MEAN, -100)
    assert np.isnan(mean.numpy()) and total.numpy() == 0  # 0 / 0, as in PyTorch
    assert aten.nll_loss_forward.default(x, ignored, None, SUM, -100)[0].numpy() == 0
    empty = opdispatch.zeros([0, 4])
    no_targets = opdispatch.empty([0], dtype=opdispatch.int64)
    assert np.isnan(aten.nll_loss_forward.default(empty, no_targets, None, MEAN, -100)[0].numpy())
    assert aten.nll_loss_forward.default(empty, no_targets, None, NONE, -100)[0].shape == (0,)
    assert aten.nll_loss_backward.default(opdispatch.tensor(1.0), empty, no_targets, None, MEAN, -100,
                                          opdispatch.tensor(0.0)).shape == (0, 4)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_backward_matches_numpy(opdispatch, aten, rng, dtype, reduction, weighted):
    x = rng.standard_normal((7, 4)).astype(dtype)
    target = random_targets(rng, 7, 4)
    target[3] = 1
    weight = (rng.random(4) + 0.5).astype(dtype) if weighted else None
    w = None if weight is None else T(opdispatch, weight)
    _, total = aten.nll_loss_forward.default(T(opdispatch, x), T(opdispatch, target), w, reduction, 1)
    grad_output = rng.standard_normal(7).astype(dtype) if reduction == NONE else np.array(0.7, dtype=dtype)
    result = aten.nll_loss_backward.default(T(opdispatch, grad_output), T(opdispatch, x), T(opdispatch, target), w,
                                            reduction, 1, total)
    expected = nll_backward_ref(grad_output, x, target, weight, reduction, 1, total.numpy().item())
    check_close(result.numpy(), expected, dtype)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_backward_is_the_gradient_of_nll_loss(opdispatch, aten, rng, reduction):
    x = rng.standard_normal((5, 3))
    target = np.array([0, 2, -100, 1, 2])
    weight = rng.random(3) + 0.5
    w = T(opdispatch, weight)
    forward = lambda a: aten.nll_loss_forward.default(  # noqa: E731
        opdispatch.from_numpy(a), T(opdispatch, target), w, reduction, -100)[0].numpy()
    v = rng.standard_normal(5) if reduction == NONE else np.array(1.3)
    _, total = aten.nll_loss_forward.default(T(opdispatch, x), T(opdispatch, target), w, reduction, -100)
    analytic = aten.nll_loss_backward.default(T(opdispatch, v), T(opdispatch, x), T(opdispatch, target), w, reduction,
                                              -100, total).numpy()
    np.testing.assert_allclose(analytic, numeric_vjp(forward, x, v), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_nd_folds_extra_dimensions_into_rows(opdispatch, aten, rng, reduction):
    x = rng.standard_normal((2, 4, 3, 5))  # [N, C, d1, d2]
    target = rng.integers(0, 4, size=(2, 3, 5))
    target[0, 1, 2] = -100
    weight = rng.random(4) + 0.5
    rows = np.moveaxis(x, 1, -1).reshape(-1, 4)
    expected, _ = nll_ref(rows, target.reshape(-1), weight, reduction, -100)
    if reduction == NONE:
        expected = expected.reshape(2, 3, 5)
    result = aten.nll_loss_nd.default(T(opdispatch, x), T(opdispatch, target), T(opdispatch, weight), reduction, -100)
    check_close(result.numpy(), expected, "float64")
    three_d = aten.nll_loss_nd.default(T(opdispatch, x[:, :, 0]), T(opdispatch, target[:, 0]), None, reduction, -100)
    expected3, _ = nll_ref(np.moveaxis(x[:, :, 0], 1, -1).reshape(-1, 4), target[:, 0].reshape(-1), None, reduction, -100)
    check_close(three_d.numpy(), expected3.reshape(2, 5) if reduction == NONE else expected3, "float64")


def test_nll_loss_out_variants(opdispatch, aten, rng):
    x = rng.standard_normal((4, 3)).astype(np.float32)
    target = np.array([2, 0, 1, 1])
    expected, expected_total = nll_ref(x, target, None, SUM, -100)
    out, total = opdispatch.empty([5], dtype=opdispatch.float32), opdispatch.empty([0], dtype=opdispatch.float32)
    returned = aten.nll_loss_forward.output(T(opdispatch, x), T(opdispatch, target), None, SUM, -100, output=out,
                                            total_weight=total)
    assert len(returned) == 2 and out.shape == () and total.shape == ()  # both resized to 0-d
    check_close(out.numpy(), expected, "float32")
    check_close(total.numpy(), expected_total, "float32")
    single = opdispatch.empty([2], dtype=opdispatch.float32)
    aten.nll_loss.out(T(opdispatch, x), T(opdispatch, target), None, SUM, -100, out=single)
    check_close(single.numpy(), expected, "float32")
    grad_input = opdispatch.empty([0], dtype=opdispatch.float32)
    aten.nll_loss_backward.grad_input(opdispatch.tensor(1.0), T(opdispatch, x), T(opdispatch, target), None, SUM, -100,
                                      total, grad_input=grad_input)
    check_close(grad_input.numpy(), nll_backward_ref(1.0, x, target, None, SUM, -100, expected_total), "float32")


def test_nll_loss_on_meta(opdispatch, aten):
    x = opdispatch.zeros([5, 3], device="meta")
    target = opdispatch.zeros([5], dtype=opdispatch.int64, device="meta")
    out, total = aten.nll_loss_forward.default(x, target, None, NONE, -100)
    assert (out.device, out.shape, total.shape) == ("meta", (5,), ())
    out, total = aten.nll_loss_forward.default(x, target, None, MEAN, -100)
    assert (out.shape, total.shape) == ((), ())
    grad = aten.nll_loss_backward.default(opdispatch.zeros([], device="meta"), x, target, None, MEAN, -100, total)
    assert (grad.device, grad.shape) == ("meta", (5, 3))
    assert opdispatch.nll_loss(x, target).shape == ()


def test_nll_loss_errors_name_the_operator(opdispatch, aten):
    x = opdispatch.zeros([3, 4])
    target = opdispatch.tensor([0, 7, 1])
    with pytest.raises(opdispatch.Error, match=r"^nll_loss_forward: Target 7 is out of bounds"):
        aten.nll_loss_forward.default(x, target, None, MEAN, -100)
    with pytest.raises(opdispatch.Error, match=r"^nll_loss_backward: Target -1 is out of bounds"):
        aten.nll_loss_backward.default(opdispatch.tensor(1.0), x, opdispatch.tensor([0, -1, 1]), None, MEAN, -100,
                                       opdispatch.tensor(3.0))
    with pytest.raises(opdispatch.Error, match="^nll_loss_forward: expected target to hold int64 class indices"):
        aten.nll_loss_forward.default(x, opdispatch.tensor([0, 1, 2], dtype=opdispatch.int32), None, MEAN, -100)
    with pytest.raises(opdispatch.Error, match=r"^nll_loss_forward: size mismatch \(got input: \[3, 4\], target: \[2\]\)"):
        aten.nll_loss_forward.default(x, opdispatch.tensor([0, 1]), None, MEAN, -100)
    with pytest.raises(opdispatch.Error, match=r"^nll_loss_forward: weight tensor should be defined either for all 4"):
        aten.nll_loss_forward.default(x, opdispatch.tensor([0, 1, 2]), opdispatch.ones([3]), MEAN, -100)
    with pytest.raises(opdispatch.Error, match="^nll_loss_forward: input tensor should be 1D or 2D"):
        aten.nll_loss_forward.default(opdispatch.zeros([2, 3, 4]), opdispatch.tensor([0, 1]), None, MEAN, -100)
    with pytest.raises(opdispatch.Error, match="^nll_loss_forward: reduction 3 is not one of"):
        aten.nll_loss_forward.default(x, opdispatch.tensor([0, 1, 2]), None, 3, -100)
    with pytest.raises(opdispatch.Error, match="^nll_loss_backward: Expected a single element grad_output"):
        aten.nll_loss_backward.default(opdispatch.ones([3]), x, opdispatch.tensor([0, 1, 2]), None, MEAN, -100,
                                       opdispatch.tensor(3.0))
    with pytest.raises(opdispatch.Error, match=r"^nll_loss_nd: Expected target size \[2, 5\], got \[2, 4\]"):
        aten.nll_loss_nd.default(opdispatch.zeros([2, 3, 5]), opdispatch.zeros([2, 4], dtype=opdispatch.int64))


# ----- mse_loss -----

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shapes", [((4, 5), (4, 5)), ((3,), (3,)), ((), ()), ((4, 5), (5,)), ((0, 2), (0, 2))])
def test_mse_loss_matches_numpy(opdispatch, aten, rng, dtype, reduction, shapes):
    x = rng.standard_normal(shapes[0]).astype(dtype)
    t = rng.standard_normal(shapes[1]).astype(dtype)
    result = aten.mse_loss.default(T(opdispatch, x), T(opdispatch, t), reduction)
    expected = np.float64("nan") if reduction == MEAN and x.size == 0 else mse_ref(x, t, reduction)
    check_close(result.numpy(), expected, dtype)


def test_mse_loss_defaults_to_mean_and_accepts_strided_inputs(opdispatch, aten, rng):
    x = rng.standard_normal((6, 4)).T
    t = rng.standard_normal((4, 12))[:, ::2]
    check_close(aten.mse_loss.default(T(opdispatch, x), T(opdispatch, t)).numpy(), mse_ref(x, t, MEAN), "float64")
    check_close(opdispatch.mse_loss(T(opdispatch, x), T(opdispatch, t), NONE).numpy(), mse_ref(x, t, NONE), "float64")


def test_mse_loss_promotes_mixed_floating_dtypes(opdispatch, aten, rng):
    x = rng.standard_normal(5).astype(np.float32)
    t = rng.standard_normal(5)
    result = aten.mse_loss.default(T(opdispatch, x), T(opdispatch, t), SUM)
    assert result.dtype == opdispatch.float64
    check_close(result.numpy(), mse_ref(x, t, SUM), "float64")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_mse_loss_backward_matches_numpy(opdispatch, aten, rng, dtype, reduction):
    x = rng.standard_normal((3, 4)).astype(dtype)
    t = rng.standard_normal((3, 4)).astype(dtype)
    grad_output = rng.standard_normal((3, 4)).astype(dtype) if reduction == NONE else np.array(0.6, dtype=dtype)
    norm = 2.0 / x.size if reduction == MEAN else 2.0
    expected = norm * (x.astype(np.float64) - t) * grad_output
    result = aten.mse_loss_backward.default(T(opdispatch, grad_output), T(opdispatch, x), T(opdispatch, t), reduction)
    check_close(result.numpy(), expected, dtype)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_mse_loss_backward_is_the_gradient_of_mse_loss(opdispatch, aten, rng, reduction):
    x, t = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    v = rng.standard_normal((2, 3)) if reduction == NONE else np.array(0.9)
    forward = lambda a: aten.mse_loss.default(opdispatch.from_numpy(a), T(opdispatch, t), reduction).numpy()  # noqa: E731
    analytic = aten.mse_loss_backward.default(T(opdispatch, v), T(opdispatch, x), T(opdispatch, t), reduction).numpy()
    np.testing.assert_allclose(analytic, numeric_vjp(forward, x, v), rtol=1e-6, atol=1e-8)
    # The target's gradient is the same with self and target swapped (the formula's second line).
    forward_t = lambda b: aten.mse_loss.default(T(opdispatch, x), opdispatch.from_numpy(b), reduction).numpy()  # noqa: E731
    analytic_t = aten.mse_loss_backward.default(T(opdispatch, v), T(opdispatch, t), T(opdispatch, x), reduction).numpy()
    np.testing.assert_allclose(analytic_t, numeric_vjp(forward_t, t, v), rtol=1e-6, atol=1e-8)


def test_mse_loss_backward_averages_over_the_broadcast_errors(opdispatch, aten, rng):
    """A target that broadcasts self: the mean is over the broadcast errors, so is the gradient
    (summed back to self's shape, it is the true gradient)."""
    x, t = rng.standard_normal(3), rng.standard_normal((2, 3))
    forward = lambda a: aten.mse_loss.default(opdispatch.from_numpy(a), T(opdispatch, t), MEAN).numpy()  # noqa: E731
    grad = aten.mse_loss_backward.default(opdispatch.tensor(1.0, dtype=opdispatch.float64), T(opdispatch, x),
                                          T(opdispatch, t), MEAN).numpy()
    assert grad.shape == (2, 3)
    np.testing.assert_allclose(grad.sum(axis=0), numeric_vjp(forward, x, np.array(1.0)), rtol=1e-6, atol=1e-8)


def test_mse_loss_out_variants(opdispatch, aten, rng):
    x, t = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32)
    out = opdispatch.empty([4], dtype=opdispatch.float32)
    aten.mse_loss.out(T(opdispatch, x), T(opdispatch, t), SUM, out=out)
    check_close(out.numpy(), mse_ref(x, t, SUM), "float32")
    strided = np.zeros((3, 2), dtype=np.float32).T
    aten.mse_loss.out(T(opdispatch, x), T(opdispatch, t), NONE, out=T(opdispatch, strided))
    check_close(strided, mse_ref(x, t, NONE), "float32")
    grad_input = opdispatch.empty([0], dtype=opdispatch.float32)
    aten.mse_loss_backward.grad_input(opdispatch.tensor(1.0), T(opdispatch, x), T(opdispatch, t), MEAN,
                                      grad_input=grad_input)
    check_close(grad_input.numpy(), (x.astype(np.float64) - t) / 3, "float32")


def test_mse_loss_on_meta(opdispatch, aten):
    x = opdispatch.zeros([4, 3], device="meta")
    assert aten.mse_loss.default(x, x).shape == ()
    none = aten.mse_loss.default(x, opdispatch.zeros([3], device="meta"), NONE)
    assert (none.device, none.shape) == ("meta", (4, 3))


def test_mse_loss_errors_name_the_operator(opdispatch, aten):
    x = opdispatch.zeros([2, 3])
    with pytest.raises(opdispatch.Error, match="^mse_loss: expected floating point inputs, but they compute in int64"):
        aten.mse_loss.default(opdispatch.tensor([1, 2]), opdispatch.tensor([1, 3]))
    with pytest.raises(opdispatch.Error, match="^mse_loss: reduction 5 is not one of"):
        aten.mse_loss.default(x, x, 5)
    with pytest.raises(opdispatch.Error, match=r"^mse_loss: the shapes \[2, 3\] and \[4\] cannot be broadcast together"):
        aten.mse_loss.default(x, opdispatch.zeros([4]))
    with pytest.raises(opdispatch.Error, match="^mse_loss: expected out= to have dtype float32, but got float64"):
        aten.mse_loss.out(x, x, MEAN, out=opdispatch.zeros([], dtype=opdispatch.float64))
    with pytest.raises(opdispatch.Error, match="^mse_loss_backward: expected grad_input to have dtype float32"):
        aten.mse_loss_backward.grad_input(opdispatch.tensor(1.0), x, x, MEAN,
                                          grad_input=opdispatch.zeros([2, 3], dtype=opdispatch.float64))


# ----- a training step: the kernels compose into the gradients numpy computes -----

def test_a_classifier_and_a_regressor_step_give_numpys_gradients(opdispatch, aten, rng):
    x, w = rng.standard_normal((8, 5)), rng.standard_normal((5, 3))
    labels = random_targets(rng, 8, 3)
    logits = opdispatch.mm(T(opdispatch, x), T(opdispatch, w))
    log_probs = opdispatch.log_softmax(logits, 1)
    loss, total = aten.nll_loss_forward.default(log_probs, T(opdispatch, labels), None, MEAN, -100)
    grad_log_probs = aten.nll_loss_backward.default(opdispatch.tensor(1.0, dtype=opdispatch.float64), log_probs,
                                                    T(opdispatch, labels), None, MEAN, -100, total)
    grad_logits = aten._log_softmax_backward_data.default(grad_log_probs, log_probs, 1, opdispatch.float64)
    grad_w = opdispatch.mm(T(opdispatch, x).t(), grad_logits)

    z = x @ w
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    onehot = np.eye(3)[labels]
    check_close(loss.numpy(), -np.log(p[np.arange(8), labels]).mean(), "float64")
    check_close(grad_w.numpy(), x.T @ ((p - onehot) / 8), "float64")

    y = rng.standard_normal((8, 3))
    mse = aten.mse_loss.default(logits, T(opdispatch, y))
    grad_z = aten.mse_loss_backward.default(opdispatch.tensor(1.0, dtype=opdispatch.float64), logits,
                                            T(opdispatch, y), MEAN)
    check_close(mse.numpy(), ((z - y) ** 2).mean(), "float64")
    check_close(opdispatch.mm(T(opdispatch, x).t(), grad_z).numpy(), x.T @ (2 * (z - y) / z.size), "float64")
