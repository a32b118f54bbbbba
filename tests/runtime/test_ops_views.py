"""View operators and data movement, called through opdispatch.ops.aten and checked against
numpy: every view aliases its input (writes show through), its generated *_copy variant (and
that one's out=) gives the same values in fresh contiguous memory; reshape and contiguous copy
only when they must; copy_, clone, _to_copy and to convert dtypes, broadcast and handle
overlap; meta tensors get shapes only; errors name the operator."""
import numpy as np
import pytest

DTYPES = ["bool", "int32", "int64", "float32", "float64"]


def sample(shape, dtype="float64", seed=0):
    values = np.random.default_rng(seed).integers(-50, 50, size=shape)
    return (values > 0 if dtype == "bool" else values).astype(dtype)


def shared(opdispatch, array):
    """A tensor over the same memory as `array` (which may be non-contiguous)."""
    return opdispatch.from_numpy(array)


# (view operator, its *_copy operator and that one's out= overload, args, the numpy view)
VIEW_CASES = [
    ("view.default", "view_copy.default", "view_copy.out", ([4, -1],), lambda a: a.reshape(4, -1)),
    ("transpose.int", "transpose_copy.int", "transpose_copy.int_out", (0, -1), lambda a: np.swapaxes(a, 0, -1)),
    ("t.default", "t_copy.default", "t_copy.out", (), lambda a: a.T),
    ("permute.default", "permute_copy.default", "permute_copy.out", ([-1, 0, 1],),
     lambda a: np.transpose(a, (2, 0, 1))),
    ("expand.default", "expand_copy.default", "expand_copy.out", ([2, -1, 3, -1],),
     lambda a: np.broadcast_to(a, (2, 4, 3, 6))),
    ("squeeze.default", "squeeze_copy.default", "squeeze_copy.out", (), np.squeeze),
    ("squeeze.dim", "squeeze_copy.dim", "squeeze_copy.dim_out", (-2,), lambda a: np.squeeze(a, -2)),
    ("squeeze.dims", "squeeze_copy.dims", "squeeze_copy.dims_out", ([0, 2],), lambda a: np.squeeze(a, (0, 2))),
    ("unsqueeze.default", "unsqueeze_copy.default", "unsqueeze_copy.out", (-1,), lambda a: a[..., None]),
    ("select.int", "select_copy.int", "select_copy.int_out", (1, -2), lambda a: a[:, -2]),
    ("slice.Tensor", "slice_copy.Tensor", "slice_copy.Tensor_out", (1, -5, None, 2), lambda a: a[:, -5::2]),
    ("as_strided.default", "as_strided_copy.default", "as_strided_copy.out", ([3, 2], [1, 3]),
     lambda a: np.lib.stride_tricks.as_strided(a, (3, 2), (a.itemsize, 3 * a.itemsize))),
]

# The input each case views: shapes the operator accepts.
VIEW_INPUTS = {
    "view.default": (2, 2, 6), "t.default": (3, 5), "expand.default": (4, 1, 6),
    "squeeze.default": (1, 4, 1, 3), "squeeze.dim": (4, 1, 3), "squeeze.dims": (1, 4, 1, 3),
    "as_strided.default": (12,),
}


def op(aten, qualified):
    name, overload = qualified.split(".")
    return getattr(getattr(aten, name), overload)


@pytest.mark.parametrize("case", VIEW_CASES, ids=[c[0] for c in VIEW_CASES])
@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_view_aliases_and_copy_variants_match_numpy(opdispatch, aten, case, dtype):
    view_name, copy_name, copy_out_name, args, np_view = case
    a = sample(VIEW_INPUTS.get(view_name, (4, 6, 3)), dtype)
    x = shared(opdispatch, a)
    expected = np_view(a).copy()
    v = op(aten, view_name)(x, *args)
    assert v.is_alias_of(x)
    np.testing.assert_array_equal(v.numpy(), expected)
    c = op(aten, copy_name)(x, *args)
    assert not c.is_alias_of(x) and c.is_contiguous()
    np.testing.assert_array_equal(c.numpy(), expected)
    out = opdispatch.tensor([0], dtype=getattr(opdispatch, dtype))
    returned = op(aten, copy_out_name)(x, *args, out=out)
    assert out.shape == expected.shape and returned.is_alias_of(out)
    np.testing.assert_array_equal(out.numpy(), expected)
    # Writes through the view reach the input's memory (which numpy also sees).
    if view_name != "expand.default":  # expanded elements overlap; numpy refuses to write those
        mirror = a.copy()
        np_view(mirror)[...] = 7
        aten.fill_.Scalar(v, 7)
        np.testing.assert_array_equal(a, mirror)


