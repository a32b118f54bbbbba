"""Derivative infos for ``_foreach_`` functions without an entry, derived as torchgen 2.13 does
(gen_foreach_derivativeinfo) from the per-tensor operator's info.

- The *reference* of ``_foreach_xxx``: the first info (derivatives.yaml order, then the *_copy
  infos) of a functional function named ``xxx`` whose arguments pair up with the foreach
  function's: as many of them (except for add/sub's Scalar overloads, which lack ``alpha``), and
  each of the reference's types equal to the foreach argument's type or its element type
  (``Tensor`` for ``Tensor[]``, ``Scalar`` for ``Scalar[]``). Infos are looked up by signature
  (defaults, annotations, out= arguments and overload names stripped), one per signature: the
  later info of a signature replaces the earlier, in the earlier's place. ``_foreach_zero_`` is
  the one whose reference is in-place (``zero_``).
- An in-place foreach function uses the reference's info itself (no node of its own); any other
  foreach function gets an info of its own, node ``Foreach`` + the reference's node + the
  overload name (``ForeachAddBackward1Scalar``).
- Arguments are renamed pairwise (reference name -> foreach name); a list argument is indexed
  per element (``self`` -> ``self[i]``), ``grad`` becomes ``grads[i]`` and ``result``
  ``result[i]``. A derived saved value (``other_scalar_type``) saves the whole foreach argument
  (``other``): the per-element expression is evaluated in the backward. A saved output must be
  ``result`` (the list of outputs).
"""
from __future__ import annotations

import re
from typing import Callable, Iterable, Optional

from ..errors import OpgenError
from .derivative_info import DEFAULT, DerivativeInfo, Formula, ForwardFormula
from .formulas import is_derived_name
from .native_function import NativeFunction
from .schema import Argument, FunctionSchema, SchemaKind
from .types import ListType

PREFIX = "_foreach_"
# The foreach function whose reference is an in-place function (zero_ has the entry, not zero).
INPLACE_REFERENCE = frozenset({"_foreach_zero_"})
# Overloads without the reference's alpha: they match with fewer arguments.
WITHOUT_ALPHA = frozenset(f"_foreach_{op}{inplace}.{overload}" for op in ("add", "sub") for inplace in ("", "_")
                          for overload in ("Scalar", "ScalarList"))
# Identifiers a formula reads (not members, not qualified names).
_IDENTIFIER = re.compile(r"(?<![\w.])(?<!->)(?<!::)[A-Za-z_]\w*")


def is_foreach(f: NativeFunction) -> bool:
    return f.func.name.name.base.startswith(PREFIX)


def _flat(schema: FunctionSchema) -> tuple[Argument, ...]:
    return schema.arguments.positional + schema.arguments.kwarg_only


class References:
    """The infos a foreach function may take as reference, by signature (family key): functional
    ones, and the non-functional ones (for _foreach_zero_)."""

    def __init__(self, functions: Iterable[NativeFunction], infos: Iterable[DerivativeInfo]):
        by_key = {f.key: f for f in functions}
        grouped: dict[str, dict[str, DerivativeInfo]] = {}
        for info in infos:
            grouped.setdefault(info.key, {})[info.dispatch_key] = info
        self.functional: dict[str, tuple[NativeFunction, dict[str, DerivativeInfo]]] = {}
        self.non_functional: dict[str, tuple[NativeFunction, dict[str, DerivativeInfo]]] = {}
        for key, by_dispatch in grouped.items():
            f = by_key[key]
            table = self.functional if f.func.kind() is SchemaKind.functional else self.non_functional
            table[f.func.family_key()] = (f, by_dispatch)
        # Each table's references by base name, in table order: a reference pairs up only with the
        # foreach function of its name, so find() looks at those alone.
        self._by_base = (_by_base(self.functional), _by_base(self.non_functional))

    def find(self, f: NativeFunction) -> Optional[tuple[FunctionSchema, DerivativeInfo]]:
        """(the reference's signature, its Default info) for the foreach function ``f``, or None."""
        tables = [self._by_base[0]]
        if f.func.kind() is SchemaKind.inplace and str(f.func.name) in INPLACE_REFERENCE:
            tables.append(self._by_base[1])
        base = f.func.name.name.base[len(PREFIX):]
        for table in tables:
            for ref, by_dispatch in table.get(base, ()):
                if DEFAULT in by_dispatch:
                    signature = ref.func.signature(strip_default=True)
                    if _pairs_up(f, signature):
                        return signature, by_dispatch[DEFAULT]
        return None


def _by_base(table: dict[str, tuple[NativeFunction, dict[str, DerivativeInfo]]]) -> dict[str, list]:
    index: dict[str, list] = {}
    for ref, by_dispatch in table.values():
        index.setdefault(ref.func.name.name.base, []).append((ref, by_dispatch))
    return index


