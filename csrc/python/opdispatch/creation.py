"""opdispatch.tensor(data, dtype=None, device=None, requires_grad=False): a new tensor from nested
lists, numbers or numpy arrays (always a copy; from_numpy shares memory instead)."""
from __future__ import annotations

import numpy as np

from opdispatch import _C

# numpy kinds of Python data without an explicit dtype: Python floats become float32 (the
# default dtype), Python ints int64 and bools bool; numpy arrays keep their own dtype.
_DEFAULT_FOR_KIND = {"b": _C.bool, "i": _C.int64, "u": _C.int64, "f": _C.float32}
_BY_NAME = {d.name: d for d in (_C.bool, _C.int32, _C.int64, _C.float32, _C.float64)}


def _infer_dtype(data, array: np.ndarray):
    if isinstance(data, (np.ndarray, np.generic)):
        found = _BY_NAME.get(array.dtype.name)
        if found is None:
            raise TypeError(f"can't convert a numpy array of dtype {array.dtype}; supported dtypes: "
                            f"{', '.join(_BY_NAME)}")
        return found
    found = _DEFAULT_FOR_KIND.get(array.dtype.kind)
    if found is None:
        raise TypeError(f"can't make a tensor from {type(data).__name__} data "
                        f"(numpy sees dtype {array.dtype}); expected numbers, bools or nested lists of them")
    return found


# Devices whose tensors only their kernels can make or read (CUDA memory; lazy tensors, which
# hold IR): moves to and from them go through _to_copy. opdispatch.lazy adds "lazy" when loaded.
_KERNEL_DEVICES = {"cuda"}


def use_device_kernels(device_type: str) -> None:
    """Moves to and from `device_type` go through its _to_copy kernel from now on."""
    _KERNEL_DEVICES.add(device_type)


def move_to(t: _C.Tensor, device: str) -> _C.Tensor:
    """t on `device`. CUDA and lazy tensors are moved by their kernels (through _to_copy); other
    devices, including external ones emulated on the host that have no kernels yet, by a host copy."""
    if _KERNEL_DEVICES & {str(device).split(":")[0], t.device.split(":")[0]}:
        return _to_copy(t, device)
    return _C._host_to(t, device=device)


def _to_copy(t: _C.Tensor, device: str) -> _C.Tensor:
    from opdispatch import ops  # noqa: PLC0415 - ops imports the package; resolve at call time
    return ops.aten._to_copy.default(t, device=device)


def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> _C.Tensor:
    """A tensor holding a copy of `data` (a number, nested lists/tuples, or an ndarray); a leaf
    that requires grad when `requires_grad` (floating dtypes only)."""
    if isinstance(data, _C.Tensor):
        if data.device == "meta":
            raise TypeError("can't copy the values of a meta tensor: it has none")
        data = move_to(data, "cpu").numpy()
    if dtype is not None and not isinstance(dtype, _C.dtype):
        raise TypeError(f"dtype must be an opdispatch dtype, not {type(dtype).__name__}{_C._dtype_mismatch_detail(dtype)}")
    array = np.asarray(data)
    chosen = dtype if dtype is not None else _infer_dtype(data, array)
    array = np.asarray(array, dtype=np.dtype(chosen.name), order="C")
    result = _C._from_numpy_copy(array)
    result = result if device is None else move_to(result, device)
    if _C._functionalization_enabled():  # inside opdispatch.functionalize: a functional tensor
        from opdispatch import ops  # noqa: PLC0415 - ops imports the package; resolve at call time
        result = ops.aten.lift_fresh.default(result)
    if requires_grad:
        result.requires_grad_(True)
    return result
