"""CUDA tensors: the CUDA kernels agree with the CPU ones, and a CUDA build without a device
fails cleanly.

The comparisons need a GPU and skip without one (opdispatch._C._cuda_is_available()); each
runs one operator on cpu tensors and on the same values moved to cuda, and compares the
results brought back to the host. The tests of a machine without a device run everywhere.
"""
import re

import numpy as np
import pytest
from cuda_compare import DEVICE, assert_same, compare, host, on_device, random_array

DTYPES = ["bool", "int32", "int64", "float32", "float64"]
NUMERIC = ["int32", "int64", "float32", "float64"]
FLOATING = ["float32", "float64"]


@pytest.fixture(scope="module")
def built(opdispatch):
    return opdispatch._C._cuda_is_built()


# ----- without a device (runs everywhere) -----

def test_availability_answers_are_consistent(opdispatch, built):
    available, count = opdispatch._C._cuda_is_available(), opdispatch._C._cuda_device_count()
    assert isinstance(available, bool) and isinstance(count, int)
    assert available == (count > 0)
    if not built:
        assert (available, count) == (False, 0)
    # The public spelling says the same.
    assert (opdispatch.cuda.is_built(), opdispatch.cuda.is_available(), opdispatch.cuda.device_count()) == (
        built, available, count)


def test_a_cuda_build_registers_cuda_kernels(opdispatch, built):
    table = opdispatch.dispatcher.dump_table("aten::add.Tensor")
    assert ("CUDA" in table) == built
    if built:
        assert "CUDA" in opdispatch.dispatcher.dump_table("aten::empty.memory_format")
        assert "CUDA" in opdispatch.dispatcher.dump_table("aten::sum.dim_IntList")


CREATE_ON_CUDA = {
    "empty": lambda o: o.ops.aten.empty.memory_format([2, 3], device=DEVICE),
    "zeros": lambda o: o.zeros(2, 3, device=DEVICE),
    "full": lambda o: o.full([2], 1.5, device=DEVICE),
    "arange": lambda o: o.arange(5, device=DEVICE),
    "rand": lambda o: o.rand(4, device=DEVICE),
    "to": lambda o: o.tensor([1.0, 2.0]).to(DEVICE),
    "empty_like": lambda o: o.empty_like(o.tensor([1, 2]), device=DEVICE),
}


@pytest.mark.parametrize("how", sorted(CREATE_ON_CUDA))
def test_creating_a_cuda_tensor_without_a_device_raises(opdispatch, built, how):
    if opdispatch._C._cuda_is_available():
        pytest.skip("a CUDA device is available")
    with pytest.raises(opdispatch.Error) as info:
        CREATE_ON_CUDA[how](opdispatch)
    assert re.search("cuda", str(info.value), re.IGNORECASE), str(info.value)
    if built:
        assert "CUDA: no CUDA device is available (cudaGetDeviceCount: " in str(info.value)
    # The process carries on: cpu work is unaffected.
    assert opdispatch.add(opdispatch.tensor([1, 2]), 1).numpy().tolist() == [2, 3]


# ----- with a device: CUDA results match CPU results -----

BINARY = {
    "add": lambda o, a, b: o.add(a, b),
    "add_alpha": lambda o, a, b: o.add(a, b, alpha=3),
    "sub": lambda o, a, b: o.sub(a, b, alpha=2),
    "mul": lambda o, a, b: o.mul(a, b),
    "maximum": lambda o, a, b: o.maximum(a, b),
    "minimum": lambda o, a, b: o.minimum(a, b),
    "eq": lambda o, a, b: o.eq(a, b),
    "ne": lambda o, a, b: o.ne(a, b),
    "lt": lambda o, a, b: o.lt(a, b),
    "le": lambda o, a, b: o.le(a, b),
    "gt": lambda o, a, b: o.gt(a, b),
    "ge": lambda o, a, b: o.ge(a, b),
}


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_ops_broadcast_like_cpu(cuda, name, dtype):
    rng = np.random.default_rng(1)
    a, b = random_array(rng, (3, 1, 5), dtype), random_array(rng, (4, 1), dtype)
    compare(cuda, lambda x, y: BINARY[name](cuda, x, y), a, b)


@pytest.mark.parametrize("name", ["add", "mul", "maximum", "eq", "lt"])
def test_binary_ops_on_bool(cuda, name):
    rng = np.random.default_rng(2)
    compare(cuda, lambda x, y: BINARY[name](cuda, x, y), random_array(rng, (6,), "bool"), random_array(rng, (6,), "bool"))