NON_VIEW_CASES = [c for c in VIEW_CASES if c[0] != "view.default"]  # view of a transposed tensor: an error case


@pytest.mark.parametrize("case", NON_VIEW_CASES, ids=[c[0] for c in NON_VIEW_CASES])
def test_views_of_non_contiguous_inputs(opdispatch, aten, case):
    view_name, copy_name, _, args, np_view = case
    shape = VIEW_INPUTS.get(view_name, (4, 6, 3))
    base = sample(tuple(reversed(shape)), "float64", seed=3)
    a = base.T  # non-contiguous, the sample's shape
    x = shared(opdispatch, a)
    assert not x.is_contiguous() or len(shape) == 1
    if view_name == "as_strided.default":  # strides count storage elements, not a's
        np_view = lambda arr: np.lib.stride_tricks.as_strided(base.reshape(-1), (3, 2), (8, 24))  # noqa: E731
    np.testing.assert_array_equal(op(aten, view_name)(x, *args).numpy(), np_view(a))
    np.testing.assert_array_equal(op(aten, copy_name)(x, *args).numpy(), np_view(a))


@pytest.mark.parametrize("dtype", DTYPES)
def test_views_keep_every_dtype(opdispatch, aten, dtype):
    a = sample((3, 4), dtype)
    x = shared(opdispatch, a)
    t = aten.transpose.int(x, 0, 1)
    assert t.dtype == getattr(opdispatch, dtype)
    np.testing.assert_array_equal(t.numpy(), a.T)
    np.testing.assert_array_equal(aten.select.int(t, 0, -1).numpy(), a[:, -1])


def test_view_shapes_on_meta_tensors(opdispatch, aten):
    m = aten.empty.memory_format([4, 1, 6], device="meta")
    assert aten.transpose.int(m, 0, 2).shape == (6, 1, 4)
    assert aten.expand.default(m, [3, 4, 5, 6]).shape == (3, 4, 5, 6)
    assert aten.squeeze.default(m).shape == (4, 6)
    assert aten.slice.Tensor(m, 2, 1, 100, 2).shape == (4, 1, 3)
    assert aten.select.int(m, 0, 3).shape == (1, 6)
    assert aten.reshape.default(m, [-1]).shape == (24,)
    assert aten.permute_copy.default(m, [2, 0, 1]).device == "meta"
    r = aten.reshape.default(aten.transpose.int(m, 0, 2), [24])  # needs a copy: still meta
    assert r.device == "meta" and r.shape == (24,)


def test_slice_bounds(opdispatch, aten):
    a = np.arange(10.0)
    x = shared(opdispatch, a)
    for start, end, step in [(None, None, 1), (-3, None, 1), (2, -2, 3), (-100, 100, 4), (8, 2, 1), (20, 30, 1),
                             (None, -11, 1), (3, 3, 2)]:
        np.testing.assert_array_equal(aten.slice.Tensor(x, 0, start, end, step).numpy(), a[start:end:step])
    v = aten.slice.Tensor(x, 0, 3, None, 1)
    assert v.storage_offset == 3
    assert aten.slice.Tensor(x).is_alias_of(x)  # every default


def test_as_strided_offset_defaults_to_self(opdispatch, aten):
    a = np.arange(12.0)
    x = aten.slice.Tensor(shared(opdispatch, a), 0, 4)
    v = aten.as_strided.default(x, [2, 2], [1, 2])
    assert v.storage_offset == 4
    np.testing.assert_array_equal(v.numpy(), [[4, 6], [5, 7]])
    np.testing.assert_array_equal(aten.as_strided.default(x, [3], [3], 0).numpy(), [0, 3, 6])


