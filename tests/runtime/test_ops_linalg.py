"""Matrix products (mm, bmm, addmm / addmm_, matmul) against numpy on random inputs: every
overload, shapes that cross the CPU kernel's tile and cache-block edges, transposed,
sliced and broadcast (stride-0) operands, every supported dtype, empty matrices, out=
resizing and dtype checks, aliasing outputs, Meta shapes and error messages. The same results
whether float products run through a BLAS (scons --blas=auto|on) or the hand-written kernel
(--blas=off; tests/scons/test_blas_build.py runs this module on such a build)."""
import numpy as np
import pytest

NUMERIC = ["int32", "int64", "float32", "float64"]

# (M, K, N): tiny, thin (matrix-vector), tile edges, and more than one cache block in K and M.
MM_SHAPES = [(1, 1, 1), (2, 3, 4), (5, 1, 7), (7, 9, 1), (1, 20, 30), (13, 17, 19), (37, 53, 29),
             (100, 300, 70), (130, 40, 200)]


@pytest.fixture
def rng():
    return np.random.default_rng(99)


def random_array(rng, shape, dtype):
    if dtype.startswith("int"):
        return np.asarray(rng.integers(-9, 10, size=shape), dtype=dtype)
    return np.asarray(rng.standard_normal(shape), dtype=dtype)


def as_tensor(opdispatch, array):
    return opdispatch.from_numpy(array)


def reference_matmul(a, b):
    """numpy's product computed wide, then cast back (float32 gets a float64 reference)."""
    wide = np.int64 if a.dtype.kind == "i" else np.float64
    return np.matmul(a.astype(wide), b.astype(wide)).astype(a.dtype)


def check_close(actual, expected):
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if actual.dtype == np.float32:
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4)
    elif actual.dtype == np.float64:
        np.testing.assert_allclose(actual, expected, rtol=1e-10, atol=1e-10)
    else:
        np.testing.assert_array_equal(actual, expected)


def meta(opdispatch, shape, dtype=None):
    return opdispatch.ops.aten.empty.memory_format(shape, dtype=dtype or opdispatch.float32, device="meta")


# ----- mm -----

@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("m,k,n", MM_SHAPES)
def test_mm_matches_numpy(opdispatch, aten, rng, dtype, m, k, n):
    a, b = random_array(rng, (m, k), dtype), random_array(rng, (k, n), dtype)
    check_close(aten.mm.default(as_tensor(opdispatch, a), as_tensor(opdispatch, b)).numpy(), reference_matmul(a, b))


LAYOUTS = [
    ("transposed_a", lambda a: np.ascontiguousarray(a.T).T, lambda b: b),
    ("transposed_b", lambda a: a, lambda b: np.ascontiguousarray(b.T).T),
    ("both_transposed", lambda a: np.ascontiguousarray(a.T).T, lambda b: np.ascontiguousarray(b.T).T),
    ("sliced", lambda a: np.repeat(a, 2, axis=1)[:, ::2], lambda b: np.repeat(b, 3, axis=0)[::3]),
    ("column_stride", lambda a: a, lambda b: np.repeat(b, 2, axis=1)[:, ::2]),
]


@pytest.mark.parametrize("name,make_a,make_b", LAYOUTS, ids=[c[0] for c in LAYOUTS])
@pytest.mark.parametrize("dtype", ["int64", "float32", "float64"])
@pytest.mark.parametrize("m,k,n", [(3, 4, 5), (37, 53, 29), (100, 300, 70)])
def test_mm_of_noncontiguous_operands(opdispatch, aten, rng, name, make_a, make_b, dtype, m, k, n):
    a, b = make_a(random_array(rng, (m, k), dtype)), make_b(random_array(rng, (k, n), dtype))
    x, y = as_tensor(opdispatch, a), as_tensor(opdispatch, b)
    assert not (x.is_contiguous() and y.is_contiguous())
    check_close(aten.mm.default(x, y).numpy(), reference_matmul(a, b))


