"""Factory, fill and random operators through opdispatch.ops.aten, checked against numpy:
values and dtype inference (full, arange), out= variants, *_like defaults, meta tensors
(shapes only), fill_ conversions and overflow errors, and the counter-based random numbers
(ranges, rough statistics over 1e5 samples, seeds and generator objects)."""
import numpy as np
import pytest

DTYPES = ["bool", "int32", "int64", "float32", "float64"]


def dt(opdispatch, name):
    return getattr(opdispatch, name)


# ----- empty, zeros, ones, full -----


def test_empty_and_empty_strided(opdispatch, aten):
    e = aten.empty.memory_format([2, 3], dtype=opdispatch.int32)
    assert e.shape == (2, 3) and e.dtype == opdispatch.int32 and e.is_contiguous()
    s = aten.empty_strided.default([2, 3], [1, 2])
    assert s.shape == (2, 3) and s.strides == (1, 2) and s.dtype == opdispatch.float32
    m = aten.empty_strided.default([4, 5], [1, 4], dtype=opdispatch.float64, device="meta")
    assert m.device == "meta" and m.strides == (1, 4) and m.dtype == opdispatch.float64
    with pytest.raises(opdispatch.Error, match=r"^empty_strided: size \[2, 3\] and stride \[1\] differ in length"):
        aten.empty_strided.default([2, 3], [1])
    with pytest.raises(opdispatch.Error, match=r"^empty_strided: negative stride"):
        aten.empty_strided.default([2, 3], [-1, 1], device="meta")


@pytest.mark.parametrize("dtype", DTYPES)
def test_zeros_ones_full_values(opdispatch, aten, dtype):
    d = dt(opdispatch, dtype)
    np.testing.assert_array_equal(aten.zeros.default([2, 3], dtype=d).numpy(), np.zeros((2, 3), dtype))
    np.testing.assert_array_equal(aten.ones.default([3], dtype=d).numpy(), np.ones(3, dtype))
    f = aten.full.default([2, 2], 1 if dtype != "bool" else True, dtype=d)
    assert f.dtype == d
    np.testing.assert_array_equal(f.numpy(), np.full((2, 2), 1, dtype))


def test_default_dtypes_and_full_inference(opdispatch, aten):
    assert aten.zeros.default([2]).dtype == opdispatch.float32
    assert aten.ones.default([2]).dtype == opdispatch.float32
    assert aten.full.default([2], True).dtype == opdispatch.bool
    assert aten.full.default([2], 3).dtype == opdispatch.int64
    assert aten.full.default([2], 2.5).dtype == opdispatch.float32
    np.testing.assert_array_equal(aten.full.default([2], -7).numpy(), [-7, -7])
    assert aten.full.default([], 2.5).shape == ()
    assert aten.zeros.default([0, 3]).shape == (0, 3)


def test_full_converts_the_value(opdispatch, aten):
    np.testing.assert_array_equal(aten.full.default([2], 1.75, dtype=opdispatch.int64).numpy(), [1, 1])
    np.testing.assert_array_equal(aten.full.default([2], -1.75, dtype=opdispatch.int32).numpy(), [-1, -1])
    np.testing.assert_array_equal(aten.full.default([2], 0.5, dtype=opdispatch.bool).numpy(), [True, True])
    with pytest.raises(opdispatch.Error, match=r"^fill_: value 3000000000 cannot be converted to int32"):
        aten.full.default([2], 3_000_000_000, dtype=opdispatch.int32)
    with pytest.raises(opdispatch.Error, match=r"^fill_: value .* cannot be converted to float32"):
        aten.full.default([2], 1e300, dtype=opdispatch.float32)
    with pytest.raises(opdispatch.Error, match=r"^fill_: value nan cannot be converted to int64"):
        aten.full.default([2], float("nan"), dtype=opdispatch.int64)
    assert np.isinf(aten.full.default([1], float("inf")).numpy()).all()