def test_expand_and_unsqueeze_details(opdispatch, aten):
    a = np.array([[1.0], [2.0]])
    x = shared(opdispatch, a)
    e = aten.expand.default(x, [3, 2, 4])
    assert e.strides[0] == 0 and e.strides[2] == 0
    np.testing.assert_array_equal(e.numpy(), np.broadcast_to(a, (3, 2, 4)))
    s = opdispatch.tensor(5.0)
    np.testing.assert_array_equal(aten.expand.default(s, [2, 2]).numpy(), np.full((2, 2), 5.0))
    for dim in range(-3, 3):
        np.testing.assert_array_equal(aten.unsqueeze.default(x, dim).numpy(), np.expand_dims(a, dim))
    assert aten.t.default(s).shape == () and aten.t.default(opdispatch.tensor([1, 2])).shape == (2,)
    assert aten.squeeze.dim(s, 0).shape == () and aten.transpose.int(s, 0, -1).shape == ()
    assert aten.squeeze.dim(x, 0).shape == (2, 1)  # size 2: left alone


def test_reshape_views_when_strides_allow_and_copies_otherwise(opdispatch, aten):
    a = sample((4, 6))
    x = shared(opdispatch, a)
    r = aten.reshape.default(x, [3, -1])
    assert r.is_alias_of(x)
    np.testing.assert_array_equal(r.numpy(), a.reshape(3, -1))
    xt = aten.transpose.int(x, 0, 1)
    r2 = aten.reshape.default(xt, [-1])
    assert not r2.is_alias_of(x)
    np.testing.assert_array_equal(r2.numpy(), a.T.reshape(-1))
    r3 = aten.reshape.default(xt, [6, 2, 2])  # splits the first dim only: still a view
    assert r3.is_alias_of(x)
    np.testing.assert_array_equal(r3.numpy(), a.T.reshape(6, 2, 2))
    assert aten.reshape.default(opdispatch.zeros([0, 6]), [-1, 3]).shape == (0, 3)
    with pytest.raises(opdispatch.Error, match=r"^reshape: .*invalid for 24 elements"):
        aten.reshape.default(x, [5, -1])
    with pytest.raises(opdispatch.Error, match=r"^reshape: only one dimension can be -1"):
        aten.reshape.default(x, [-1, -1])


def test_contiguous_returns_self_or_a_copy(opdispatch, aten):
    a = sample((2, 3, 4, 5))
    x = shared(opdispatch, a)
    assert aten.contiguous.default(x).is_alias_of(x)
    xt = aten.transpose.int(x, 1, 3)
    c = aten.contiguous.default(xt)
    assert not c.is_alias_of(x) and c.is_contiguous()
    np.testing.assert_array_equal(c.numpy(), np.swapaxes(a, 1, 3))
    cl = aten.contiguous.default(x, memory_format=2)  # channels_last
    assert cl.strides == (60, 1, 15, 3)
    np.testing.assert_array_equal(cl.numpy(), a)
    assert aten.contiguous.default(cl, memory_format=2).is_alias_of(cl)
    with pytest.raises(opdispatch.Error, match=r"^contiguous: memory format preserve_format"):
        aten.contiguous.default(x, memory_format=1)


