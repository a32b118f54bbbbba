"""opdispatch.Tensor from Python: numpy round trips, attributes, printing, dtypes, devices."""
import pickle

import numpy as np
import pytest

DTYPES = ["bool", "int32", "int64", "float32", "float64"]


def _sample(np_dtype, shape=(3, 4)):
    values = np.arange(int(np.prod(shape))).reshape(shape)
    return (values % 2 == 1) if np_dtype == np.bool_ else values.astype(np_dtype) * (1.5 if np.dtype(np_dtype).kind == "f" else 1)


@pytest.mark.parametrize("name", DTYPES)
def test_numpy_round_trip_every_dtype(opdispatch, name):
    array = _sample(np.dtype(name).type)
    for t in (opdispatch.from_numpy(array), opdispatch.tensor(array)):
        assert t.dtype is getattr(opdispatch, name)
        assert t.shape == array.shape and t.device == "cpu"
        back = t.numpy()
        assert back.dtype == array.dtype and back.shape == array.shape
        np.testing.assert_array_equal(back, array)
        assert not np.shares_memory(back, array)  # numpy() copies


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("view", ["transpose", "step", "column", "broadcast", "empty", "scalar"])
def test_non_contiguous_inputs(opdispatch, name, view):
    base = _sample(np.dtype(name).type, (4, 6))
    array = {
        "transpose": base.T,
        "step": base[::2, 1::3],
        "column": base[:, 2],
        "broadcast": np.broadcast_to(base[0], (3, 6)),  # read-only, stride 0
        "empty": base[:0, ::2],
        "scalar": base[1, 1][()],
    }[view]
    array = np.asarray(array)
    t = opdispatch.from_numpy(array)
    assert t.shape == array.shape
    np.testing.assert_array_equal(t.numpy(), array)
    np.testing.assert_array_equal(opdispatch.tensor(array).numpy(), array)
    if view in ("transpose", "step", "column") and array.flags.writeable:
        assert not t.is_contiguous()
        itemsize = array.itemsize
        assert t.strides == tuple(s // itemsize for s in array.strides)


def test_from_numpy_shares_memory_and_keeps_the_array_alive(opdispatch):
    array = np.zeros((2, 3), dtype=np.float64)
    view = opdispatch.from_numpy(array[:, 1:])
    array[0, 1] = 5.0
    assert view.numpy()[0, 0] == 5.0
    assert view.strides == (3, 1) and view.storage_offset == 0
    del array
    np.testing.assert_array_equal(view.numpy(), [[5.0, 0.0], [0.0, 0.0]])


def test_from_numpy_copies_read_only_and_rejects_negative_strides(opdispatch):
    frozen = np.arange(4, dtype=np.int64)
    frozen.flags.writeable = False
    t = opdispatch.from_numpy(frozen)
    np.testing.assert_array_equal(t.numpy(), frozen)
    with pytest.raises(ValueError, match="strides"):
        opdispatch.from_numpy(np.arange(4.0)[::-1])
    np.testing.assert_array_equal(opdispatch.tensor(np.arange(4.0)[::-1]).numpy(), [3.0, 2.0, 1.0, 0.0])


@pytest.mark.parametrize("bad", [np.arange(3, dtype=np.uint8), np.arange(3, dtype=np.float16),
                                 np.arange(3, dtype=">f8"), np.array(["a"])])
def test_unsupported_numpy_dtypes_raise_type_error(opdispatch, bad):
    with pytest.raises(TypeError, match="supported dtypes"):
        opdispatch.from_numpy(bad)


def test_tensor_from_lists_infers_dtypes(opdispatch):
    assert opdispatch.tensor([[1.0, 2.0], [3.0, 4.0]]).dtype is opdispatch.float32
    assert opdispatch.tensor([1, 2]).dtype is opdispatch.int64
    assert opdispatch.tensor([True, False]).dtype is opdispatch.bool
    assert opdispatch.tensor(3.5).shape == ()
    assert opdispatch.tensor(3.5).item() == 3.5
    assert opdispatch.tensor([]).shape == (0,)
    t = opdispatch.tensor([1, 2], dtype=opdispatch.float64)
    assert t.dtype is opdispatch.float64 and t.tolist() == [1.0, 2.0]
    assert opdispatch.tensor(t).tolist() == [1.0, 2.0]
    with pytest.raises(TypeError):
        opdispatch.tensor(["a", "b"])
    with pytest.raises(TypeError, match="opdispatch dtype"):
        opdispatch.tensor([1], dtype="float32")


def test_attributes(opdispatch):
    t = opdispatch.tensor(np.zeros((2, 3, 4), dtype=np.int32))
    assert t.shape == (2, 3, 4) and t.ndim == 3 and t.dim() == 3 and t.numel() == 24 and len(t) == 2
    assert t.strides == (12, 4, 1) and t.storage_offset == 0 and t.is_contiguous()
    assert t.size() == (2, 3, 4) and t.size(-1) == 4
    tt = t.transpose(0, 2)
    assert tt.shape == (4, 3, 2) and tt.strides == (1, 4, 12) and not tt.is_contiguous()
    assert tt.is_alias_of(t) and not tt.contiguous().is_alias_of(t)
    assert np.asarray(tt).shape == (4, 3, 2)


def test_printing(opdispatch):
    assert repr(opdispatch.tensor([[1.0, 2.0], [3.0, 4.0]])) == "tensor([[1., 2.],\n        [3., 4.]])"
    assert repr(opdispatch.tensor([[1.0, 2.5]], dtype=opdispatch.float64)) == "tensor([[1.0000, 2.5000]], dtype=float64)"
    assert str(opdispatch.tensor([1, 2])) == "tensor([1, 2])"
    assert str(opdispatch.tensor([1, 2], dtype=opdispatch.int32)) == "tensor([1, 2], dtype=int32)"
    assert str(opdispatch.tensor([True])) == "tensor([True])"
    assert str(opdispatch.tensor(7)) == "tensor(7)"
    assert str(opdispatch.empty([2, 3], device="meta")) == "tensor(..., device='meta', size=(2, 3))"


def test_dtype_objects(opdispatch):
    assert [d.name for d in (opdispatch.bool, opdispatch.int32, opdispatch.int64, opdispatch.float32,
                             opdispatch.float64)] == DTYPES
    assert repr(opdispatch.float32) == "opdispatch.float32" and str(opdispatch.int64) == "opdispatch.int64"
    assert opdispatch.float32 == opdispatch.float32 and opdispatch.float32 != opdispatch.float64
    assert len({opdispatch.float32, opdispatch.tensor([1.0]).dtype}) == 1
    assert opdispatch.float64.itemsize == 8 and opdispatch.float64.is_floating_point
    assert not opdispatch.int32.is_floating_point
    assert pickle.loads(pickle.dumps(opdispatch.int32)) is opdispatch.int32
    assert isinstance(opdispatch.bool, opdispatch.dtype)


def test_devices_meta_and_external(opdispatch):
    meta = opdispatch.empty([2, 3], device="meta")
    assert meta.device == "meta" and meta.shape == (2, 3) and meta.dtype is opdispatch.float32
    with pytest.raises(TypeError, match="meta tensors have shape and dtype but no data"):
        meta.numpy()
    from_data = opdispatch.tensor([1.0, 2.0], device="meta")
    assert from_data.device == "meta" and from_data.shape == (2,)
    lazy = opdispatch.tensor([1, 2], device="lazy")
    assert lazy.device == "lazy"
    with pytest.raises(TypeError, match="copy it to the cpu first"):
        lazy.numpy()
    assert lazy.to("cpu").tolist() == [1, 2]
    # Factories are operators, and "lazy" has no kernels here: tensor() places values by host copy.
    assert opdispatch.tensor([0, 0, 0], dtype=opdispatch.int32, device="lazy:1").device == "lazy:1"
    assert opdispatch.full([2], 7).to(opdispatch.int64).tolist() == [7, 7]
    with pytest.raises(RuntimeError, match="unknown device type 'nope'"):
        opdispatch.tensor([1.0], device="nope")
    with pytest.raises(TypeError):
        opdispatch.empty("x")


def test_tensors_cannot_be_constructed_directly(opdispatch):
    with pytest.raises(TypeError):
        opdispatch.Tensor()