def test_mm_of_empty_matrices(opdispatch, aten):
    zeros_k = aten.mm.default(opdispatch.zeros([3, 0]), opdispatch.zeros([0, 4]))
    np.testing.assert_array_equal(zeros_k.numpy(), np.zeros((3, 4), np.float32))  # an empty sum is 0
    assert aten.mm.default(opdispatch.zeros([0, 2]), opdispatch.zeros([2, 5])).shape == (0, 5)
    assert aten.mm.default(opdispatch.zeros([4, 2]), opdispatch.zeros([2, 0])).shape == (4, 0)


def test_mm_out_resizes_checks_dtype_and_allows_aliasing(opdispatch, aten, rng):
    a, b = random_array(rng, (4, 4), "float64"), random_array(rng, (4, 6), "float64")
    out = opdispatch.zeros([1], dtype=opdispatch.float64)
    returned = aten.mm.out(as_tensor(opdispatch, a), as_tensor(opdispatch, b), out=out)
    assert out.shape == (4, 6) and returned.is_alias_of(out)
    check_close(out.numpy(), a @ b)
    with pytest.raises(Exception, match="^mm: expected out= to have dtype float64, but got float32"):
        aten.mm.out(as_tensor(opdispatch, a), as_tensor(opdispatch, b), out=opdispatch.zeros([4, 6]))
    square = a.copy()
    x = as_tensor(opdispatch, square)
    aten.mm.out(x, as_tensor(opdispatch, a), out=x)  # out is an input: computed before writing
    check_close(square, a @ a)
    column_major = np.zeros((6, 4))
    aten.mm.out(as_tensor(opdispatch, a), as_tensor(opdispatch, b), out=as_tensor(opdispatch, column_major.T))
    check_close(column_major.T, a @ b)


def test_mm_errors_name_the_operator(opdispatch, aten):
    a, b = opdispatch.zeros([2, 3]), opdispatch.zeros([4, 5])
    with pytest.raises(Exception, match=r"^mm: mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"):
        aten.mm.default(a, b)
    with pytest.raises(Exception, match="^mm: expected mat1 and mat2 to have the same dtype, but got float32 and float64"):
        aten.mm.default(a, opdispatch.zeros([3, 2], dtype=opdispatch.float64))
    with pytest.raises(Exception, match="^mm: bool tensors are not supported"):
        aten.mm.default(opdispatch.zeros([2, 2], dtype=opdispatch.bool), opdispatch.zeros([2, 2], dtype=opdispatch.bool))
    with pytest.raises(Exception, match=r"^mm: self must be a 2-d tensor, but got a 1-d tensor of shape \[3\]"):
        aten.mm.default(opdispatch.zeros([3]), b)
    with pytest.raises(Exception, match=r"^mm: mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"):
        aten.mm.default(meta(opdispatch, [2, 3]), meta(opdispatch, [4, 5]))


# ----- bmm -----

@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("batch,m,k,n", [(1, 2, 3, 4), (3, 5, 7, 2), (4, 33, 20, 17), (0, 2, 3, 4), (2, 3, 0, 4)])
def test_bmm_matches_numpy(opdispatch, aten, rng, dtype, batch, m, k, n):
    a, b = random_array(rng, (batch, m, k), dtype), random_array(rng, (batch, k, n), dtype)
    check_close(aten.bmm.default(as_tensor(opdispatch, a), as_tensor(opdispatch, b)).numpy(), reference_matmul(a, b))


def test_bmm_of_permuted_and_broadcast_batches(opdispatch, aten, rng):
    a = random_array(rng, (5, 3, 4), "float64").transpose(1, 0, 2)  # [3, 5, 4], batch not outermost
    shared = random_array(rng, (4, 6), "float64")
    b = np.lib.stride_tricks.as_strided(shared, (3, 4, 6), (0,) + shared.strides, writeable=True)  # stride-0 batch
    check_close(aten.bmm.default(as_tensor(opdispatch, a), as_tensor(opdispatch, b)).numpy(), a @ b)
    out = opdispatch.zeros([2], dtype=opdispatch.float64)
    aten.bmm.out(as_tensor(opdispatch, a), as_tensor(opdispatch, b), out=out)
    check_close(out.numpy(), a @ b)