VIEW_ERRORS = [
    ("view.default", ((2, 3), [4, -1]), r"^view: shape \[4, -1\] is invalid for 6 elements"),
    ("transpose.int", ((2, 3), 0, 2), r"^transpose: dimension 2 is out of range for a 2-d tensor"),
    ("t.default", ((2, 3, 4),), r"^t: expects a tensor with at most 2 dimensions"),
    ("permute.default", ((2, 3), [0]), r"^permute: 1 dims \[0\] given for a 2-d tensor"),
    ("permute.default", ((2, 3), [1, -1]), r"^permute: dimension 1 repeats"),
    ("expand.default", ((2, 3), [4, 3]), r"^expand: size 2 of dimension 0 cannot become 4"),
    ("expand.default", ((2, 3), [-1, 2, 3]), r"^expand: size -1 is not allowed for the new leading dimension 0"),
    ("expand.default", ((2, 3), [3]), r"^expand: cannot expand a 2-d tensor"),
    ("squeeze.dim", ((2, 3), -3), r"^squeeze: dimension -3 is out of range"),
    ("squeeze.dims", ((1, 3), [0, -2]), r"^squeeze: dimension 0 appears more than once"),
    ("unsqueeze.default", ((2, 3), 3), r"^unsqueeze: dimension 3 is out of range for a 2-d tensor"),
    ("select.int", ((2, 3), 1, 3), r"^select: index 3 is out of range for dimension 1 of size 3"),
    ("select.int", ((), 0, 0), r"^select: cannot select from a 0-d tensor"),
    ("slice.Tensor", ((2, 3), 1, 0, 2, 0), r"^slice: step must be positive, got 0"),
    ("slice.Tensor", ((2, 3), 2), r"^slice: dimension 2 is out of range"),
    ("as_strided.default", ((2, 3), [2, 4], [4, 1]), r"^as_strided: size \[2, 4\], stride \[4, 1\] .* storage holds 6"),
    ("as_strided.default", ((2, 3), [2], [1, 1]), r"^as_strided: size \[2\] and stride \[1, 1\] differ in length"),
    ("as_strided.default", ((2, 3), [2], [-1]), r"^as_strided: negative stride -1"),
]


@pytest.mark.parametrize("name, args, message", VIEW_ERRORS, ids=[e[0] for e in VIEW_ERRORS])
def test_view_errors_name_the_operator(opdispatch, aten, name, args, message):
    shape, *rest = args
    x = shared(opdispatch, np.zeros(shape))
    with pytest.raises(opdispatch.Error, match=message):
        op(aten, name)(x, *rest)


def test_view_of_non_viewable_strides_fails_and_view_copy_too(opdispatch, aten):
    x = aten.transpose.int(shared(opdispatch, sample((2, 3))), 0, 1)
    with pytest.raises(opdispatch.Error, match=r"^view: .*call contiguous\(\) first"):
        aten.view.default(x, [6])
    with pytest.raises(opdispatch.Error, match=r"^view: "):
        aten.view_copy.default(x, [6])


# ----- data movement -----


@pytest.mark.parametrize("src_dtype", DTYPES)
@pytest.mark.parametrize("dst_dtype", DTYPES)
def test_copy_converts_dtypes_and_broadcasts(opdispatch, aten, src_dtype, dst_dtype):
    src = sample((1, 4), src_dtype, seed=1)
    dst = opdispatch.from_numpy(np.zeros((3, 4), dtype=dst_dtype).T.copy().T)  # non-contiguous dst
    returned = aten.copy_.default(dst, opdispatch.tensor(src))
    assert returned.is_alias_of(dst)
    np.testing.assert_array_equal(dst.numpy(), np.broadcast_to(src, (3, 4)).astype(dst_dtype))


def test_copy_handles_overlap_with_self(opdispatch, aten):
    a = sample((3, 3))
    x = shared(opdispatch, a.copy())
    aten.copy_.default(x, aten.transpose.int(x, 0, 1))
    np.testing.assert_array_equal(x.numpy(), a.T)
    y = shared(opdispatch, np.arange(6.0))
    aten.copy_.default(aten.slice.Tensor(y, 0, 1), aten.slice.Tensor(y, 0, 0, 5))  # shifted overlap
    np.testing.assert_array_equal(y.numpy(), [0, 0, 1, 2, 3, 4])
    aten.copy_.default(y, y)
    np.testing.assert_array_equal(y.numpy(), [0, 0, 1, 2, 3, 4])


def test_copy_errors_and_meta(opdispatch, aten):
    x = opdispatch.zeros([2, 3])
    with pytest.raises(opdispatch.Error, match=r"^copy_: src of shape \[4\] cannot be broadcast"):
        aten.copy_.default(x, opdispatch.zeros([4]))
    m = aten.empty.memory_format([2, 3], device="meta")
    assert aten.copy_.default(m, x).device == "meta"  # shape check only
    with pytest.raises(opdispatch.Error, match=r"^copy_: cannot copy out of a meta tensor"):
        aten.copy_.default(x, m)
    with pytest.raises(opdispatch.Error, match=r"^copy_: src of shape"):
        aten.copy_.default(m, aten.empty.memory_format([3, 3], device="meta"))
    out = opdispatch.zeros([1])
    aten.copy.out(x, opdispatch.tensor([1.0, 2.0, 3.0]), out=out)
    np.testing.assert_array_equal(out.numpy(), [[1, 2, 3], [1, 2, 3]])


