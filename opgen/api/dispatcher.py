"""The dispatcher's calling convention: every schema argument in schema order, no defaults.

Operator handles, kernels registered with the dispatcher and redispatch all use it.
"""
from __future__ import annotations

import weakref

from ..model.native_function import NativeFunction
from . import types
from .bindings import Binding


def bindings(f: NativeFunction) -> list[Binding]:
    known = _BINDINGS.get(id(f))
    if known is None or known[0]() is not f:
        const_mutable = f.use_const_ref_for_mutable_tensors
        known = _BINDINGS[id(f)] = (weakref.ref(f), tuple(
            Binding(a.name, types.argument_type(a, mutable_is_const=const_mutable)) for a in f.func.arguments.all()))
    return list(known[1])


# A group's layers ask for a function's bindings ~10 times: worked out once per function, found
# by identity (hashing a NativeFunction costs more than its bindings).
_BINDINGS: dict[int, tuple[weakref.ref, tuple[Binding, ...]]] = {}


def return_type(f: NativeFunction) -> str:
    return types.return_type(f.func, mutable_is_const=f.use_const_ref_for_mutable_tensors)


def signature_type(f: NativeFunction) -> str:
    """The function type the typed handle checks against the schema: ``Tensor(const Tensor&, ...)``."""
    return f"{return_type(f)}({', '.join(b.type for b in bindings(f))})"


# Handle names that would hide a namespace generated code names inside op::ops (PyTorch's
# aten::std would make every `std::optional` there mean the struct).
_SHADOWING = frozenset({"std"})


def handle_name(f: NativeFunction) -> str:
    """Name of the operator-handle struct in ``op::ops``: add.Tensor -> add_Tensor (std -> std_)."""
    name = f.func.name.unambiguous_name()
    return f"{name}_" if name in _SHADOWING else name


def qualified_name(f: NativeFunction) -> str:
    """What the dispatcher calls the operator: ``aten::add.Tensor``."""
    return f"{f.namespace}::{f.func.name}"