def test_bmm_errors_and_meta(opdispatch, aten):
    with pytest.raises(Exception, match="^bmm: self and mat2 must have the same batch size"):
        aten.bmm.default(opdispatch.zeros([2, 3, 4]), opdispatch.zeros([3, 4, 5]))
    with pytest.raises(Exception, match=r"^bmm: batch1 and batch2 shapes cannot be multiplied \(2x3x4 and 2x5x5\)"):
        aten.bmm.default(opdispatch.zeros([2, 3, 4]), opdispatch.zeros([2, 5, 5]))
    with pytest.raises(Exception, match="^bmm: self must be a 3-d tensor"):
        aten.bmm.default(opdispatch.zeros([3, 4]), opdispatch.zeros([2, 4, 5]))
    r = aten.bmm.default(meta(opdispatch, [7, 2, 3]), meta(opdispatch, [7, 3, 9]))
    assert r.device == "meta" and r.shape == (7, 2, 9)


# ----- addmm -----

@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("self_shape", [(6, 5), (5,), (1, 5), (6, 1), ()])
def test_addmm_matches_numpy(opdispatch, aten, rng, dtype, self_shape):
    bias = random_array(rng, self_shape, dtype)
    a, b = random_array(rng, (6, 40), dtype), random_array(rng, (40, 5), dtype)
    beta, alpha = (3, -2) if dtype.startswith("int") else (0.5, 1.5)
    result = aten.addmm.default(as_tensor(opdispatch, bias), as_tensor(opdispatch, a), as_tensor(opdispatch, b),
                                beta=beta, alpha=alpha)
    wide = np.float64 if dtype.startswith("float") else np.int64
    expected = (beta * bias.astype(wide) + alpha * (a.astype(wide) @ b.astype(wide))).astype(dtype)
    check_close(result.numpy(), expected)
    plain = aten.addmm.default(as_tensor(opdispatch, bias), as_tensor(opdispatch, a), as_tensor(opdispatch, b))
    check_close(plain.numpy(), (bias.astype(wide) + a.astype(wide) @ b.astype(wide)).astype(dtype))


def test_addmm_beta_zero_ignores_self(opdispatch, aten, rng):
    bias = np.full((3, 4), np.nan)
    a, b = random_array(rng, (3, 2), "float64"), random_array(rng, (2, 4), "float64")
    r = aten.addmm.default(as_tensor(opdispatch, bias), as_tensor(opdispatch, a), as_tensor(opdispatch, b),
                           beta=0, alpha=2)
    check_close(r.numpy(), 2 * (a @ b))
    x = as_tensor(opdispatch, bias)
    aten.addmm_.default(x, as_tensor(opdispatch, a), as_tensor(opdispatch, b), beta=0.0)
    check_close(bias, a @ b)


def test_addmm_inplace_and_out(opdispatch, aten, rng):
    a, b = random_array(rng, (20, 30), "float32"), random_array(rng, (30, 10), "float32")
    storage = random_array(rng, (10, 20), "float32")
    expected = (2 * storage.T.astype(np.float64) + 0.5 * (a.astype(np.float64) @ b)).astype(np.float32)
    self_t = as_tensor(opdispatch, storage.T)  # a transposed self, written in place
    returned = aten.addmm_.default(self_t, as_tensor(opdispatch, a), as_tensor(opdispatch, b), beta=2, alpha=0.5)
    assert returned.is_alias_of(self_t) and returned.strides == self_t.strides
    check_close(storage.T, expected)
    bias = random_array(rng, (10,), "float32")
    out = opdispatch.zeros([3], dtype=opdispatch.float32)
    aten.addmm.out(as_tensor(opdispatch, bias), as_tensor(opdispatch, a), as_tensor(opdispatch, b), out=out)
    check_close(out.numpy(), (bias.astype(np.float64) + a.astype(np.float64) @ b).astype(np.float32))
    with pytest.raises(Exception, match="^addmm: expected out= to have dtype float32, but got int64"):
        aten.addmm.out(as_tensor(opdispatch, bias), as_tensor(opdispatch, a), as_tensor(opdispatch, b),
                       out=opdispatch.zeros([20, 10], dtype=opdispatch.int64))
    with pytest.raises(Exception, match=r"output with shape \[10\] doesn't match the broadcast shape \[20, 10\]"):
        aten.addmm_.default(as_tensor(opdispatch, bias), as_tensor(opdispatch, a), as_tensor(opdispatch, b))


