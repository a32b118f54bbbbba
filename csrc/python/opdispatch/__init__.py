"""opdispatch: the dispatcher runtime from Python.

    import opdispatch
    t = opdispatch.tensor([[1., 2.], [3., 4.]])
    lib = opdispatch.library.Library("myops", "DEF")
    lib.define("double(Tensor x) -> Tensor")
    lib.impl("double", "CPU", lambda x: ...)
    opdispatch.ops.myops.double(t)

Tensors and dtypes come from the C++ extension (_C); operators are called through
opdispatch.ops, registered through opdispatch.library and inspected through
opdispatch.dispatcher.
"""
from opdispatch import _C
from opdispatch._C import (  # noqa: F401 - the public API
    Error,
    Tensor,
    dtype,
    bool,
    int32,
    int64,
    float32,
    float64,
    empty,
    from_numpy,
    full,
    zeros,
)
from opdispatch.creation import tensor  # noqa: F401
from opdispatch import dispatcher, library, ops  # noqa: F401
from opdispatch.dispatcher import register_device_type  # noqa: F401

__all__ = [
    "Error", "Tensor", "dtype", "bool", "int32", "int64", "float32", "float64",
    "empty", "from_numpy", "full", "zeros", "tensor", "register_device_type",
    "dispatcher", "library", "ops",
]
