"""Each path the CUDA loops choose, on shapes that select it, against the CPU loops: the
vectorised contiguous kernel (aligned, with a tail, misaligned), the strided kernel in 32-bit
and in 64-bit index math, reductions along rows and columns with and without a second pass,
log_softmax by warp, by block and across interleaved rows, the tiled transposing copy, and
cuBLAS' layouts (test_cuda_ops.py covers every operator on small shapes). Needs a GPU."""
import os

import numpy as np
import pytest
from cuda_compare import DEVICE, compare, host, on_device, random_array

FLOATING = ["float32", "float64"]


# ----- elementwise -----

@pytest.mark.parametrize("numel", [1, 3, 4, 1023, 1024, 1025, 1 << 20, (1 << 20) + 3])
def test_contiguous_adds_cover_every_tail(cuda, numel):
    rng = np.random.default_rng(numel)
    compare(cuda, cuda.add, random_array(rng, (numel,), "float32"), random_array(rng, (numel,), "float32"))


@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "float64"])
def test_contiguous_kernel_in_every_dtype(cuda, dtype):
    rng = np.random.default_rng(1)
    a, b = random_array(rng, (4099,), dtype), random_array(rng, (4099,), dtype)
    compare(cuda, cuda.mul, a, b)
    compare(cuda, cuda.eq, a, b)          # bool out from other inputs
    compare(cuda, cuda.maximum, a, b)


def test_misaligned_views_take_the_element_path(cuda):
    rng = np.random.default_rng(2)
    a, b = random_array(rng, (10001,), "float32"), random_array(rng, (10001,), "float32")
    compare(cuda, lambda x, y: cuda.add(x[1:], y[:-1]), a, b)
    compare(cuda, lambda x, y: cuda.sub(x[3:], y[2:-1]), a, b)


def test_a_cpu_number_joins_the_contiguous_kernel(cuda):
    a = random_array(np.random.default_rng(3), (5000,), "float32")
    compare(cuda, lambda x: cuda.mul(x, cuda.tensor(2.5)), a)
    compare(cuda, lambda x: cuda.add(x, 3), a)
    compare(cuda, lambda x: cuda.where(cuda.gt(x, 0), x, cuda.tensor(0.0)), a)


def test_mixed_dtypes_convert_on_the_strided_path(cuda):
    rng = np.random.default_rng(4)
    compare(cuda, cuda.add, random_array(rng, (3001,), "int32"), random_array(rng, (3001,), "float32"))


def test_broadcast_and_transposed_operands_over_many_dimensions(cuda):
    rng = np.random.default_rng(5)
    a, b = random_array(rng, (7, 1, 9, 1, 11), "float32"), random_array(rng, (5, 1, 3, 11), "float32")
    compare(cuda, cuda.add, a, b)
    c = random_array(rng, (64, 96), "float64")
    compare(cuda, lambda x: cuda.mul(x.t(), x.t()), c)


def test_more_than_2_to_the_31_elements_use_64_bit_indices(cuda):
    if os.environ.get("CUDA_EMULATOR"):
        pytest.skip("2^31 elements take hours on the CUDA emulator's fibers")
    # 2^31 + 5 bool elements, 2 GiB per operand: read through a transposed view so the strided
    # kernel runs, and check a few values rather than copy 2 GiB back.
    n = (1 << 31) + 5
    x = cuda.ones([n], dtype=cuda.bool, device=DEVICE)
    y = cuda.logical_not(x) if hasattr(cuda, "logical_not") else cuda.eq(x, cuda.zeros([1], dtype=cuda.bool, device=DEVICE))
    assert not bool(host(y[n - 1 :]).item())
    assert int(host(cuda.sum(y.to(cuda.int32)))) == 0
    del x, y


# ----- reductions -----