def test_factories_on_meta(opdispatch, aten):
    for t in [aten.zeros.default([2, 3], device="meta"), aten.ones.default([2, 3], device="meta"),
              aten.full.default([2, 3], 4, device="meta"), aten.rand.default([2, 3], device="meta"),
              aten.randn.default([2, 3], device="meta", dtype=opdispatch.float64)]:
        assert t.device == "meta" and t.shape == (2, 3)
    assert aten.full.default([2], 4, device="meta").dtype == opdispatch.int64
    assert aten.arange.start_step(0, 10, 3, device="meta").shape == (4,)


def test_factory_out_variants(opdispatch, aten):
    out = opdispatch.zeros([1], dtype=opdispatch.int32)
    returned = aten.zeros.out([2, 2], out=out)
    assert out.shape == (2, 2) and returned.is_alias_of(out)
    np.testing.assert_array_equal(aten.ones.out([3], out=out).numpy(), [1, 1, 1])
    aten.full.out([2, 3], 5, out=out)
    np.testing.assert_array_equal(out.numpy(), np.full((2, 3), 5, np.int32))
    assert out.dtype == opdispatch.int32
    f = opdispatch.zeros([4], dtype=opdispatch.float64)
    aten.full.out([4], 2.5, out=f)
    np.testing.assert_array_equal(f.numpy(), [2.5] * 4)
    m = aten.empty.memory_format([1], device="meta")
    assert aten.zeros.out([5, 2], out=m).shape == (5, 2)


# ----- *_like -----


@pytest.mark.parametrize("dtype", DTYPES)
def test_like_factories_take_defaults_from_self(opdispatch, aten, dtype):
    x = opdispatch.tensor(np.ones((3, 2), dtype))
    for factory, value in [(aten.zeros_like.default, 0), (aten.ones_like.default, 1)]:
        y = factory(x)
        assert y.dtype == x.dtype and y.device == "cpu" and not y.is_alias_of(x)
        np.testing.assert_array_equal(y.numpy(), np.full((3, 2), value, dtype))
    e = aten.empty_like.default(x)
    assert e.shape == (3, 2) and e.dtype == x.dtype
    z = aten.zeros_like.default(x, dtype=opdispatch.float64)
    assert z.dtype == opdispatch.float64
    m = aten.ones_like.default(x, device="meta")
    assert m.device == "meta" and m.dtype == x.dtype and m.shape == (3, 2)


def test_like_factories_memory_format(opdispatch, aten):
    nchw = aten.permute.default(aten.empty.memory_format([2, 4, 5, 3]), [0, 3, 1, 2])  # channels-last
    assert aten.empty_like.default(nchw).strides == (60, 1, 15, 3)
    assert aten.zeros_like.default(nchw, memory_format=0).is_contiguous()
    t = aten.transpose.int(aten.empty.memory_format([3, 4]), 0, 1)
    assert aten.empty_like.default(t).is_contiguous()
    m = aten.empty.memory_format([2, 3], device="meta")
    assert aten.empty_like.default(m).device == "meta"
    out = opdispatch.zeros([1])
    aten.ones_like.out(opdispatch.zeros([2, 2]), out=out)
    np.testing.assert_array_equal(out.numpy(), np.ones((2, 2)))


# ----- arange -----


ARANGE_CASES = [(0, 5, 1), (2, 11, 3), (10, -3, -2), (0.5, 3, 0.25), (1, 0, -0.3), (-2, 2.5, 1), (3, 3, 1),
                (0, 1, 0.1)]


@pytest.mark.parametrize("start, end, step", ARANGE_CASES)
def test_arange_matches_numpy(opdispatch, aten, start, end, step):
    r = aten.arange.start_step(start, end, step)
    expected = np.arange(start, end, step)
    integral = all(isinstance(v, int) for v in (start, end, step))
    assert r.dtype == (opdispatch.int64 if integral else opdispatch.float32)
    assert r.shape == expected.shape
    np.testing.assert_allclose(r.numpy(), expected, rtol=1e-6, atol=1e-6)
    r64 = aten.arange.start_step(start, end, step, dtype=opdispatch.float64)
    np.testing.assert_allclose(r64.numpy(), expected, rtol=1e-12, atol=1e-12)