def test_addmm_errors_and_meta(opdispatch, aten):
    a, b = opdispatch.zeros([2, 3]), opdispatch.zeros([3, 4])
    with pytest.raises(Exception, match=r"^addmm: self of shape \[3\] cannot be broadcast to the product's shape \[2, 4\]"):
        aten.addmm.default(opdispatch.zeros([3]), a, b)
    with pytest.raises(Exception, match=r"^addmm: mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)"):
        aten.addmm.default(opdispatch.zeros([2, 4]), a, a)
    with pytest.raises(Exception, match="^addmm: expected self and mat1 to have the same dtype"):
        aten.addmm.default(opdispatch.zeros([2, 4], dtype=opdispatch.float64), a, b)
    ints = opdispatch.zeros([2, 2], dtype=opdispatch.int64)
    with pytest.raises(Exception, match="^addmm: alpha is 0.5 but the tensors are int64"):
        aten.addmm.default(ints, ints, ints, alpha=0.5)
    r = aten.addmm.default(meta(opdispatch, [4]), meta(opdispatch, [2, 3]), meta(opdispatch, [3, 4]))
    assert r.device == "meta" and r.shape == (2, 4)


# ----- float products as a BLAS takes them (and the hand-written kernel without one) -----

def padded_columns(matrix, extra):
    """``matrix`` as a view whose rows are ``extra`` elements longer than it (a leading dimension past its width)."""
    wide = np.zeros((matrix.shape[0], matrix.shape[1] + extra), dtype=matrix.dtype)
    wide[:, :matrix.shape[1]] = matrix
    return wide[:, :matrix.shape[1]]


def stride0_rows(matrix):
    """Every row is the first one, at stride 0 (no BLAS layout: copied first)."""
    return np.lib.stride_tricks.as_strided(matrix, matrix.shape, (0, matrix.strides[1]), writeable=True)


BLAS_LAYOUTS = [
    ("contiguous", lambda a: a, lambda b: b),
    ("transposed", lambda a: np.ascontiguousarray(a.T).T, lambda b: np.ascontiguousarray(b.T).T),
    ("padded_rows", lambda a: padded_columns(a, 3), lambda b: padded_columns(b, 5)),
    ("padded_transposed", lambda a: padded_columns(a.T, 2).T, lambda b: padded_columns(b.T, 7).T),
    ("strided", lambda a: np.repeat(a, 2, axis=1)[:, ::2], lambda b: np.repeat(b, 3, axis=0)[::3][:, ::1]),
    ("stride0_rows", stride0_rows, lambda b: np.repeat(b, 2, axis=1)[:, ::2]),
]
BLAS_SHAPES = [(1, 64, 33), (64, 1, 70), (70, 65, 1), (1, 1, 9), (129, 257, 65), (64, 256, 512)]