@pytest.mark.parametrize("shape,dims", [
    (((1 << 20) + 7,), None),           # one output: block rows split across the GPU, then a fold by block
    ((3, 100003), [1]),                 # few long rows: block rows, split
    ((4096, 33), [1]),                  # many short rows: a warp each, no split
    ((40, 300, 2), [0, 2]),             # many rows whose elements are not adjacent: warps, strided
    ((30001, 40), [0]),                 # packet columns, split, then a fold by columns
    ((17, 5000), [0]),                  # packet columns, fewer rows than a block's threads
    ((6, 50, 8), [1]),                  # packet columns under an outer kept dimension
    ((3001, 37), [0]),                  # columns that packets do not tile: a thread per column, split
    ((6, 70, 90), [0, 2]),              # neither dimension adjacent after merging
])
@pytest.mark.parametrize("name", ["sum", "mean", "amax", "amin"])
def test_reductions_along_rows_and_columns(cuda, shape, dims, name):
    a = random_array(np.random.default_rng(6), shape, "float64")
    fn = getattr(cuda, name)
    compare(cuda, (lambda x: fn(x)) if dims is None else (lambda x: fn(x, dims)), a, tol=1e-10)


def test_columns_of_a_misaligned_view_are_read_element_by_element(cuda):
    a = random_array(np.random.default_rng(11), (2001, 41), "float64")
    compare(cuda, lambda x: cuda.sum(x[:, 1:], [0]), a, tol=1e-10)   # starts one element past a packet
    compare(cuda, lambda x: cuda.amax(x[:, :40], [0]), a)            # rows 41 apart: not a multiple of 4


@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "float32", "float64"])
def test_packet_columns_in_every_element_size(cuda, dtype):
    a = random_array(np.random.default_rng(12), (777, 64), dtype)
    compare(cuda, lambda x: cuda.sum(x, [0]), a, tol=1e-4)
    if dtype != "bool":  # argmax takes numbers, as torch's does
        compare(cuda, lambda x: cuda.argmax(x, 0), a)


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32"])
def test_sums_across_splits_keep_integers_exact(cuda, dtype):
    a = random_array(np.random.default_rng(7), (1 << 21,), dtype)
    compare(cuda, cuda.sum, a, tol=1e-4)
    compare(cuda, lambda x: cuda.sum(x.reshape([512, 4096]), [0]), a, tol=1e-4)


def test_argmax_across_splits_finds_the_first_maximum_and_the_first_nan(cuda):
    a = np.zeros(1 << 20, np.float32)
    a[[5000, 900000]] = 3.0                   # a tie between two splits: the first wins
    compare(cuda, lambda x: cuda.argmax(x), a)
    a[[700000, 800000]] = np.nan              # a NaN beats every number; the first NaN wins
    compare(cuda, lambda x: cuda.argmax(x), a)
    b = np.zeros((4000, 300), np.float32)
    b[:, 7] = 1.0
    b[:, 250] = 1.0
    compare(cuda, lambda x: cuda.argmax(x, 1), b)
    compare(cuda, lambda x: cuda.argmax(x.t(), 1), b.T.copy())
    compare(cuda, lambda x: cuda.argmax(x, 0), b)   # along columns


# ----- log_softmax -----

@pytest.mark.parametrize("shape,dim", [
    ((1000, 10), 1),       # a warp per row, in registers
    ((64, 1024), 1),       # the longest warp row, read from memory
    ((9, 1500), 1),        # a block per row, in registers
    ((20, 4096), 1),       # the longest row a block keeps in registers
    ((37, 5000), 1),       # a block per row, read from memory
    ((3, 257, 6), 1),      # interleaved rows
    ((300, 20), 0),        # interleaved: along the first dimension
])
@pytest.mark.parametrize("dtype", FLOATING)
def test_log_softmax_paths(cuda, shape, dim, dtype):
    rng = np.random.default_rng(8)
    aten = cuda.ops.aten
    a = random_array(rng, shape, dtype) * 4
    compare(cuda, lambda x: aten._log_softmax.default(x, dim, False), a, tol=1e-5 if dtype == "float32" else 1e-11)
    output = aten._log_softmax.default(cuda.from_numpy(a), dim, False).numpy()
    grad = random_array(rng, shape, dtype)
    compare(cuda, lambda g, y: aten._log_softmax_backward_data.default(g, y, dim, getattr(cuda, dtype)), grad, output,
            tol=1e-4 if dtype == "float32" else 1e-10)


def test_log_softmax_rows_with_nan_and_infinity(cuda):
    a = np.zeros((4, 2000), np.float32)
    a[1, 1500] = np.nan
    a[2, 10] = np.inf
    a[3, :] = -np.inf
    compare(cuda, lambda x: cuda.log_softmax(x, 1), a)
    compare(cuda, lambda x: cuda.log_softmax(x, 1), a[:, :20].copy())


# ----- copies -----