def test_mixed_dtypes_promote_like_cpu(cuda):
    rng = np.random.default_rng(3)
    a, b = random_array(rng, (4, 3), "int32"), random_array(rng, (4, 3), "float64")
    compare(cuda, cuda.add, a, b)
    compare(cuda, cuda.div, a, random_array(rng, (4, 3), "int64") + 20)


def test_transposed_and_sliced_inputs(cuda):
    rng = np.random.default_rng(4)
    a, b = random_array(rng, (5, 4), "float32"), random_array(rng, (4, 5), "float32")
    compare(cuda, lambda x, y: cuda.mul(x.transpose(0, 1), y), a, b)
    compare(cuda, lambda x, y: cuda.add(x[1:4], y.t()[::2]), a, b)


def test_writing_through_an_expanded_view_raises_before_launching(cuda):
    base = on_device(cuda, np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32))
    overlap = "more than one element of the written-to tensor refers to a single memory location"
    for write in (lambda e: e.add_(1), lambda e: e.copy_(cuda.zeros(3, 4)), lambda e: e.uniform_(),
                  lambda e: cuda.neg(on_device(cuda, np.ones((3, 4), dtype=np.float32)), out=e)):
        with pytest.raises(cuda.Error, match=overlap):
            write(base.expand(3, 4))
    base.expand(3, 4).fill_(7)  # one value everywhere: allowed, as in PyTorch
    assert host(base).tolist() == [7.0] * 4


def test_a_cpu_scalar_tensor_joins_cuda_tensors(cuda):
    a = random_array(np.random.default_rng(5), (3, 2), "float32")
    scalar = cuda.tensor(2.5)
    cpu_result = cuda.mul(cuda.from_numpy(a), scalar)
    assert_same(cpu_result, cuda.mul(on_device(cuda, a), scalar))


def test_pow_and_div(cuda):
    rng = np.random.default_rng(6)
    base = np.abs(random_array(rng, (8,), "float64")) + 0.5
    compare(cuda, cuda.pow, base, random_array(rng, (8,), "float64"))
    compare(cuda, cuda.pow, random_array(rng, (8,), "int64"), np.arange(8, dtype=np.int64) % 4)
    compare(cuda, cuda.div, random_array(rng, (8,), "float32"), np.abs(random_array(rng, (8,), "float32")) + 1)


UNARY = ["neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu"]


@pytest.mark.parametrize("dtype", FLOATING)
@pytest.mark.parametrize("name", UNARY)
def test_unary_ops(cuda, name, dtype):
    a = random_array(np.random.default_rng(7), (4, 6), dtype)
    if name in ("log", "sqrt"):
        a = np.abs(a) + 0.1
    compare(cuda, getattr(cuda, name), a)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_unary_integer_ops(cuda, dtype):
    a = random_array(np.random.default_rng(8), (7,), dtype)
    compare(cuda, cuda.neg, a)
    compare(cuda, cuda.abs, a)
    compare(cuda, cuda.sqrt, np.abs(a))  # computes in float32


@pytest.mark.parametrize("dtype", NUMERIC)
def test_clamp(cuda, dtype):
    a = random_array(np.random.default_rng(9), (10,), dtype)
    compare(cuda, lambda x: cuda.clamp(x, -2, 3), a)
    compare(cuda, lambda x: cuda.clamp(x, min=0), a)
    compare(cuda, lambda x: cuda.clamp(x, max=1), a)


@pytest.mark.parametrize("dtype", DTYPES)
def test_where(cuda, dtype):
    rng = np.random.default_rng(10)
    condition = random_array(rng, (3, 4), "bool")
    compare(cuda, cuda.where, condition, random_array(rng, (3, 4), dtype), random_array(rng, (4,), dtype))


def test_in_place_and_out(cuda):
    rng = np.random.default_rng(11)
    a, b = random_array(rng, (3, 3), "float32"), random_array(rng, (3, 3), "float32")
    x = on_device(cuda, a)
    x.add_(on_device(cuda, b))
    np.testing.assert_allclose(host(x), a + b, rtol=1e-6)
    x.mul_(x.t())  # the input overlaps the output in another layout
    np.testing.assert_allclose(host(x), (a + b) * (a + b).T, rtol=1e-5)
    out = cuda.empty(1, device=DEVICE)
    cuda.sub(on_device(cuda, a), on_device(cuda, b), out=out)
    assert list(out.shape) == [3, 3]
    np.testing.assert_allclose(host(out), a - b, rtol=1e-6)


