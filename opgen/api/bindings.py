"""A C++ parameter: name, type and (for declarations) an optional default expression."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence


@dataclass(frozen=True)
class Binding:
    name: str
    type: str
    default: Optional[str] = None

    def decl(self, with_default: bool = True) -> str:
        if with_default and self.default is not None:
            return f"{self.type} {self.name} = {self.default}"
        return f"{self.type} {self.name}"


def params(bindings: Sequence[Binding], with_defaults: bool = True) -> str:
    """``const Tensor& self, const Scalar& alpha = 1``"""
    return ", ".join(b.decl(with_defaults) for b in bindings)


def names(bindings: Sequence[Binding]) -> str:
    return ", ".join(b.name for b in bindings)


def types(bindings: Sequence[Binding]) -> str:
    return ", ".join(b.type for b in bindings)