def test_arange_overloads_and_dtypes(opdispatch, aten):
    np.testing.assert_array_equal(aten.arange.default(5).numpy(), np.arange(5))
    assert aten.arange.default(5).dtype == opdispatch.int64
    assert aten.arange.default(5.0).dtype == opdispatch.float32
    np.testing.assert_array_equal(aten.arange.start(-3, 2).numpy(), np.arange(-3, 2))
    np.testing.assert_array_equal(aten.arange.default(4, dtype=opdispatch.int32).numpy(), np.arange(4, dtype=np.int32))
    np.testing.assert_array_equal(aten.arange.start_step(0.5, 5, dtype=opdispatch.int64).numpy(), [0, 1, 2, 3, 4])
    assert aten.arange.default(0).shape == (0,)


def test_arange_out_variants_resize(opdispatch, aten):
    out = opdispatch.zeros([2], dtype=opdispatch.float64)
    returned = aten.arange.out(6, out=out)
    assert returned.is_alias_of(out) and out.dtype == opdispatch.float64
    np.testing.assert_array_equal(out.numpy(), np.arange(6.0))
    aten.arange.start_out(1, 2, 0.25, out=out)
    np.testing.assert_array_equal(out.numpy(), [1, 1.25, 1.5, 1.75])
    i = opdispatch.zeros([10], dtype=opdispatch.int32)
    aten.arange.start_out(10, 0, -4, out=i)
    np.testing.assert_array_equal(i.numpy(), [10, 6, 2])
    strided = aten.slice.Tensor(opdispatch.zeros([8]), 0, 0, None, 2)  # the right size, not contiguous
    aten.arange.out(4, out=strided)
    np.testing.assert_array_equal(strided.numpy(), [0, 1, 2, 3])
    m = aten.empty.memory_format([0], device="meta")
    assert aten.arange.out(7, out=m).shape == (7,)


@pytest.mark.parametrize("args, message", [
    ((0, 5, 0), r"^arange: step must be a finite nonzero number, got 0"),
    ((0, 5, -1), r"^arange: the range 0 -> 5 is inconsistent with the sign of step -1"),
    ((5, 0, 1), r"^arange: the range 5 -> 0 is inconsistent"),
    ((0, float("inf"), 1), r"^arange: unsupported range"),
])
def test_arange_errors(opdispatch, aten, args, message):
    with pytest.raises(opdispatch.Error, match=message):
        aten.arange.start_step(*args)
    with pytest.raises(opdispatch.Error, match=message):
        aten.arange.start_out(*args, out=opdispatch.zeros([1]))


def test_arange_bool_out_is_rejected(opdispatch, aten):
    with pytest.raises(opdispatch.Error, match=r"^arange: a bool output is not supported"):
        aten.arange.out(3, out=opdispatch.zeros([3], dtype=opdispatch.bool))


# ----- fill_ and zero_ -----


@pytest.mark.parametrize("dtype", DTYPES)
def test_fill_and_zero_on_views(opdispatch, aten, dtype):
    a = np.ones((3, 4), dtype)
    x = opdispatch.from_numpy(a)
    col = aten.select.int(x, 1, 2)
    aten.fill_.Scalar(col, 0)
    expected = np.ones((3, 4), dtype)
    expected[:, 2] = 0
    np.testing.assert_array_equal(a, expected)
    aten.zero_.default(aten.transpose.int(x, 0, 1))
    np.testing.assert_array_equal(a, np.zeros((3, 4), dtype))
    fresh = aten.fill.Scalar(x, 1)  # functional: x stays zero
    np.testing.assert_array_equal(fresh.numpy(), np.ones((3, 4), dtype))
    np.testing.assert_array_equal(a, np.zeros((3, 4), dtype))
    z = aten.zero.default(fresh)
    np.testing.assert_array_equal(z.numpy(), np.zeros((3, 4), dtype))