@pytest.mark.parametrize("name,make_a,make_b", BLAS_LAYOUTS, ids=[c[0] for c in BLAS_LAYOUTS])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("m,k,n", BLAS_SHAPES)
def test_float_mm_of_every_layout(opdispatch, aten, rng, name, make_a, make_b, dtype, m, k, n):
    a, b = make_a(random_array(rng, (m, k), dtype)), make_b(random_array(rng, (k, n), dtype))
    check_close(aten.mm.default(as_tensor(opdispatch, a), as_tensor(opdispatch, b)).numpy(), reference_matmul(a, b))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_mm_of_a_large_product(opdispatch, aten, rng, dtype):
    a, b = random_array(rng, (256, 512), dtype), random_array(rng, (512, 512), dtype)
    check_close(aten.mm.default(as_tensor(opdispatch, a), as_tensor(opdispatch, b)).numpy(), reference_matmul(a, b))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_bmm_batches_of_mixed_layouts_into_a_transposed_out(opdispatch, aten, rng, dtype):
    a = random_array(rng, (5, 40, 33), dtype).transpose(0, 2, 1)            # [5, 33, 40], each batch transposed
    b = random_array(rng, (40, 5, 70), dtype).transpose(1, 0, 2)            # [5, 40, 70], batch not outermost
    expected = reference_matmul(a, b)
    check_close(aten.bmm.default(as_tensor(opdispatch, a), as_tensor(opdispatch, b)).numpy(), expected)
    storage = np.zeros((5, 70, 33), dtype=dtype)
    aten.bmm.out(as_tensor(opdispatch, a), as_tensor(opdispatch, b), out=as_tensor(opdispatch, storage.transpose(0, 2, 1)))
    check_close(storage.transpose(0, 2, 1), expected)
    shared = random_array(rng, (40, 70), dtype)
    broadcast = np.lib.stride_tricks.as_strided(shared, (5, 40, 70), (0,) + shared.strides, writeable=True)
    check_close(aten.bmm.default(as_tensor(opdispatch, a), as_tensor(opdispatch, broadcast)).numpy(),
                reference_matmul(a, broadcast))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("self_shape", [(33, 70), (70,), (33, 1), ()])
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 1.5), (-2, 0.25), (1, 0)])
def test_float_addmm_beta_alpha_and_transposed_operands(opdispatch, aten, rng, dtype, self_shape, beta, alpha):
    bias = random_array(rng, self_shape, dtype)
    a = np.ascontiguousarray(random_array(rng, (40, 33), dtype)).T          # [33, 40], transposed
    b = padded_columns(random_array(rng, (40, 70), dtype), 4)
    expected = (beta * bias.astype(np.float64) + alpha * (a.astype(np.float64) @ b.astype(np.float64))).astype(dtype)
    result = aten.addmm.default(as_tensor(opdispatch, bias), as_tensor(opdispatch, a), as_tensor(opdispatch, b),
                                beta=beta, alpha=alpha)
    check_close(result.numpy(), expected)
    storage = np.zeros((70, 33), dtype=dtype)
    aten.addmm.out(as_tensor(opdispatch, bias), as_tensor(opdispatch, a), as_tensor(opdispatch, b), beta=beta,
                   alpha=alpha, out=as_tensor(opdispatch, storage.T))
    check_close(storage.T, expected)


def test_int64_products_stay_exact(opdispatch, aten, rng):
    """Integer products never go through a float BLAS: sums past 2**53 are exact."""
    a = rng.integers(2**25, 2**26, size=(9, 64), dtype=np.int64)
    b = rng.integers(2**25, 2**26, size=(64, 11), dtype=np.int64)
    expected = a @ b
    assert expected.max() > 2**53
    np.testing.assert_array_equal(aten.mm.default(as_tensor(opdispatch, a), as_tensor(opdispatch, b)).numpy(), expected)
    np.testing.assert_array_equal(
        aten.bmm.default(as_tensor(opdispatch, a[None]), as_tensor(opdispatch, b.T.copy().T[None])).numpy(), expected[None])


# ----- matmul -----