REDUCTIONS = {
    "sum": lambda o, x: o.sum(x, [1]),
    "sum_all": lambda o, x: o.sum(x),
    "sum_keepdim": lambda o, x: o.sum(x, [0, 2], True),
    "mean": lambda o, x: o.mean(x, [0]),
    "amax": lambda o, x: o.amax(x, [2]),
    "amin": lambda o, x: o.amin(x, [0, 1]),
    "argmax": lambda o, x: o.argmax(x, 1),
    "argmax_all": lambda o, x: o.argmax(x),
}


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions(cuda, name, dtype):
    if name == "mean" and dtype not in FLOATING:
        pytest.skip("mean needs a floating dtype")
    a = random_array(np.random.default_rng(12), (4, 5, 6), dtype)
    compare(cuda, lambda x: REDUCTIONS[name](cuda, x), a)
    compare(cuda, lambda x: REDUCTIONS[name](cuda, x.transpose(0, 2)), a)  # strided input


def test_reductions_propagate_nan_and_find_the_first_maximum(cuda):
    a = np.array([[1.0, np.nan, 3.0], [2.0, 5.0, 5.0]], dtype=np.float32)
    for fn in (lambda x: cuda.amax(x, [1]), lambda x: cuda.argmax(x, 1), lambda x: cuda.sum(x, [0])):
        compare(cuda, fn, a)


@pytest.mark.parametrize("dtype", ["int64", "float32", "float64"])
def test_matrix_products(cuda, dtype):
    rng = np.random.default_rng(13)
    a, b = random_array(rng, (33, 17), dtype), random_array(rng, (17, 20), dtype)
    compare(cuda, cuda.mm, a, b)
    compare(cuda, lambda x, y: cuda.mm(y.t(), x.t()), a, b)  # transposed operands
    compare(cuda, lambda x, y, c: cuda.addmm(c, x, y, beta=2, alpha=3), a, b, random_array(rng, (20,), dtype))
    compare(cuda, cuda.bmm, random_array(rng, (3, 5, 7), dtype), random_array(rng, (3, 7, 2), dtype))
    compare(cuda, cuda.matmul, random_array(rng, (2, 4, 6), dtype), random_array(rng, (6,), dtype))


def test_factories(cuda):
    assert_same(cuda.arange(2, 20, 3), cuda.arange(2, 20, 3, device=DEVICE))
    assert_same(cuda.arange(0.5, 3.0, 0.25), cuda.arange(0.5, 3.0, 0.25, device=DEVICE), exact=True)
    assert_same(cuda.zeros(2, 3, dtype=cuda.int32), cuda.zeros(2, 3, dtype=cuda.int32, device=DEVICE))
    assert_same(cuda.ones(4, dtype=cuda.bool), cuda.ones(4, dtype=cuda.bool, device=DEVICE))
    assert_same(cuda.full([2, 2], 7.25), cuda.full([2, 2], 7.25, device=DEVICE), exact=True)
    x = cuda.zeros(3, 4, device=DEVICE)
    x.t().fill_(2)  # a strided fill
    assert (host(x) == 2).all()


@pytest.mark.parametrize("dtype", FLOATING)
def test_random_numbers_match_the_cpu_stream(cuda, dtype):
    """Counter-based: the same seed draws the same values on both devices."""
    kind = getattr(cuda, dtype)
    cpu_gen, cuda_gen = cuda.Generator(), cuda.Generator(DEVICE)
    cpu_gen.manual_seed(42)
    cuda_gen.manual_seed(42)
    for make in (cuda.rand, cuda.randn):
        expected = make(64, generator=cpu_gen, dtype=kind)
        got = make(64, generator=cuda_gen, dtype=kind, device=DEVICE)
        np.testing.assert_allclose(host(got), expected.numpy(), rtol=1e-6 if dtype == "float32" else 1e-14)


@pytest.mark.parametrize("src_dtype", DTYPES)
@pytest.mark.parametrize("dst_dtype", DTYPES)
def test_copies_between_devices_convert_dtypes(cuda, src_dtype, dst_dtype):
    a = random_array(np.random.default_rng(14), (4, 3), src_dtype)
    kind = getattr(cuda, dst_dtype)
    expected = cuda.from_numpy(a).to(kind)
    assert_same(expected, on_device(cuda, a).to(kind))                   # device -> device
    assert_same(expected, cuda.from_numpy(a).to(DEVICE).to(kind))        # host -> device
    np.testing.assert_array_equal(on_device(cuda, a).to("cpu").to(kind).numpy(), expected.numpy())


