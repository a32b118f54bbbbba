"""Python operators on Tensor: + - * / ** @, unary - and abs(), comparisons, in-place forms,
and bool()/int()/float() of one-element tensors.

Each operator goes straight to the overload its argument types call for: a Tensor operand
to the `.Tensor` overload, a Python number to the `.Scalar` one; anything else gives
NotImplemented, so Python tries the other operand and then raises TypeError. Reflected forms
with a number on the left (2 - x, 2 / x) compute on a zero-dim tensor holding the number,
which type promotion treats like the number itself.
"""
from __future__ import annotations

from collections.abc import Iterable

from opdispatch import _C, _left_out, _op_table

# Python operator -> the overloads it calls, in the order tried (Tensor operand first).
BINARY: dict[str, tuple[str, ...]] = {
    "__add__": ("aten::add.Tensor", "aten::add.Scalar"),
    "__radd__": ("aten::add.Scalar",),             # number + x == x + number
    "__iadd__": ("aten::add_.Tensor", "aten::add_.Scalar"),
    "__sub__": ("aten::sub.Tensor", "aten::sub.Scalar"),
    "__isub__": ("aten::sub_.Tensor", "aten::sub_.Scalar"),
    "__mul__": ("aten::mul.Tensor", "aten::mul.Scalar"),
    "__rmul__": ("aten::mul.Scalar",),
    "__imul__": ("aten::mul_.Tensor", "aten::mul_.Scalar"),
    "__truediv__": ("aten::div.Tensor", "aten::div.Scalar"),
    "__itruediv__": ("aten::div_.Tensor", "aten::div_.Scalar"),
    "__pow__": ("aten::pow.Tensor_Tensor", "aten::pow.Tensor_Scalar"),
    "__ipow__": ("aten::pow_.Tensor", "aten::pow_.Scalar"),
    "__matmul__": ("aten::matmul",),
    "__eq__": ("aten::eq.Tensor", "aten::eq.Scalar"),
    "__ne__": ("aten::ne.Tensor", "aten::ne.Scalar"),
    "__lt__": ("aten::lt.Tensor", "aten::lt.Scalar"),
    "__le__": ("aten::le.Tensor", "aten::le.Scalar"),
    "__gt__": ("aten::gt.Tensor", "aten::gt.Scalar"),
    "__ge__": ("aten::ge.Tensor", "aten::ge.Scalar"),
}
# number ** x: pow.Scalar(Scalar self, Tensor exponent) takes the tensor second.
REFLECTED_SCALAR_FIRST: dict[str, str] = {"__rpow__": "aten::pow.Scalar"}
# number - x, number / x: no overload takes the number first, so it becomes a tensor.
REFLECTED_VIA_TENSOR: dict[str, str] = {"__rsub__": "aten::sub.Tensor", "__rtruediv__": "aten::div.Tensor"}
UNARY: dict[str, str] = {"__neg__": "aten::neg", "__abs__": "aten::abs"}

# Python numbers a zero-dim tensor stands for: the dtype it gets when the tensor's own dtype
# is of a lower kind (bool < integer < floating), as a bare number would promote.
_KIND = {_C.bool: 0, _C.int32: 1, _C.int64: 1, _C.float32: 2, _C.float64: 2}
_DEFAULT_FOR_KIND = {0: _C.bool, 1: _C.int64, 2: _C.float32}


def _number_kind(value) -> int:
    return 0 if isinstance(value, bool) else 1 if isinstance(value, int) else 2


def _is_number(value) -> bool:
    return isinstance(value, (int, float))


def number_tensor(value, like: _C.Tensor) -> _C.Tensor:
    """A zero-dim tensor of `value` on like's device that promotes with `like` as the bare
    number would: like's dtype when the number is of the same kind or lower."""
    kind = _number_kind(value)
    dtype = like.dtype if _KIND[like.dtype] >= kind else _DEFAULT_FOR_KIND[kind]
    # CUDA operands take the number as a 0-d CPU tensor (kernels read it once, as a scalar);
    # a host fill cannot write CUDA memory.
    device = "cpu" if like.device.startswith("cuda") else like.device
    return _C._host_full([], value, dtype=dtype, device=device)


def _reflected_via_tensor(name: str, qualified: str):
    operator = _C._overload_set(f"Tensor.{name}", [qualified])

    def reflected(self, other):
        if not _is_number(other):
            return NotImplemented
        return operator(number_tensor(other, self), self)

    reflected.__name__ = reflected.__qualname__ = name
    reflected.__doc__ = f"number {name[3:-2]} tensor, through {qualified}."
    return reflected


def _one_element(self, what: str):
    if self.numel() != 1:
        raise RuntimeError(f"{what} of a tensor with {self.numel()} elements is ambiguous; "
                           f"only one-element tensors convert")
    return self.item()


def __bool__(self) -> bool:
    return bool(_one_element(self, "bool()"))


def __int__(self) -> int:
    return int(_one_element(self, "int()"))


def __float__(self) -> float:
    return float(_one_element(self, "float()"))


def __format__(self, spec: str) -> str:
    if spec and self.dim() == 0:
        return format(self.item(), spec)  # f"{loss:.3f}" formats the number
    return format(repr(self), spec)


def __pos__(self):
    return self


def _known_operators() -> set:
    return {o for table in (_op_table.FUNCTIONS, _op_table.METHODS) for overloads in table.values() for o in overloads}


def _available(overloads: Iterable[str], known: set) -> bool:
    return all(o in known for o in overloads)


def _left_out_operator(tensor_type: type, name: str, overloads: Iterable[str]) -> None:
    """The Python operator `name` of a selective build that left out one of its operators."""
    left_out = [o for o in overloads if _left_out.is_left_out(o)]
    if left_out:
        setattr(tensor_type, name, _left_out.function(name, _left_out.packet_of(left_out[0]), method=True))


def install_operators(tensor_type: type) -> None:
    """Sets the Python operators whose operators the yaml has on `tensor_type`; one whose
    operator a selective build left out raises opdispatch.Error saying so."""
    known = _known_operators()
    for name, overloads in BINARY.items():
        if _available(overloads, known):
            setattr(tensor_type, name, _C._overload_set(f"Tensor.{name}", list(overloads), is_method=True,
                                                       not_implemented=True))
        else:
            _left_out_operator(tensor_type, name, overloads)
    for name, qualified in REFLECTED_SCALAR_FIRST.items():
        if qualified in known:
            setattr(tensor_type, name, _C._overload_set(f"Tensor.{name}", [qualified], [1], is_method=True,
                                                       not_implemented=True))
        else:
            _left_out_operator(tensor_type, name, [qualified])
    for name, qualified in REFLECTED_VIA_TENSOR.items():
        if qualified in known:
            setattr(tensor_type, name, _reflected_via_tensor(name, qualified))
        else:
            _left_out_operator(tensor_type, name, [qualified])
    for name, qualified in UNARY.items():
        if qualified in known:
            setattr(tensor_type, name, _C._overload_set(f"Tensor.{name}", [qualified], is_method=True))
        else:
            _left_out_operator(tensor_type, name, [qualified])
    for function in (__bool__, __int__, __float__, __format__, __pos__):
        setattr(tensor_type, function.__name__, function)
    # __eq__ is elementwise; hashing stays by identity, as for any Python object.
    tensor_type.__hash__ = object.__hash__
    # numpy scalars on the left (np.float32(2) * x) defer to our reflected operators instead of
    # turning x into an ndarray through __array__.
    tensor_type.__array_priority__ = 1000
