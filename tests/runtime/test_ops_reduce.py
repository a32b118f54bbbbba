"""Reductions (sum, mean, amax, amin, argmax) against numpy on random inputs: every overload
(functional, out=, the all-dims composites), dims / keepdim / dtype, negative and duplicate
dims, every dtype, non-contiguous inputs and outputs, empty and 0-d tensors, Meta shapes and
error messages that name the operator."""
import numpy as np
import pytest

DTYPES = ["bool", "int32", "int64", "float32", "float64"]
FLOATS = ["float32", "float64"]

# (shape, dims): dims as the schema takes them; None and [] both reduce everything.
DIM_CASES = [
    ((5,), None),
    ((5,), [0]),
    ((4, 6), [1]),
    ((4, 6), [0]),
    ((4, 6), [-1, 0]),
    ((4, 6), []),
    ((3, 4, 5), [1]),
    ((3, 4, 5), [0, 2]),
    ((3, 4, 5), [-2, -1]),
    ((2, 3, 4, 5), [1, 3]),
    ((2, 1, 4, 1), [1, 2]),
    ((7, 300), [1]),
    ((300, 7), [0]),
]


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def random_array(rng, shape, dtype):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("int"):
        return rng.integers(-50, 50, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def as_tensor(opdispatch, array):
    """A tensor sharing the array's memory and strides (non-contiguous stays non-contiguous)."""
    return opdispatch.from_numpy(array)


def axes(dims, ndim):
    """numpy's axis for a dims list: None and [] reduce everything."""
    return tuple(dims) if dims and ndim else None


def dtype_of(opdispatch, name):
    return getattr(opdispatch, name)


def check_close(actual, expected, dtype):
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if dtype == "float32":
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)
    elif dtype == "float64":
        np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_array_equal(actual, expected)