MATMUL_SHAPES = [
    ((4,), (4,)),
    ((3, 4), (4,)),
    ((4,), (4, 5)),
    ((3, 4), (4, 5)),
    ((2, 3, 4), (4,)),
    ((2, 3, 4), (4, 5)),
    ((4,), (2, 4, 5)),
    ((3, 4), (2, 4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((1, 3, 4), (6, 1, 4, 2)),
    ((2, 3, 0), (0, 5)),
    ((0, 3, 4), (4, 2)),
    ((3, 2, 8, 9), (3, 1, 9, 1)),
]


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("shape_a,shape_b", MATMUL_SHAPES)
def test_matmul_matches_numpy(opdispatch, aten, rng, dtype, shape_a, shape_b):
    a, b = random_array(rng, shape_a, dtype), random_array(rng, shape_b, dtype)
    expected = reference_matmul(a, b)
    result = aten.matmul.default(as_tensor(opdispatch, a), as_tensor(opdispatch, b))
    check_close(np.asarray(result.numpy()), np.asarray(expected))
    out = opdispatch.zeros([1], dtype=getattr(opdispatch, dtype))
    aten.matmul.out(as_tensor(opdispatch, a), as_tensor(opdispatch, b), out=out)
    check_close(np.asarray(out.numpy()), np.asarray(expected))
    m = aten.matmul.default(meta(opdispatch, list(shape_a)), meta(opdispatch, list(shape_b)))
    assert m.device == "meta" and m.shape == np.shape(expected)


def test_matmul_of_noncontiguous_operands(opdispatch, aten, rng):
    a = random_array(rng, (4, 5, 3), "float64").transpose(2, 0, 1)  # [3, 4, 5]
    b = random_array(rng, (6, 5), "float64").T                      # [5, 6]
    v = random_array(rng, (10,), "float64")[::2]                    # [5], stride 2
    for x, y in ((a, b), (a, v), (b.T, v[:, None].T.ravel()), (a[:, :2], a.transpose(0, 2, 1))):
        check_close(aten.matmul.default(as_tensor(opdispatch, x), as_tensor(opdispatch, y)).numpy(), np.matmul(x, y))


def test_matmul_errors_name_the_operator(opdispatch, aten):
    with pytest.raises(Exception, match=r"^matmul: both arguments need at least 1 dimension, but they have 0 and 2"):
        aten.matmul.default(opdispatch.tensor(1.0), opdispatch.zeros([2, 2]))
    with pytest.raises(Exception, match=r"^matmul: shapes \[3\] and \[2\] cannot be multiplied \(3 != 2\)"):
        aten.matmul.default(opdispatch.zeros([3]), opdispatch.zeros([2]))
    with pytest.raises(Exception, match=r"^matmul: shapes \[2, 3, 4\] and \[5, 6\] cannot be multiplied \(4 != 5\)"):
        aten.matmul.default(opdispatch.zeros([2, 3, 4]), opdispatch.zeros([5, 6]))
    with pytest.raises(Exception, match=r"^matmul: the batch dimensions of shapes \[2, 3, 4\] and \[3, 4, 5\] cannot be"):
        aten.matmul.default(opdispatch.zeros([2, 3, 4]), opdispatch.zeros([3, 4, 5]))
    with pytest.raises(Exception, match="^matmul: expected both arguments to have the same dtype, but got float32 and int64"):
        aten.matmul.default(opdispatch.zeros([2, 2]), opdispatch.zeros([2, 2], dtype=opdispatch.int64))
    with pytest.raises(Exception, match="^matmul: expected out= to have dtype float32, but got float64"):
        aten.matmul.out(opdispatch.zeros([2, 3, 2]), opdispatch.zeros([2]), out=opdispatch.zeros([2, 3], dtype=opdispatch.float64))


def test_method_variants(opdispatch, rng):
    a, b = random_array(rng, (3, 4), "float64"), random_array(rng, (4, 2), "float64")
    x, y = as_tensor(opdispatch, a), as_tensor(opdispatch, b)
    # The package always installs the methods the yaml declares: their absence is a bug, not a skip.
    assert hasattr(x, "addmm_"), "Tensor.addmm_ is missing: the opdispatch package did not install the Tensor methods"
    check_close(x.mm(y).numpy(), a @ b)
    check_close(x.matmul(y).numpy(), a @ b)
    check_close(as_tensor(opdispatch, a[None]).bmm(as_tensor(opdispatch, b[None])).numpy(), (a @ b)[None])
    bias = np.ones((3, 2))
    check_close(as_tensor(opdispatch, bias).addmm(x, y, beta=2).numpy(), 2 + a @ b)
    z = as_tensor(opdispatch, bias)
    z.addmm_(x, y)
    check_close(bias, 1 + a @ b)
