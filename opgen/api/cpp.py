"""The public C++ API: ``op::add(a, b, alpha)``, ``op::add_out(out, a, b)``, ``a.add(b)``.

Free functions keep the schema's defaults.  Tensor methods are declared inside class
``op::Tensor``, which every translation unit sees, so their declarations carry no default
values: a default becomes one overload per omitted trailing argument, filled in by the
definition in the group's own header.  Editing a default therefore rewrites only that
group's header, not the class every object includes.
"""
from __future__ import annotations

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
    this = "const_cast<Tensor&>(*this)" if self_binding.type == "Tensor&" else "*this"
    params = [b for b in all_bindings if b.name != self_arg.name]
    first_default = next((i for i, b in enumerate(params) if b.default is not None), len(params))
    ret = dispatcher.return_type(f)
    overloads = []
    for kept in range(first_default, len(params) + 1):
        given = {b.name for b in params[:kept]}
        call = tuple(this if b.name == self_arg.name else (b.name if b.name in given else b.default) for b in all_bindings)
        declared = tuple(Binding(b.name, b.type) for b in params[:kept])
        overloads.append(CppMethod(cpp_name(f.func), ret, declared, call))
    return overloads
