"""Groupings of native functions.

* variant groups: functional / in-place / mutable / out= versions of one signature
  (what structured kernels are generated for);
* view groups: a view, its in-place view and its ``*_copy`` twin;
* operator groups: every function sharing a base name (``add``, ``add_``,
  ``add.out``, ``__iadd__``) -- the unit opgen generates, caches and compiles.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional, Sequence, Union

from ..errors import OpgenError
from .autogen import variant_families
from .native_function import NativeFunction, ViewKind
from .schema import SchemaKind


@dataclass(frozen=True)
class VariantGroup:
    functional: NativeFunction
    inplace: Optional[NativeFunction]
    mutable: Optional[NativeFunction]
    out: NativeFunction

    @property
    def structured(self) -> bool:
        return self.out.structured

    def functions(self) -> Iterator[NativeFunction]:
        yield self.functional
        yield self.out
        if self.inplace is not None:
            yield self.inplace
        if self.mutable is not None:
            yield self.mutable

    def check(self) -> None:
        for f in self.functions():
            if f.part_of_structured_group != self.structured:
                raise OpgenError(
                    f"{f.func.name} and {self.out.func.name} form one variant group but only one of them is structured; "
                    f"mark the out= variant 'structured: True' and the others 'structured_delegate: {self.out.func.name}'", f.location)
            if f.namespace != self.out.namespace:
                raise OpgenError(f"{f.func.name} is in namespace {f.namespace} but its out= variant is in {self.out.namespace}", f.location)
        if self.mutable is not None and not self.functional.func.name.name.functional_overload:
            raise OpgenError(f"{self.functional.func.name} pairs with the mutable {self.mutable.func.name}; name it {self.functional.func.name.name.base}_functional", self.functional.location)
        if self.structured:
            for f in (self.functional, self.inplace):
                if f is not None and f.structured_delegate != self.out.func.name:
                    raise OpgenError(f"{f.func.name} delegates to {f.structured_delegate} but its out= variant is {self.out.func.name}", f.location)


@dataclass(frozen=True)
class ViewGroup:
    view: NativeFunction
    view_inplace: Optional[NativeFunction]
    view_copy: Optional[NativeFunction]

    def functions(self) -> Iterator[NativeFunction]:
        yield self.view
        if self.view_inplace is not None:
            yield self.view_inplace
        if self.view_copy is not None:
            yield self.view_copy


@dataclass(frozen=True)
class OperatorGroup:
    """All overloads of one base name, sorted by full name for stable output."""

    name: str
    functions: tuple[NativeFunction, ...]


def group_variants(functions: Sequence[NativeFunction]) -> list[Union[VariantGroup, NativeFunction]]:
    """Variant groups, with functions that belong to none left standalone (yaml order)."""
    result: list[Union[VariantGroup, NativeFunction]] = []
    for family in variant_families(functions).values():
        functional, out = family.get(SchemaKind.functional), family.get(SchemaKind.out)
        if len(family) == 1 or functional is None or out is None:
            result.extend(family.values())
            continue
        group = VariantGroup(functional, family.get(SchemaKind.inplace), family.get(SchemaKind.mutable), out)
        group.check()
        result.append(group)
    return result


def group_views(functions: Sequence[NativeFunction]) -> list[Union[ViewGroup, NativeFunction]]:
    buckets: dict[str, dict[object, NativeFunction]] = {}
    for f in functions:
        bucket = buckets.setdefault(f.func.view_signature(), {})
        slot = f.func.kind() if f.view_kind is ViewKind.non_aliasing else f.view_kind
        if slot in bucket:
            raise OpgenError(f"{f.func.name} and {bucket[slot].func.name} are both {getattr(slot, 'value', slot)} views of one signature", f.location)
        bucket[slot] = f
    result: list[Union[ViewGroup, NativeFunction]] = []
    for bucket in buckets.values():
        view = bucket.pop(ViewKind.aliasing, None)
        if view is not None:
            result.append(ViewGroup(view, bucket.pop(ViewKind.aliasing_inplace, None), bucket.pop(SchemaKind.functional, None)))
        result.extend(bucket.values())
    return result


def group_operators(functions: Sequence[NativeFunction]) -> list[OperatorGroup]:
    by_name: dict[str, list[NativeFunction]] = {}
    for f in functions:
        by_name.setdefault(f.root_name, []).append(f)
    return [
        OperatorGroup(name, tuple(sorted(fs, key=lambda f: str(f.func.name))))
        for name, fs in sorted(by_name.items())
    ]