# ----- sum -----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,dims", DIM_CASES)
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_matches_numpy(opdispatch, aten, rng, dtype, shape, dims, keepdim):
    a = random_array(rng, shape, dtype)
    result = aten.sum.dim_IntList(as_tensor(opdispatch, a), dims, keepdim).numpy()
    acc = np.int64 if dtype in ("bool", "int32", "int64") else np.float64
    expected = a.sum(axis=axes(dims, a.ndim), keepdims=keepdim, dtype=acc)
    check_close(result, expected.astype(np.int64 if acc is np.int64 else dtype), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sum_of_everything_and_its_dtype(opdispatch, aten, rng, dtype):
    a = random_array(rng, (3, 5), dtype)
    x = as_tensor(opdispatch, a)
    result = aten.sum.default(x)
    assert result.shape == ()
    expected = a.sum(dtype=np.int64 if dtype in ("bool", "int32", "int64") else np.float64)
    check_close(result.numpy(), np.asarray(expected).astype(result.numpy().dtype), dtype)
    assert aten.sum.default(x, dtype=opdispatch.float64).numpy().dtype == np.float64
    np.testing.assert_allclose(aten.sum.default(x, dtype=opdispatch.float64).numpy(), a.astype(np.float64).sum())
    out = opdispatch.empty([2], dtype=result.dtype)
    aten.sum.out(x, out=out)  # autogen from the composite
    assert out.shape == ()
    check_close(out.numpy(), result.numpy(), dtype)


def test_sum_dtype_converts_before_adding(opdispatch, aten):
    x = opdispatch.tensor([1.5, 1.5, 2.7])
    assert aten.sum.dim_IntList(x, None, dtype=opdispatch.int64).numpy() == 4  # 1 + 1 + 2
    ints = opdispatch.tensor([2**31 - 1, 2**31 - 1], dtype=opdispatch.int32)
    assert aten.sum.dim_IntList(ints, [0]).numpy() == 2 * (2**31 - 1)  # int64: no overflow
    as_float = aten.sum.dim_IntList(ints, [0], dtype=opdispatch.float32)
    assert as_float.numpy().dtype == np.float32


def test_sum_is_accurate_for_long_float32_rows(opdispatch, aten, rng):
    a = (rng.random(1_000_003) + 1000).astype(np.float32)
    total = aten.sum.default(as_tensor(opdispatch, a)).numpy()
    exact = a.astype(np.float64).sum()
    assert abs(float(total) - exact) / exact < 1e-6
    rows = aten.sum.dim_IntList(as_tensor(opdispatch, a[:1_000_000].reshape(1000, 1000)), [0]).numpy()
    np.testing.assert_allclose(rows, a[:1_000_000].reshape(1000, 1000).astype(np.float64).sum(0), rtol=1e-6)


NONCONTIGUOUS = [
    ("transposed", lambda a: a.T, [0]),
    ("transposed_all", lambda a: a.T, None),
    ("sliced", lambda a: a[:, ::2], [1]),
    ("permuted", lambda a: a.reshape(4, 3, 6).transpose(2, 0, 1), [0, 2]),
    ("permuted_middle", lambda a: a.reshape(4, 3, 6).transpose(1, 2, 0), [1]),
    ("broadcast", lambda a: np.lib.stride_tricks.as_strided(a[0], (5, 12), (0, a.strides[1]), writeable=True), [0]),
]


@pytest.mark.parametrize("name,make,dims", NONCONTIGUOUS, ids=[c[0] for c in NONCONTIGUOUS])
@pytest.mark.parametrize("dtype", ["int32", "float32", "float64"])
def test_reductions_of_noncontiguous_inputs(opdispatch, aten, rng, name, make, dims, dtype):
    a = make(random_array(rng, (6, 12), dtype))
    x = as_tensor(opdispatch, a)
    assert not x.is_contiguous()
    ax = axes(dims, a.ndim)
    acc = np.int64 if dtype == "int32" else np.float64
    check_close(aten.sum.dim_IntList(x, dims).numpy(),
                a.sum(axis=ax, dtype=acc).astype(np.int64 if dtype == "int32" else dtype), dtype)
    check_close(aten.amax.default(x, dims or []).numpy(), np.asarray(a.max(axis=ax)), dtype)
    check_close(aten.amin.default(x, dims or []).numpy(), np.asarray(a.min(axis=ax)), dtype)
    if dtype != "int32":
        check_close(aten.mean.dim(x, dims).numpy(), np.asarray(a.mean(axis=ax, dtype=np.float64)).astype(dtype), dtype)
    if dims is None or len(dims) == 1:
        expected = np.argmax(a, axis=None if dims is None else dims[0])
        np.testing.assert_array_equal(aten.argmax.default(x, None if dims is None else dims[0]).numpy(), expected)


def test_sum_out_resizes_and_takes_its_dtype(opdispatch, aten, rng):
    a = random_array(rng, (4, 5), "float32")
    out = opdispatch.zeros([7], dtype=opdispatch.float64)
    returned = aten.sum.IntList_out(as_tensor(opdispatch, a), [1], out=out)
    assert out.shape == (4,)
    assert returned.is_alias_of(out)
    np.testing.assert_allclose(out.numpy(), a.astype(np.float64).sum(1), rtol=1e-6)  # computed in out's dtype
    with pytest.raises(Exception, match="^sum: expected out= to have dtype float32, but got float64"):
        aten.sum.IntList_out(as_tensor(opdispatch, a), [1], dtype=opdispatch.float32, out=out)


def test_reduction_into_a_noncontiguous_out(opdispatch, aten, rng):
    a = random_array(rng, (3, 4, 5), "float64")
    buffer = np.zeros((5, 3))
    out = as_tensor(opdispatch, buffer.T)  # [3, 5], column-major
    aten.sum.IntList_out(as_tensor(opdispatch, a), [1], out=out)
    assert out.strides == (1, 3)  # written in place, not replaced
    np.testing.assert_allclose(buffer.T, a.sum(1))
    aten.amax.out(as_tensor(opdispatch, a), [1], out=out)
    np.testing.assert_allclose(buffer.T, a.max(1))


def test_out_must_not_share_memory_with_the_input(opdispatch, aten):
    x = opdispatch.tensor([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(Exception, match="^sum: out= shares memory with the input"):
        aten.sum.IntList_out(x, [0], keepdim=True, out=x)


def test_sum_of_empty_and_zero_dim_tensors(opdispatch, aten):
    empty = opdispatch.zeros([0, 3])
    np.testing.assert_array_equal(aten.sum.dim_IntList(empty, [0]).numpy(), np.zeros(3, np.float32))
    assert aten.sum.dim_IntList(empty, [1]).shape == (0,)
    assert aten.sum.default(empty).numpy() == 0
    assert aten.sum.dim_IntList(opdispatch.zeros([0], dtype=opdispatch.int32), None).numpy().dtype == np.int64
    scalar = opdispatch.tensor(2.5)
    for dims in (None, [], [0], [-1]):
        r = aten.sum.dim_IntList(scalar, dims)
        assert r.shape == () and r.numpy() == 2.5
    assert aten.sum.dim_IntList(scalar, [0], keepdim=True).shape == ()
    with pytest.raises(Exception, match="^sum: dimension 1 is out of range for a 0-d tensor"):
        aten.sum.dim_IntList(scalar, [1])


def test_sum_dim_errors_name_the_operator(opdispatch, aten):
    x = opdispatch.zeros([2, 3])
    with pytest.raises(Exception, match=r"^sum: dimension 0 appears more than once in the dims \[0, -2\]"):
        aten.sum.dim_IntList(x, [0, -2])
    with pytest.raises(Exception, match=r"^sum: dimension 2 is out of range for a 2-d tensor"):
        aten.sum.dim_IntList(x, [2])
    with pytest.raises(Exception, match=r"^mean: dimension -3 is out of range"):
        aten.mean.dim(x, [-3])
    with pytest.raises(Exception, match=r"^amax: dimension 1 appears more than once"):
        aten.amax.default(x, [1, 1])


# ----- mean -----

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,dims", DIM_CASES)
@pytest.mark.parametrize("keepdim", [False, True])
def test_mean_matches_numpy(opdispatch, aten, rng, dtype, shape, dims, keepdim):
    a = random_array(rng, shape, dtype)
    result = aten.mean.dim(as_tensor(opdispatch, a), dims, keepdim).numpy()
    expected = np.asarray(a.mean(axis=axes(dims, a.ndim), keepdims=keepdim, dtype=np.float64)).astype(dtype)
    check_close(result, expected, dtype)


def test_mean_overloads_and_dtype(opdispatch, aten, rng):
    a = random_array(rng, (4, 6), "int32")
    x = as_tensor(opdispatch, a)
    for call in (lambda **kw: aten.mean.default(x, **kw), lambda **kw: aten.mean.dim(x, None, **kw)):
        with pytest.raises(Exception, match="^mean: could not infer output dtype"):
            call()
        r = call(dtype=opdispatch.float64)
        assert r.shape == () and r.numpy().dtype == np.float64
        np.testing.assert_allclose(r.numpy(), a.mean())
    f = random_array(rng, (4, 6), "float32")
    r = aten.mean.dim(as_tensor(opdispatch, f), [0], dtype=opdispatch.float64)
    np.testing.assert_allclose(r.numpy(), f.astype(np.float64).mean(0), rtol=1e-12)
    with pytest.raises(Exception, match="^mean: could not infer output dtype"):
        aten.mean.dim(as_tensor(opdispatch, f), [0], dtype=opdispatch.int64)
    out = opdispatch.empty([1], dtype=opdispatch.float32)
    aten.mean.out(as_tensor(opdispatch, f), [1], keepdim=True, out=out)
    assert out.shape == (4, 1)
    np.testing.assert_allclose(out.numpy(), f.mean(1, keepdims=True), rtol=1e-5)
    with pytest.raises(Exception, match="^mean: out= must have a floating point dtype"):
        aten.mean.out(as_tensor(opdispatch, f), [1], out=opdispatch.empty([4], dtype=opdispatch.int64))
    dtype_out = opdispatch.empty([0], dtype=opdispatch.float32)
    aten.mean.dtype_out(as_tensor(opdispatch, f), out=dtype_out)  # autogen from the composite
    np.testing.assert_allclose(dtype_out.numpy(), f.mean(), rtol=1e-5)


def test_mean_of_empty_is_nan_and_of_zero_dim_is_the_value(opdispatch, aten):
    assert np.isnan(aten.mean.default(opdispatch.zeros([0])).numpy())
    r = aten.mean.dim(opdispatch.zeros([0, 2], dtype=opdispatch.float64), [0]).numpy()
    assert r.shape == (2,) and np.isnan(r).all()
    assert aten.mean.dim(opdispatch.zeros([2, 0]), [0]).shape == (0,)
    assert aten.mean.dim(opdispatch.tensor(3.0), [-1]).numpy() == 3.0


# ----- amax / amin -----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,dims", DIM_CASES)
@pytest.mark.parametrize("keepdim", [False, True])
def test_amax_amin_match_numpy(opdispatch, aten, rng, dtype, shape, dims, keepdim):
    a = random_array(rng, shape, dtype)
    x = as_tensor(opdispatch, a)
    dim = dims or []  # int[1] dim=[]: [] reduces everything
    ax = axes(dims, a.ndim)
    check_close(aten.amax.default(x, dim, keepdim).numpy(), np.asarray(np.amax(a, axis=ax, keepdims=keepdim)), dtype)
    check_close(aten.amin.default(x, dim, keepdim).numpy(), np.asarray(np.amin(a, axis=ax, keepdims=keepdim)), dtype)


def test_amax_amin_propagate_nan(opdispatch, aten):
    a = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, -np.inf], [np.nan, 0.0, np.nan]])
    x = as_tensor(opdispatch, a)
    for dims in ([0], [1], []):
        ax = axes(dims, 2)
        np.testing.assert_array_equal(aten.amax.default(x, dims).numpy(), np.amax(a, axis=ax))
        np.testing.assert_array_equal(aten.amin.default(x, dims).numpy(), np.amin(a, axis=ax))
    infinite = np.full((2, 300), -np.inf, np.float32)
    np.testing.assert_array_equal(aten.amax.default(as_tensor(opdispatch, infinite)).numpy(), -np.inf)
    np.testing.assert_array_equal(aten.amin.default(as_tensor(opdispatch, -infinite), [1]).numpy(), [np.inf, np.inf])
    np.testing.assert_array_equal(aten.argmax.default(as_tensor(opdispatch, infinite), 1).numpy(), [0, 0])


