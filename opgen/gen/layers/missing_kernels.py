"""Kernels a library's yaml names that none of its sources defines: which declarations the
undefined symbols of a group's object are, and the one translation unit of stubs that raise
``op::Error("<Key> kernel <name> of <operator> is not implemented")`` in their place.

Pure: the symbols come from the caller (link_check.py reads them from objects with ``nm``);
the declarations, keys and operators from the model (declarations.py).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...fingerprint import digest, package_fingerprint
from ...model.dispatch_keys import DispatchKey
from ..engine import layout
from .declarations import Declaration, DeclarationKind, joined_by_symbol
from ..engine.render import render

STUBS_SOURCE = "missing_kernels.cpp"


@dataclass(frozen=True)
class Missing:
    group: str
    declaration: Declaration


@dataclass(frozen=True)
class Unresolved:
    """An undefined symbol named like one of the group's declarations that matches none exactly."""
    group: str
    symbol: str
    like: Declaration


def resolve(group: str, declarations: list[Declaration], symbols: set[str]) -> tuple[list[Missing], list[Unresolved]]:
    """The group's declarations whose symbols are among ``symbols`` (undefined in its object and
    defined nowhere), in header order; a symbol no declaration spells exactly (a type
    api/symbols.py renders otherwise than the demangler) is the one declaration of that name and
    number of parameters left, else unresolved. Symbols of other functions are not kernels: ignored."""
    by_symbol = {d.symbol: d for d in declarations}
    found = {by_symbol[s].symbol for s in symbols if s in by_symbol}
    unresolved = []
    for s in sorted(symbols - set(by_symbol)):
        name, arity = split_symbol(s)
        named = [d for d in declarations if d.qualified == name]
        candidates = [d for d in named if len(d.bindings) == arity and d.symbol not in found]
        if len(candidates) == 1:
            found.add(candidates[0].symbol)
        elif named:
            unresolved.append(Unresolved(group, s, named[0]))
    return [Missing(group, d) for d in declarations if d.symbol in found], unresolved


def split_symbol(symbol: str) -> tuple[str, int]:
    """("op::native::add_out", 4) of "op::native::add_out(op::TensorBase const&, ...)"."""
    name, _, rest = symbol.partition("(")
    inside = rest.rsplit(")", 1)[0].strip()
    if not inside:
        return name, 0
    depth, count = 0, 1
    for char in inside:
        if char in "<(":
            depth += 1
        elif char in ">)":
            depth -= 1
        elif char == "," and depth == 0:
            count += 1
    return name, count


@dataclass(frozen=True)
class StubsSource:
    """What the stubs' translation unit is rendered from (render_missing_kernels)."""

    stubs: tuple[tuple[tuple[str, object], ...], ...]  # each stub's template fields, as (name, value) pairs
    includes: tuple[str, ...]

    def key(self) -> str:
        """One digest of these and opgen's codegen sources and templates: on PyTorch's yaml the
        render is most of an edit's kernel check, and what it renders rarely changes with an edit
        (the edited group's kernels are missing before and after, with the same signatures), so
        the build renders only when this changes."""
        return digest(package_fingerprint("gen").encode(), package_fingerprint("templates").encode(),
                      repr((self.stubs, self.includes)).encode())

    def render(self) -> str:
        return render("missing_kernels.cpp.j2", stubs=[dict(stub) for stub in self.stubs], includes=list(self.includes))


def stubs_source(missing: list[Missing], keys: tuple[DispatchKey, ...]) -> StubsSource:
    """The stubs' template fields: each group's native header (and through it its meta header),
    then one definition per missing declaration raising op::Error; ``keys`` are the dispatch keys
    the build registers (what the messages name)."""
    # One definition per symbol: groups declaring one kernel alike share its stub (its uses joined).
    ordered = sorted(missing, key=lambda m: (m.group, m.declaration.symbol))
    declarations = joined_by_symbol(m.declaration for m in ordered)
    groups = {m.group for m in ordered}
    # Inverses are declared only in the Functionalize files that call them: declared here too.
    stubs = tuple((("returns", d.returns), ("scope", d.scope), ("name", d.name), ("params", d.params),
                   ("declare", d.kind is DeclarationKind.INVERSE), ("message", f"{d.describe(keys)} is not implemented"))
                  for d in declarations)
    return StubsSource(stubs, tuple(layout.native_header(group) for group in sorted(groups)))


def render_missing_kernels(missing: list[Missing], keys: tuple[DispatchKey, ...]) -> str:
    """The stubs' translation unit (stubs_source)."""
    return stubs_source(missing, keys).render()