def test_fill_truncates_and_checks_range(opdispatch, aten):
    x = opdispatch.zeros([3], dtype=opdispatch.int64)
    aten.fill_.Scalar(x, 2.9)
    np.testing.assert_array_equal(x.numpy(), [2, 2, 2])
    b = opdispatch.zeros([2], dtype=opdispatch.bool)
    aten.fill_.Scalar(b, 1.5)
    np.testing.assert_array_equal(b.numpy(), [True, True])
    f = opdispatch.zeros([2], dtype=opdispatch.float32)
    aten.fill_.Scalar(f, True)
    np.testing.assert_array_equal(f.numpy(), [1, 1])
    with pytest.raises(opdispatch.Error, match=r"^fill_: value -2147483649 cannot be converted to int32"):
        aten.fill_.Scalar(opdispatch.zeros([2], dtype=opdispatch.int32), -2**31 - 1)
    m = aten.empty.memory_format([2, 2], device="meta", dtype=opdispatch.int32)
    assert aten.fill_.Scalar(m, 3).device == "meta"
    with pytest.raises(opdispatch.Error, match=r"^fill_: value 1e\+20 cannot be converted to int32"):
        aten.fill_.Scalar(m, 1e20)
    assert aten.zero_.default(m).shape == (2, 2)


# ----- random -----


N = 100_000


def test_rand_shape_range_and_statistics(opdispatch, aten):
    gen = opdispatch._C.Generator().manual_seed(1234)
    r = aten.rand.default([N], generator=gen)
    assert r.dtype == opdispatch.float32 and r.shape == (N,)
    v = r.numpy()
    assert v.min() >= 0.0 and v.max() < 1.0
    assert abs(v.mean() - 0.5) < 0.01 and abs(v.std() - (1 / 12) ** 0.5) < 0.01
    assert len(np.unique(v)) > N * 0.99
    assert aten.rand.default([2, 3, 4], generator=gen).shape == (2, 3, 4)


def test_randn_statistics(opdispatch, aten):
    gen = opdispatch._C.Generator().manual_seed(99)
    v = aten.randn.default([N], generator=gen, dtype=opdispatch.float64).numpy()
    assert abs(v.mean()) < 0.02 and abs(v.std() - 1.0) < 0.02
    assert 0.67 < np.mean(np.abs(v) < 1.0) < 0.70  # about 68.3% within one std
    assert np.isfinite(v).all()


def test_uniform_and_normal_parameters(opdispatch, aten):
    gen = opdispatch._C.Generator().manual_seed(5)
    x = opdispatch.zeros([N], dtype=opdispatch.float64)
    returned = aten.uniform_.default(x, -3.0, 5.0, generator=gen)
    assert returned.is_alias_of(x)
    v = x.numpy()
    assert v.min() >= -3.0 and v.max() < 5.0 and abs(v.mean() - 1.0) < 0.05
    aten.normal_.default(x, 10.0, 0.5, generator=gen)
    v = x.numpy()
    assert abs(v.mean() - 10.0) < 0.01 and abs(v.std() - 0.5) < 0.01
    aten.normal_.default(x, 2.0, 0.0, generator=gen)
    np.testing.assert_array_equal(x.numpy(), np.full(N, 2.0))
    # float64 uses all 53 bits: most values are not float32 numbers.
    aten.uniform_.default(x, generator=gen)
    v = x.numpy()
    assert np.mean(v.astype(np.float32).astype(np.float64) != v) > 0.99


def test_same_seed_same_values_and_streams_advance(opdispatch, aten):
    g1 = opdispatch._C.Generator().manual_seed(42)
    g2 = opdispatch._C.Generator("cpu").manual_seed(42)
    a = aten.rand.default([1000], generator=g1).numpy()
    b = aten.rand.default([1000], generator=g2).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(aten.rand.default([1000], generator=g1).numpy(), a)  # the stream moved on
    g3 = opdispatch._C.Generator().manual_seed(43)
    assert np.mean(aten.rand.default([1000], generator=g3).numpy() == a) < 0.01
    # Draws are positional: 500 + 500 values equal 1000 at once.
    g1.manual_seed(7)
    whole = aten.randn.default([1000], generator=g1).numpy()
    g1.manual_seed(7)
    halves = np.concatenate([aten.randn.default([500], generator=g1).numpy() for _ in range(2)])
    np.testing.assert_array_equal(whole, halves)
    assert g1.initial_seed() == 7 and g1.device == "cpu"