def test_amax_out_and_errors(opdispatch, aten, rng):
    a = random_array(rng, (3, 4), "int32")
    out = opdispatch.empty([0], dtype=opdispatch.int32)
    aten.amin.out(as_tensor(opdispatch, a), [0], out=out)
    np.testing.assert_array_equal(out.numpy(), a.min(0))
    with pytest.raises(Exception, match="^amax: expected out= to have dtype int32, but got int64"):
        aten.amax.out(as_tensor(opdispatch, a), [0], out=opdispatch.empty([4], dtype=opdispatch.int64))
    empty = opdispatch.zeros([0, 3])
    with pytest.raises(Exception, match=r"^amax: cannot reduce over dimension 0 of size 0"):
        aten.amax.default(empty, [0])
    with pytest.raises(Exception, match=r"^amin: cannot reduce over dimension 0 of size 0"):
        aten.amin.default(empty)
    assert aten.amax.default(empty, [1]).shape == (0,)
    scalar = opdispatch.tensor(-2, dtype=opdispatch.int64)
    assert aten.amax.default(scalar).numpy() == -2
    assert aten.amin.default(scalar, [0], True).shape == ()


# ----- argmax -----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,dim", [((7,), None), ((7,), 0), ((4, 6), None), ((4, 6), 0), ((4, 6), -1),
                                       ((3, 4, 5), 1), ((3, 4, 5), None), ((2, 3, 4, 5), 2), ((5, 300), 1)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_argmax_matches_numpy(opdispatch, aten, rng, dtype, shape, dim, keepdim):
    a = random_array(rng, shape, dtype)  # ints and bools have ties: the first maximum wins
    result = aten.argmax.default(as_tensor(opdispatch, a), dim, keepdim).numpy()
    expected = np.argmax(a, axis=dim, keepdims=keepdim)
    assert result.dtype == np.int64
    np.testing.assert_array_equal(result, expected)