def test_strided_copies(cuda):
    a = random_array(np.random.default_rng(15), (4, 6), "float64")
    target = cuda.zeros(6, 4, device=DEVICE, dtype=cuda.float32)
    target.t().copy_(cuda.from_numpy(a))                   # host -> strided device, converting
    np.testing.assert_allclose(host(target), a.T.astype(np.float32))
    back = cuda.zeros(4, 6, dtype=cuda.int64).t()
    back.copy_(on_device(cuda, a).t())                     # strided device -> strided host
    np.testing.assert_array_equal(back.numpy(), a.T.astype(np.int64))
    row = on_device(cuda, a[0])
    wide = cuda.zeros(3, 6, device=DEVICE, dtype=cuda.float64)
    wide.copy_(row)                                        # broadcast source
    np.testing.assert_array_equal(host(wide), np.broadcast_to(a[0], (3, 6)))


def test_empty_tensors(cuda):
    x = cuda.zeros(0, 3, device=DEVICE)
    assert list(cuda.add(x, 1).shape) == [0, 3]
    assert host(cuda.sum(x, [0])).tolist() == [0.0, 0.0, 0.0]
    assert host(x.to(cuda.int64)).shape == (0, 3)


# ----- log_softmax and the losses (test_ops_loss.py checks the CPU loops against numpy) -----

@pytest.mark.parametrize("dtype", FLOATING)
def test_log_softmax_and_its_backward(cuda, dtype):
    rng = np.random.default_rng(16)
    aten = cuda.ops.aten
    a, b = random_array(rng, (5, 7), dtype), random_array(rng, (2, 3, 4), dtype)
    for dim in (0, 1, -1):
        compare(cuda, lambda x: cuda.log_softmax(x, dim), a)
    compare(cuda, lambda x: aten._log_softmax.default(x, 1, False), b)
    compare(cuda, lambda x: aten._log_softmax.default(x.transpose(0, 2), 0, False), b)  # strided input
    output = aten._log_softmax.default(cuda.from_numpy(b), 1, False).numpy()
    grad = random_array(rng, (2, 3, 4), dtype)
    compare(cuda, lambda g, y: aten._log_softmax_backward_data.default(g, y, 1, getattr(cuda, dtype)), grad, output)


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("dtype", FLOATING)
def test_nll_loss_forward_and_backward(cuda, reduction, dtype):
    rng = np.random.default_rng(17)
    aten = cuda.ops.aten
    x = random_array(rng, (300, 5), dtype)  # more rows than a block has threads
    target = rng.integers(0, 5, size=300).astype(np.int64)
    weight = (rng.random(5) + 0.5).astype(dtype)
    for i in range(2):
        compare(cuda, lambda s, t, w: aten.nll_loss_forward.default(s, t, w, reduction, 2)[i], x, target, weight)
        compare(cuda, lambda s, t: aten.nll_loss_forward.default(s, t, None, reduction, -100)[i], x, target)
    total = aten.nll_loss_forward.default(cuda.from_numpy(x), cuda.from_numpy(target), cuda.from_numpy(weight),
                                          reduction, 2)[1].numpy()
    grad = random_array(rng, (300,), dtype) if reduction == 0 else np.array(0.5, dtype=dtype)
    compare(cuda, lambda g, s, t, w, tw: aten.nll_loss_backward.default(g, s, t, w, reduction, 2, tw),
            grad, x, target, weight, total)


def test_nll_loss_with_a_target_out_of_bounds_raises_on_cuda(cuda):
    """Without a hidden sync: the kernel's report surfaces when the host next waits for the GPU."""
    x, target = on_device(cuda, np.zeros((3, 4), np.float32)), on_device(cuda, np.array([0, 9, 1]))
    with pytest.raises(cuda.Error, match="nll_loss_forward: Target is out of bounds .*queued earlier"):
        host(cuda.nll_loss(x, target))
    assert host(cuda.nll_loss(x, on_device(cuda, np.array([0, -100, 1])))).shape == ()  # the device carries on


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("dtype", FLOATING)
def test_mse_loss_and_its_backward(cuda, reduction, dtype):
    rng = np.random.default_rng(18)
    aten = cuda.ops.aten
    a, b = random_array(rng, (4, 6), dtype), random_array(rng, (6,), dtype)
    compare(cuda, lambda x, y: aten.mse_loss.default(x, y, reduction), a, b)
    grad = random_array(rng, (4, 6), dtype) if reduction == 0 else np.array(1.5, dtype=dtype)
    compare(cuda, lambda g, x, y: aten.mse_loss_backward.default(g, x, y, reduction), grad, a, b)
