"""The public C++ API: ``op::add(a, b, alpha)``, ``op::add_out(out, a, b)``, ``a.add(b)``.

Free functions take and return ``TensorBase``, the method-free runtime tensor, so kernels and
generated code can call them without seeing any method.  Tensor methods are defined inside
class ``op::Tensor`` (csrc/api/tensor.h, for code that calls methods); they return ``Tensor``
so calls chain (``a.add(b).mul(c)``).  Each omitted trailing default is its own overload:
overloads of different schemas that would collide (``sum()`` of ``sum`` and of ``sum.dim_IntList``)
are then visible as the same C++ signature and declared once, where default values would make
the call ambiguous.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..model.native_function import NativeFunction, cpp_name
from .bindings import Binding
from .defaults import cpp_default
from . import dispatcher


@dataclass(frozen=True)
class CppFunction:
    name: str
    returns: str
    params: tuple[Binding, ...]  # declaration order, defaults included
    call_args: tuple[str, ...]   # the handle's arguments, in dispatcher order


@dataclass(frozen=True)
class CppMethod:
    name: str
    returns: str
    params: tuple[Binding, ...]  # no defaults
    call_args: tuple[str, ...]   # dispatcher order; `*this` for self, defaults filled in
    returns_self: bool           # in-place: the handle returns self as TensorBase&, the method *this as Tensor&


_TENSOR_BASE = re.compile(r"\bTensorBase\b")


def _method_return(dispatcher_return: str) -> str:
    """A method returns ``Tensor`` where the handle returns ``TensorBase`` (tuples convert too);
    a vector cannot convert, so it stays ``std::vector<TensorBase>``."""
    if "std::vector" in dispatcher_return:
        return dispatcher_return
    return _TENSOR_BASE.sub("Tensor", dispatcher_return)


def _with_defaults(f: NativeFunction, order: list[int]) -> list[Binding]:
    """Dispatcher bindings in ``order``, with the schema defaults C++ can express (trailing ones)."""
    plain = dispatcher.bindings(f)
    args = list(f.func.arguments.all())
    result: list[Binding] = []
    for i in order:
        a = args[i]
        default = None
        if a.default is not None and a.name not in f.cpp_no_default_args:
            default = cpp_default(a.default, a.type)
        result.append(Binding(plain[i].name, plain[i].type, default))
    # C++ defaults must be trailing: drop any default followed by a parameter without one.
    seen_required = False
    for i in reversed(range(len(result))):
        if result[i].default is None:
            seen_required = True
        elif seen_required:
            result[i] = Binding(result[i].name, result[i].type)
    return result


def functions(f: NativeFunction) -> list[CppFunction]:
    """Free functions of a function-variant operator (out= ops get ``_out`` and ``_outf``)."""
    if "function" not in f.variants:
        return []
    n = len(list(f.func.arguments.all()))
    names = [b.name for b in dispatcher.bindings(f)]
    ret = dispatcher.return_type(f)
    if not f.func.is_out_fn():
        return [CppFunction(cpp_name(f.func), ret, tuple(_with_defaults(f, list(range(n)))), tuple(names))]
    n_out = len(f.func.arguments.out)
    out_first = list(range(n - n_out, n)) + list(range(n - n_out))
    base = str(f.func.name.name)
    return [
        CppFunction(f"{base}_out", ret, tuple(_with_defaults(f, out_first)), tuple(names)),
        CppFunction(f"{base}_outf", ret, tuple(dispatcher.bindings(f)), tuple(names)),
    ]


def methods(f: NativeFunction) -> list[CppMethod]:
    """Tensor method overloads: one per number of trailing defaults omitted."""
    self_arg = f.func.arguments.self_arg
    if "method" not in f.variants or self_arg is None or f.func.is_out_fn():
        return []
    all_bindings = _with_defaults(f, list(range(len(list(f.func.arguments.all())))))
    self_binding = next(b for b in all_bindings if b.name == self_arg.name)
    writes_self = self_binding.type == "TensorBase&"
    this = "const_cast<Tensor&>(*this)" if writes_self else "*this"
    params = [b for b in all_bindings if b.name != self_arg.name]
    first_default = next((i for i, b in enumerate(params) if b.default is not None), len(params))
    handle_returns = dispatcher.return_type(f)
    returns_self = writes_self and handle_returns == "TensorBase&"
    ret = _method_return(handle_returns)
    overloads = []
    for kept in range(first_default, len(params) + 1):
        given = {b.name for b in params[:kept]}
        call = tuple(this if b.name == self_arg.name else (b.name if b.name in given else b.default) for b in all_bindings)
        declared = tuple(Binding(b.name, b.type) for b in params[:kept])
        overloads.append(CppMethod(cpp_name(f.func), ret, declared, call, returns_self))
    return overloads