def test_argmax_of_noncontiguous_flattens_in_logical_order(opdispatch, aten, rng):
    a = random_array(rng, (5, 8), "float32")
    for view in (a.T, a[:, 1::3], a.reshape(5, 2, 4).transpose(2, 0, 1)):
        assert aten.argmax.default(as_tensor(opdispatch, view)).numpy() == np.argmax(view)
        for dim in range(view.ndim):
            np.testing.assert_array_equal(aten.argmax.default(as_tensor(opdispatch, view), dim).numpy(),
                                          np.argmax(view, axis=dim))


def test_argmax_of_long_rows_finds_the_first_maximum_and_nan(opdispatch, aten, rng):
    a = rng.standard_normal((3, 5000))
    a[0, 4000] = a[0, 4500] = 10.0  # a tie in a later block
    a[1, 10] = a[1, 3000] = np.nan  # the first nan wins
    a[2, 2500] = np.inf
    for dtype in FLOATS:
        x = as_tensor(opdispatch, a.astype(dtype))
        np.testing.assert_array_equal(aten.argmax.default(x, 1).numpy(), [4000, 10, 2500])
        assert aten.argmax.default(x).numpy() == 5010
        np.testing.assert_array_equal(aten.amax.default(x, [1]).numpy(), np.amax(a.astype(dtype), axis=1))