@pytest.mark.parametrize("dtype", DTYPES)
def test_clone_copies_in_the_requested_format(opdispatch, aten, dtype):
    a = sample((2, 3, 4, 5), dtype)
    x = aten.permute.default(shared(opdispatch, a), [0, 2, 3, 1])  # a channels-last layout of NHWC data
    c = aten.clone.default(x)
    assert not c.is_alias_of(x) and c.dtype == getattr(opdispatch, dtype)
    np.testing.assert_array_equal(c.numpy(), np.transpose(a, (0, 2, 3, 1)))
    assert c.is_contiguous()  # a plain permutation: preserve_format gives contiguous
    nchw = aten.permute.default(shared(opdispatch, np.ascontiguousarray(np.transpose(a, (0, 2, 3, 1)))), [0, 3, 1, 2])
    kept = aten.clone.default(nchw)  # channels-last input: preserved
    assert kept.strides == (60, 1, 15, 3)
    np.testing.assert_array_equal(kept.numpy(), a)
    forced = aten.clone.default(nchw, memory_format=0)
    assert forced.is_contiguous()
    np.testing.assert_array_equal(forced.numpy(), a)
    assert aten.clone.default(aten.empty.memory_format([2, 3], device="meta")).device == "meta"
    out = opdispatch.tensor([0], dtype=getattr(opdispatch, dtype))
    aten.clone.out(x, out=out)
    np.testing.assert_array_equal(out.numpy(), np.transpose(a, (0, 2, 3, 1)))


def test_to_returns_self_unless_something_changes(opdispatch, aten):
    a = sample((2, 3), "float32")
    x = shared(opdispatch, a)
    assert aten.to.dtype(x, opdispatch.float32).is_alias_of(x)
    assert aten.to.device(x, "cpu", opdispatch.float32).is_alias_of(x)
    assert aten.to.dtype_layout(x).is_alias_of(x)
    assert aten.to.dtype_layout(x, device="cpu").is_alias_of(x)
    assert not aten.to.dtype(x, opdispatch.float32, copy=True).is_alias_of(x)
    for dtype in DTYPES:
        y = aten.to.dtype(x, getattr(opdispatch, dtype))
        assert y.dtype == getattr(opdispatch, dtype)
        np.testing.assert_array_equal(y.numpy(), a.astype(dtype))
    xt = aten.transpose.int(x, 0, 1)
    c = aten.to.dtype(xt, opdispatch.float32, memory_format=0)
    assert c.is_contiguous() and not c.is_alias_of(x)
    m = aten.to.dtype_layout(x, dtype=opdispatch.float64, device="meta")
    assert m.device == "meta" and m.dtype == opdispatch.float64 and m.shape == (2, 3)
    with pytest.raises(opdispatch.Error, match=r"^copy_: cannot copy out of a meta tensor"):
        aten.to.device(m, "cpu", opdispatch.float64)


def test_to_copy(opdispatch, aten):
    a = sample((2, 3), "int64")
    x = opdispatch.tensor(a)
    y = aten._to_copy.default(x, dtype=opdispatch.float64)
    assert not y.is_alias_of(x) and y.dtype == opdispatch.float64
    np.testing.assert_array_equal(y.numpy(), a)
    same = aten._to_copy.default(x)  # nothing changes, still a copy
    assert not same.is_alias_of(x) and same.dtype == opdispatch.int64
    m = aten._to_copy.default(x, device="meta", dtype=opdispatch.float32)
    assert m.device == "meta" and m.dtype == opdispatch.float32 and m.shape == (2, 3)
    out = opdispatch.zeros([1], dtype=opdispatch.int64)
    aten._to_copy.out(x, out=out)
    np.testing.assert_array_equal(out.numpy(), a)