def test_default_generator_and_manual_seed(opdispatch, aten):
    C = opdispatch._C
    returned = C.manual_seed(2024)
    assert returned == C.default_generator() and C.initial_seed() == 2024
    a = aten.rand.default([100]).numpy()
    own = C.Generator().manual_seed(2024)
    np.testing.assert_array_equal(a, aten.rand.default([100], generator=own).numpy())
    C.manual_seed(2024)
    np.testing.assert_array_equal(a, aten.rand.default([100]).numpy())
    C.manual_seed(2024)
    aten.rand.default([100], device="meta")  # meta tensors draw nothing
    aten.uniform_.default(aten.empty.memory_format([0]))  # nor do empty ones
    np.testing.assert_array_equal(a, aten.rand.default([100]).numpy())
    seeded = C.Generator()
    s = seeded.seed()
    assert seeded.initial_seed() == s
    assert C.Generator().manual_seed(-1).initial_seed() == 2**64 - 1
    with pytest.raises(ValueError):
        C.Generator().manual_seed(2**64)
    with pytest.raises(TypeError):
        C.Generator().manual_seed(1.5)


def test_random_dtypes_functional_and_out_variants(opdispatch, aten):
    gen = opdispatch._C.Generator().manual_seed(3)
    r = aten.rand.default([4, 5], generator=gen, dtype=opdispatch.float64)
    assert r.dtype == opdispatch.float64
    x = opdispatch.zeros([3, 4])
    gen.manual_seed(11)
    u = aten.uniform.default(x, 0.0, 1.0, generator=gen)  # functional: x untouched
    np.testing.assert_array_equal(x.numpy(), np.zeros((3, 4)))
    gen.manual_seed(11)
    np.testing.assert_array_equal(u.numpy(), aten.rand.default([3, 4], generator=gen).numpy())
    out = opdispatch.zeros([1])
    gen.manual_seed(11)
    aten.rand.out([3, 4], generator=gen, out=out)
    np.testing.assert_array_equal(out.numpy(), u.numpy())
    n = aten.normal.functional(x, 1.0, 2.0, generator=gen)
    assert n.shape == (3, 4)
    # A non-contiguous target is filled in row-major order of its own shape.
    gen.manual_seed(11)
    t = aten.transpose.int(opdispatch.zeros([4, 3]), 0, 1)
    aten.uniform_.default(t, generator=gen)
    np.testing.assert_array_equal(t.numpy(), u.numpy())


def test_random_errors(opdispatch, aten):
    with pytest.raises(opdispatch.Error, match=r"^rand: expected a floating point dtype, got int64"):
        aten.rand.default([2], dtype=opdispatch.int64)
    with pytest.raises(opdispatch.Error, match=r"^uniform_: expected a floating point dtype, got int32"):
        aten.uniform_.default(opdispatch.zeros([2], dtype=opdispatch.int32))
    with pytest.raises(opdispatch.Error, match=r"^uniform_: expected from <= to"):
        aten.uniform_.default(opdispatch.zeros([2]), 1.0, 0.0)
    with pytest.raises(opdispatch.Error, match=r"^normal_: std must be finite and >= 0, got -1"):
        aten.normal_.default(opdispatch.zeros([2]), 0.0, -1.0)
    with pytest.raises(opdispatch.Error, match=r"^normal_: std must be"):
        aten.normal_.default(aten.empty.memory_format([2], device="meta"), 0.0, -1.0)
    with pytest.raises(opdispatch.Error, match=r"^uniform_: the generator is for device cuda"):
        aten.uniform_.default(opdispatch.zeros([2]), generator=opdispatch._C.Generator("cuda"))


@pytest.mark.parametrize("make", [
    lambda od: od.zeros([1 << 62]),
    lambda od: od.full([1 << 40, 1 << 40], 1.0),
    lambda od: od.empty_strided([1 << 62, 2], [1, 1 << 62]),
    lambda od: od.as_strided(od.zeros([6]), [1 << 62, 4], [1 << 62, 1]),
], ids=["zeros", "full", "empty_strided", "as_strided"])
def test_sizes_beyond_the_address_space_are_errors_not_wraparound(opdispatch, make):
    # The byte count would overflow int64; an unchecked product wraps to a tiny allocation.
    with pytest.raises(opdispatch.Error, match="2\\^63 bytes"):
        make(opdispatch)