def test_argmax_nan_ties_empty_zero_dim_and_out(opdispatch, aten):
    a = np.array([[1.0, np.nan, 7.0, np.nan], [2.0, 2.0, 1.0, 0.0]])
    x = as_tensor(opdispatch, a)
    np.testing.assert_array_equal(aten.argmax.default(x, 1).numpy(), [1, 0])  # first nan, first tie
    assert aten.argmax.default(x).numpy() == 1
    assert aten.argmax.default(opdispatch.tensor(5.0)).numpy() == 0
    assert aten.argmax.default(opdispatch.tensor(5.0), 0, True).shape == ()
    assert aten.argmax.default(x, None, True).shape == (1, 1)
    with pytest.raises(Exception, match="^argmax: cannot reduce over dimension 0 of size 0"):
        aten.argmax.default(opdispatch.zeros([0]))
    assert aten.argmax.default(opdispatch.zeros([0, 3]), 1).shape == (0,)
    with pytest.raises(Exception, match="^argmax: dimension 2 is out of range"):
        aten.argmax.default(x, 2)
    out = opdispatch.empty([9], dtype=opdispatch.int64)
    aten.argmax.out(x, 0, out=out)
    np.testing.assert_array_equal(out.numpy(), np.argmax(a, axis=0))
    with pytest.raises(Exception, match="^argmax: expected out= to have dtype int64, but got float64"):
        aten.argmax.out(x, 0, out=opdispatch.empty([4], dtype=opdispatch.float64))


# ----- Meta tensors and methods -----

def test_meta_tensors_get_shapes_and_dtypes(opdispatch, aten):
    def meta(shape, dtype="float32"):
        return aten.empty.memory_format(shape, dtype=dtype_of(opdispatch, dtype), device="meta")

    cases = [
        (aten.sum.dim_IntList(meta([2, 3, 4], "int32"), [1], True), (2, 1, 4), opdispatch.int64),
        (aten.sum.default(meta([2, 3])), (), opdispatch.float32),
        (aten.mean.dim(meta([2, 3, 4]), [0, 2]), (3,), opdispatch.float32),
        (aten.mean.default(meta([2, 3], "int64"), dtype=opdispatch.float64), (), opdispatch.float64),
        (aten.amax.default(meta([2, 3, 4], "int64"), [-1]), (2, 3), opdispatch.int64),
        (aten.amin.default(meta([2, 3])), (), opdispatch.float32),
        (aten.argmax.default(meta([2, 3, 4]), 1, True), (2, 1, 4), opdispatch.int64),
        (aten.argmax.default(meta([2, 3])), (), opdispatch.int64),
    ]
    for result, shape, dtype in cases:
        assert result.device == "meta"
        assert result.shape == shape
        assert result.dtype == dtype
    with pytest.raises(Exception, match="^mean: could not infer output dtype"):
        aten.mean.default(meta([2], "int32"))
    with pytest.raises(Exception, match="^amax: cannot reduce over dimension 0 of size 0"):
        aten.amax.default(meta([0, 2]))


def test_method_variants(opdispatch, rng):
    a = random_array(rng, (3, 4), "float64")
    x = as_tensor(opdispatch, a)
    # The package always installs the methods the yaml declares: their absence is a bug, not a skip.
    assert hasattr(x, "amax"), "Tensor.amax is missing: the opdispatch package did not install the Tensor methods"
    np.testing.assert_allclose(x.sum().numpy(), a.sum())
    np.testing.assert_allclose(x.sum([1], True).numpy(), a.sum(1, keepdims=True))
    np.testing.assert_allclose(x.mean([0]).numpy(), a.mean(0))
    np.testing.assert_allclose(x.amax([1]).numpy(), a.max(1))
    np.testing.assert_allclose(x.amin().numpy(), a.min())
    np.testing.assert_array_equal(x.argmax(1).numpy(), a.argmax(1))
