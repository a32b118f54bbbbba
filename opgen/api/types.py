"""Schema types as C++ types of the runtime (csrc/core), for the dispatcher convention.

Generated code lives inside ``namespace op``, so runtime types are written unqualified.  A
tensor is ``TensorBase``, the runtime's tensor without operator methods: every generated
declaration compiles against the method-free core, so an edit to one operator's methods
recompiles only the code that calls methods (see csrc/api/tensor.h).
Every base type has a runtime type; core/tensor.h brings most of them, and ``headers()`` names
the header of each one it does not (Stream, QScheme, Dimname, DimVector), for the generated
headers of the groups that use them. GraphModule (a Python object, in no operator of PyTorch's
yaml) has a name only: an operator using it would not compile.
"""
from __future__ import annotations

from typing import Iterable

from ..model.schema import Argument, FunctionSchema, Return
from ..model.types import BaseTy, BaseType, ListType, OptionalType, Type

# Base types passed by value (cheap scalars and enums).
_BY_VALUE = {
    BaseTy.int: "int64_t", BaseTy.SymInt: "int64_t", BaseTy.float: "double", BaseTy.bool: "bool",
    BaseTy.SymBool: "bool", BaseTy.str: "std::string_view", BaseTy.ScalarType: "ScalarType",
    BaseTy.Layout: "Layout", BaseTy.Device: "Device", BaseTy.DeviceIndex: "int8_t",
    BaseTy.MemoryFormat: "MemoryFormat", BaseTy.QScheme: "QScheme", BaseTy.Dimname: "Dimname",
    BaseTy.Stream: "Stream", BaseTy.DimVector: "DimVector",
}
# Base types passed by const reference.
_BY_REF = {BaseTy.Tensor: "TensorBase", BaseTy.Scalar: "Scalar", BaseTy.Generator: "Generator",
           BaseTy.Storage: "Storage", BaseTy.GraphModule: "GraphModule"}
# Element types of list arguments (lists are views: ArrayRef).
_LIST_ELEM = {BaseTy.float: "double", BaseTy.Tensor: "TensorBase", BaseTy.Scalar: "Scalar", BaseTy.Dimname: "Dimname"}
# Headers of the runtime types core/tensor.h does not include (csrc/core).
_HEADERS = {BaseTy.Stream: "core/stream.h", BaseTy.QScheme: "core/qscheme.h", BaseTy.Dimname: "core/dimname.h",
            BaseTy.DimVector: "core/dim_vector.h"}
# Return types of base types (by value; mutable tensors are handled by the caller).
_RETURN = {**_BY_VALUE, **_BY_REF, BaseTy.str: "std::string"}


def headers(types: Iterable[Type]) -> list[str]:
    """The headers, sorted, a declaration using ``types`` includes beside core/tensor.h."""
    return sorted({_HEADERS[b] for b in map(_innermost, types) if b in _HEADERS})


def schema_types(func: FunctionSchema) -> list[Type]:
    """The types of a schema's arguments and returns."""
    return [a.type for a in func.arguments.all()] + [r.type for r in func.returns]


def _innermost(t: Type) -> BaseTy:
    while not isinstance(t, BaseType):
        t = t.elem
    return t.name


def value_type(t: Type) -> str:
    """The C++ type holding a value of ``t`` (no reference, no const)."""
    if isinstance(t, BaseType):
        return _BY_VALUE.get(t.name) or _BY_REF[t.name]
    if isinstance(t, OptionalType):
        return f"std::optional<{value_type(t.elem)}>"
    assert isinstance(t, ListType)
    return _list_type(t)


def _list_type(t: ListType) -> str:
    elem = t.elem
    if isinstance(elem, BaseType) and elem.name is BaseTy.bool:
        return "std::vector<bool>"  # a packed vector<bool> has no ArrayRef view
    if isinstance(elem, OptionalType) and elem.elem == BaseType(BaseTy.Tensor):
        return "ArrayRef<std::optional<TensorBase>>"
    if isinstance(elem, BaseType) and elem.name in (BaseTy.int, BaseTy.SymInt):
        return "IntArrayRef"
    if isinstance(elem, BaseType) and elem.name in _LIST_ELEM:
        return f"ArrayRef<{_LIST_ELEM[elem.name]}>"
    return f"std::vector<{value_type(elem)}>"


def _by_value(t: Type) -> bool:
    """Scalars, enums and array views are passed by value; tensors, Scalars and vectors by const reference."""
    if isinstance(t, BaseType):
        return t.name in _BY_VALUE
    if isinstance(t, OptionalType):
        return _by_value(t.elem)
    return not _list_type(t).startswith("std::vector")


def argument_type(a: Argument, *, mutable_is_const: bool = False) -> str:
    """Dispatcher convention: tensors by const reference, written tensors by reference."""
    if a.type == BaseType(BaseTy.Tensor) and a.is_write and not mutable_is_const:
        return "TensorBase&"
    cpp = value_type(a.type)
    return cpp if _by_value(a.type) else f"const {cpp}&"


def return_type(func: FunctionSchema, *, mutable_is_const: bool = False) -> str:
    """``void``, one type, or a ``std::tuple``; returns aliasing written arguments are references."""
    types = return_types(func, mutable_is_const=mutable_is_const)
    if not types:
        return "void"
    if len(types) == 1:
        return types[0]
    return f"std::tuple<{', '.join(types)}>"


def return_types(func: FunctionSchema, *, mutable_is_const: bool = False) -> list[str]:
    """The C++ type of each return, in order."""
    return [_one_return(r, mutable_is_const) for r in func.returns]


def _one_return(r: Return, mutable_is_const: bool) -> str:
    if r.type == BaseType(BaseTy.Tensor) and r.is_write:
        return "const TensorBase&" if mutable_is_const else "TensorBase&"
    if isinstance(r.type, ListType) and r.type.elem == BaseType(BaseTy.Tensor):
        return "std::vector<TensorBase>"
    if isinstance(r.type, BaseType):
        return _RETURN[r.type.name]
    return value_type(r.type)