def _pairs_up(f: NativeFunction, signature: FunctionSchema) -> bool:
    if f.func.name.name.base[len(PREFIX):] != signature.name.name.base:
        return False
    mine, theirs = _flat(f.func), _flat(signature)
    if len(mine) != len(theirs) and str(f.func.name) not in WITHOUT_ALPHA:
        return False
    return all(ref.type == arg.type or ref.type == getattr(arg.type, "elem", None) for arg, ref in zip(mine, theirs))


def reference_info(f: NativeFunction, references: References) -> Optional[DerivativeInfo]:
    """The info an in-place foreach function uses: its reference's, unchanged."""
    found = references.find(f) if is_foreach(f) and f.func.kind() is SchemaKind.inplace else None
    return found[1] if found else None


def foreach_infos(functions: Iterable[NativeFunction], infos: list[DerivativeInfo],
                  on_error: Callable[[OpgenError], None]) -> list[DerivativeInfo]:
    """The infos torchgen derives for foreach functions that have no entry of their own, in the
    functions' order. A reference that cannot be mapped is reported (at the foreach function)."""
    functions = list(functions)
    references = References(functions, infos)
    have = {i.key for i in infos}
    derived = []
    for f in functions:
        if not is_foreach(f) or f.key in have or f.func.kind() is SchemaKind.inplace:
            continue
        if f.generated and (f.func.kind() is SchemaKind.out or f.func.family_key() in references.non_functional):
            continue  # torchgen matches these before deriving: nothing, or a mutable variant's entry
        found = references.find(f)
        if found is not None:
            try:
                derived.append(_derive(f, *found))
            except OpgenError as exc:
                on_error(exc)
    return derived


def _derive(f: NativeFunction, signature: FunctionSchema, ref: DerivativeInfo) -> DerivativeInfo:
    pairs = {r.name: a for a, r in zip(_flat(f.func), _flat(signature))}
    where = f"{f.func.name} (derived from {ref.key}'s formulas)"
    backward = {"grad": "grads[i]", "result": "result[i]"}
    backward.update((name, a.name + "[i]" if isinstance(a.type, ListType) else a.name) for name, a in pairs.items())
    formulas = []
    for formula in ref.formulas:
        missing = [n for n in formula.var_names if n not in pairs]
        if missing:
            raise OpgenError(f"{where}: no argument of {f.func.name} pairs with {', '.join(missing)}", f.location)
        outputs = [n for n in formula.saved_outputs if n != "result"]
        if outputs:
            raise OpgenError(f"{where}: the formula saves {', '.join(outputs)}; a derived foreach formula may save 'result' only", f.location)
        formulas.append(Formula(
            var_names=tuple(pairs[n].name for n in formula.var_names),
            text=_rename(formula.text, backward),
            location=formula.location,
            saved_inputs=tuple(pairs[_argument_of(n, pairs, where, f)].name for n in formula.saved_inputs),
            saved_outputs=formula.saved_outputs,
        ))
    forward = {"result": "result[i]"}
    for name, a in pairs.items():
        if a.type.is_tensor_like():
            forward.update({f"{name}_p": f"{a.name}_p", f"{name}_t": f"{a.name}_t"})
        else:
            forward[name] = a.name + "[i]" if isinstance(a.type, ListType) else a.name
    with_formula = {n for d in formulas for n in d.var_names}
    return DerivativeInfo(
        name=f.func.name, namespace=f.namespace, dispatch_key=DEFAULT,
        node=f"Foreach{ref.node}{f.func.name.overload_name}" if ref.node else None,
        formulas=tuple(formulas),
        forward_formulas=tuple(ForwardFormula(d.var_names, _rename(d.text, forward), d.location) for d in ref.forward_formulas),
        differentiable_inputs=tuple(a.name for a in _flat(f.func) if a.name in with_formula),
        non_differentiable=(),
        saved_inputs=tuple(dict.fromkeys(n for d in formulas for n in d.saved_inputs)),
        saved_outputs=tuple(dict.fromkeys(n for d in formulas for n in d.saved_outputs)),
        output_differentiability=None, output_differentiability_conditions=None,
        differentiable_outputs=tuple(r.type.is_tensor_like() for r in f.func.returns),
        location=ref.location, derived_from=ref.name,
    )


def _argument_of(saved: str, pairs: dict[str, Argument], where: str, f: NativeFunction) -> str:
    """The reference argument a saved name stands for: itself, or the one it is derived from
    (``self_sym_sizes`` -> ``self``; the longest such name)."""
    if saved in pairs:
        return saved
    candidates = sorted((n for n in pairs if is_derived_name(saved, (n,))), key=len, reverse=True)
    if not candidates:
        raise OpgenError(f"{where}: the formula saves '{saved}', which no argument of {f.func.name} pairs with", f.location)
    return candidates[0]


def _rename(text: str, names: dict[str, str]) -> str:
    """Each identifier of ``text`` in ``names`` replaced, in one pass (a new name is never renamed again)."""
    return _IDENTIFIER.sub(lambda m: names.get(m.group(0), m.group(0)), text)
