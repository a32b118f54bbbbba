"""Structured kernels: a meta() computing output shapes and an impl() filling them.

For an operator family with ``structured: True`` on its out= variant:
  op::meta::structured_<functional>   : <structured_inherits>  { meta(non-out args) }
  op::native::structured_<out kernel> : the meta class        { impl(args, outputs as const Tensor&) }
``precomputed:`` makes meta() return a ``precompute_out`` whose fields replace arguments of impl().
"""
from __future__ import annotations

from ..model.native_function import NativeFunction
from ..model.schema import Argument
from .bindings import Binding
from . import types

DEFAULT_META_BASE = "impl::MetaBase"


def meta_class(functional: NativeFunction) -> str:
    return f"structured_{functional.func.name.unambiguous_name()}"


def impl_class(kernel: str) -> str:
    return f"structured_{kernel}"


def meta_base(out: NativeFunction) -> str:
    return out.structured_inherits or DEFAULT_META_BASE


def meta_bindings(out: NativeFunction) -> list[Binding]:
    args = out.func.arguments
    return [Binding(a.name, types.argument_type(a)) for a in (*args.positional, *args.kwarg_only)]


def precomputed_arguments(f: NativeFunction) -> list[Argument]:
    """The arguments of ``precomputed:``: the replacing ones, then the added ones."""
    if f.precomputed is None:
        return []
    return [a for _, replacements in f.precomputed.replace for a in replacements] + list(f.precomputed.add)


def precomputed_fields(out: NativeFunction) -> list[Binding]:
    """Fields of ``precompute_out``: the replacing arguments, then the added ones."""
    return [Binding(a.name, types.value_type(a.type)) for a in precomputed_arguments(out)]


def impl_bindings(out: NativeFunction) -> list[Binding]:
    """impl() parameters: inputs (precomputed replacements in place), then outputs."""
    replaced = dict(out.precomputed.replace) if out.precomputed else {}
    inputs: list[Binding] = []
    for b in meta_bindings(out):
        if b.name in replaced:
            inputs.extend(Binding(a.name, types.argument_type(a)) for a in replaced[b.name])
        else:
            inputs.append(b)
    if out.precomputed:
        inputs.extend(Binding(a.name, types.argument_type(a)) for a in out.precomputed.add)
    outputs = [Binding(a.name, "const TensorBase&") for a in out.func.arguments.out]
    return inputs + outputs


def precomputed_names(out: NativeFunction) -> set[str]:
    return {b.name for b in precomputed_fields(out)}
