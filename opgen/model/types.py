"""Types of the schema language: ``Tensor``, ``int[2]``, ``Scalar?``, ``Tensor?[]`` ...

A type is one of three frozen shapes (base, optional, list).  ``str(parse(s)) == s``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Optional, Union

from ..errors import SchemaError, did_you_mean


class BaseTy(Enum):
    Tensor = "Tensor"
    int = "int"
    SymInt = "SymInt"
    SymBool = "SymBool"
    float = "float"
    bool = "bool"
    str = "str"
    Scalar = "Scalar"
    ScalarType = "ScalarType"
    Layout = "Layout"
    Device = "Device"
    DeviceIndex = "DeviceIndex"
    MemoryFormat = "MemoryFormat"
    Generator = "Generator"
    Dimname = "Dimname"
    Storage = "Storage"
    Stream = "Stream"
    QScheme = "QScheme"
    GraphModule = "GraphModule"
    DimVector = "DimVector"  # only in precomputed arguments


@dataclass(frozen=True)
class BaseType:
    name: BaseTy

    def __str__(self) -> str:
        return self.name._value_  # not .value, a property in Python: schemas print ~80k types per run

    def is_tensor_like(self) -> bool:
        return self.name is BaseTy.Tensor

    def is_nullable(self) -> bool:
        return False

    def is_list_like(self) -> Optional["ListType"]:
        return None


@dataclass(frozen=True)
class OptionalType:
    elem: "Type"

    def __str__(self) -> str:
        return f"{self.elem}?"

    def is_tensor_like(self) -> bool:
        return self.elem.is_tensor_like()

    def is_nullable(self) -> bool:
        return True

    def is_list_like(self) -> Optional["ListType"]:
        return self.elem.is_list_like()


@dataclass(frozen=True)
class ListType:
    elem: "Type"
    size: Optional[int]  # fixed-size lists such as int[2]

    def __str__(self) -> str:
        return f"{self.elem}[{'' if self.size is None else self.size}]"

    def is_tensor_like(self) -> bool:
        return self.elem.is_tensor_like()

    def is_nullable(self) -> bool:
        return False

    def is_list_like(self) -> Optional["ListType"]:
        return self


Type = Union[BaseType, OptionalType, ListType]

_LIST = re.compile(r"^(.+)\[([0-9]*)\]$")
_BASE_BY_NAME = {t.value: t for t in BaseTy}


def parse_type(text: str) -> Type:
    if text.endswith("?"):
        return OptionalType(parse_type(text[:-1]))
    match = _LIST.match(text)
    if match:
        size = match.group(2)
        if size and (size.startswith("0") or int(size) == 0):
            raise SchemaError(f"list size must be a positive number without leading zeros in '{text}'")
        return ListType(parse_type(match.group(1)), int(size) if size else None)
    base = _BASE_BY_NAME.get(text)
    if base is None:
        known = sorted(_BASE_BY_NAME)
        raise SchemaError(f"unknown type '{text}'; " + did_you_mean(text, known, f"known types: {', '.join(known)}"))
    return BaseType(base)


def base_of(t: Type) -> BaseTy:
    """The innermost base type: ``Tensor?[]`` -> Tensor."""
    while not isinstance(t, BaseType):
        t = t.elem
    return t.name


TENSOR = BaseType(BaseTy.Tensor)