@pytest.mark.parametrize("dtype", ["bool", "int32", "float32", "float64"])
def test_transposing_copies_go_through_tiles(cuda, dtype):
    rng = np.random.default_rng(9)
    a = random_array(rng, (300, 170), dtype)
    compare(cuda, lambda x: x.t().contiguous(), a, exact=True)
    b = random_array(rng, (3, 64, 33), dtype)
    compare(cuda, lambda x: x.transpose(1, 2).contiguous(), b, exact=True)  # batched
    compare(cuda, lambda x: x.permute([2, 0, 1]).contiguous(), b, exact=True)
    compare(cuda, lambda x: x.t()[5:200:2].contiguous(), a, exact=True)    # a strided source


def test_a_transposing_copy_into_a_strided_destination(cuda):
    a = random_array(np.random.default_rng(10), (128, 96), "float32")
    target = cuda.zeros(96, 256, device=DEVICE)
    target[:, :128].copy_(on_device(cuda, a).t())
    got = host(target)
    np.testing.assert_array_equal(got[:, :128], a.T)
    assert not got[:, 128:].any()


# ----- matrix products (cuBLAS where the build has it) -----

def assert_product(cuda, fn, *arrays, rtol):
    expected = fn(*[cuda.from_numpy(np.ascontiguousarray(a)) for a in arrays]).numpy()
    got = host(fn(*[on_device(cuda, a) for a in arrays]))
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * np.abs(expected).max())


@pytest.mark.parametrize("dtype", FLOATING)
def test_products_in_every_layout(cuda, dtype):
    rng = np.random.default_rng(11)
    rtol = 1e-4 if dtype == "float32" else 1e-11
    a, b = random_array(rng, (129, 65), dtype), random_array(rng, (65, 47), dtype)
    for fa in (lambda x: x, lambda x: x.t().contiguous().t()):
        for fb in (lambda y: y, lambda y: y.t().contiguous().t()):
            assert_product(cuda, lambda x, y: cuda.mm(fa(x), fb(y)), a, b, rtol=rtol)
    assert_product(cuda, lambda x, y: cuda.mm(x[:, :10], y[:10]), a, b, rtol=rtol)            # leading dims > sizes
    assert_product(cuda, lambda x, y: cuda.mm(x[:1], y), a, b, rtol=rtol)                      # M = 1
    assert_product(cuda, lambda x, y: cuda.mm(x, y[:, :1]), a, b, rtol=rtol)                   # N = 1
    assert_product(cuda, lambda x, y: cuda.mm(x[:, ::2], y[::2]), a, b, rtol=rtol)             # no unit stride: tiled
    c = random_array(rng, (47,), dtype)
    assert_product(cuda, lambda x, y, z: cuda.addmm(z, x, y, beta=0.5, alpha=2), a, b, c, rtol=rtol)
    assert_product(cuda, lambda x, y, z: cuda.addmm(z, x, y, beta=0, alpha=1), a, b, c * np.nan, rtol=rtol)


@pytest.mark.parametrize("dtype", FLOATING)
def test_batched_products_with_broadcast_batches(cuda, dtype):
    rng = np.random.default_rng(12)
    rtol = 1e-4 if dtype == "float32" else 1e-11
    a, b = random_array(rng, (4, 33, 20), dtype), random_array(rng, (20, 18), dtype)
    assert_product(cuda, cuda.matmul, a, b, rtol=rtol)
    assert_product(cuda, lambda x, y: cuda.bmm(x, y.unsqueeze(0).expand([4, 20, 18])), a, b, rtol=rtol)
    assert_product(cuda, lambda x, y: cuda.bmm(x.transpose(1, 2), x), a, b, rtol=rtol)


def test_a_product_over_an_empty_dimension_is_zero_or_the_bias(cuda):
    a, b = np.zeros((5, 0), np.float32), np.zeros((0, 3), np.float32)
    compare(cuda, cuda.mm, a, b)
    compare(cuda, lambda x, y, z: cuda.addmm(z, x, y, beta=2), a, b, np.ones(3, np.float32))


def test_a_large_product_matches_the_cpu(cuda):
    rng = np.random.default_rng(13)
    a, b = random_array(rng, (512, 1024), "float32"), random_array(rng, (1024, 384), "float32")
    assert_product(cuda, cuda.mm, a, b, rtol=1e-4)
