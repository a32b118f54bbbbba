"""The hand-written functions one operator group's generated code calls: plain kernels (in
``op::native``), structured impl() members (``op::native::structured_<kernel>``) and structured
meta() members (``op::meta::structured_<functional>``).

One list says it for the group's native header (``ops/<g>_native.h``), its meta header
(``ops/<g>_meta.h``) and the stubs a build with missing kernels stubbed defines
(missing_kernels.py): each declaration knows its C++ signature, the symbol ``nm -C`` prints for
it, and the dispatch keys and operators that call it, from the model's BackendIndexes.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from enum import Enum
from typing import Iterable, Iterator

from ...api import dispatcher, structured
from ...api.bindings import Binding, params
from ...api.symbols import symbol
from ...errors import Location
from ...model.backend import DEFAULT_KERNEL_NAMESPACE, BackendIndex, BackendMetadata
from ...model.dispatch_keys import IN_TREE_KEYS, DispatchKey
from ...model.native_function import NativeFunction
from .families import GroupRelations
from .kernels import is_generated_view_copy


class DeclarationKind(Enum):
    KERNEL = "kernel"   # a plain kernel function: native::add_scalar(...)
    IMPL = "impl"       # a structured kernel's impl(): native::structured_add_out::impl(...)
    META = "meta"       # a structured family's meta(): meta::structured_add_Tensor::meta(...)
    INVERSE = "inverse"  # a view's functional inverse, which Functionalize calls: functionalization::inverse::view(...)


# Where the view kernels' functional inverses are defined by hand (csrc/functionalization).
INVERSE_SCOPE = "functionalization::inverse"


@dataclass(frozen=True)
class Use:
    """A dispatch key at which an operator calls the declared function."""
    key: DispatchKey
    operator: str        # as the dispatcher names it: aten::add.out
    location: Location   # the operator's yaml entry


@dataclass(frozen=True)
class Declaration:
    kind: DeclarationKind
    scope: str                    # inside namespace op: "native", "native::structured_add_out", "meta::structured_add_Tensor"
    name: str                     # add_out, impl, meta
    returns: str                  # inside namespace op, qualified for use outside the class
    bindings: tuple[Binding, ...]
    uses: tuple[Use, ...]
    base: str = ""                # IMPL: its meta class; META: the class it derives from
    precomputed: tuple[Binding, ...] = ()  # META: the fields of precompute_out (it returns one)

    @property
    def qualified(self) -> str:
        return f"op::{self.scope}::{self.name}"

    @property
    def params(self) -> str:
        return params(self.bindings)

    @functools.cached_property  # sorted and joined by it: ~45 us each, thousands on PyTorch's yaml
    def symbol(self) -> str:
        """What ``nm -C`` prints for it: op::native::add_out(op::TensorBase const&, ...)."""
        return symbol(self.qualified, [b.type for b in self.bindings])

    @property
    def kernel(self) -> str:
        """What a message calls it: the yaml's kernel name, or the structured class's meta()."""
        if self.kind is DeclarationKind.META:
            return f"{self.scope.rpartition('::')[2]}::meta"
        if self.kind is DeclarationKind.IMPL:
            return self.scope.rpartition("::")[2][len("structured_"):]
        return self.name

    def describe(self, keys: tuple[DispatchKey, ...] = ()) -> str:
        """"CPU kernel add_out of aten::add.out": the uses at ``keys`` (all uses when none is);
        "Functionalize inverse transpose_int of aten::transpose.int" for an inverse."""
        uses = [u for u in self.uses if u.key in keys] or list(self.uses)
        key_names = ", ".join(dict.fromkeys(u.key.value for u in uses))
        operators = ", ".join(dict.fromkeys(u.operator for u in uses))
        what = "inverse" if self.kind is DeclarationKind.INVERSE else "kernel"
        return f"{key_names} {what} {self.kernel} of {operators}"

    @property
    def location(self) -> Location:
        return min(u.location for u in self.uses)


def joined_by_symbol(declarations: Iterable[Declaration]) -> list[Declaration]:
    """One declaration per symbol, in first-seen order, with the uses of all that spell it
    (transpose_ and transpose call one inverse; two groups may declare one kernel alike)."""
    by_symbol: dict[str, Declaration] = {}
    for d in declarations:
        first = by_symbol.setdefault(d.symbol, d)
        if first is not d:
            by_symbol[d.symbol] = replace(first, uses=first.uses + d.uses)
    return list(by_symbol.values())


def inverse_declaration(view: NativeFunction, self_name: str, use: Use) -> Declaration:
    """The functional inverse of ``view`` (the out-of-place view): the base and the mutated view,
    then the view's arguments but self."""
    bindings = (Binding("base", "const TensorBase&"), Binding("mutated_view", "const TensorBase&"),
                *(b for b in dispatcher.bindings(view) if b.name != self_name))
    return Declaration(DeclarationKind.INVERSE, INVERSE_SCOPE, view.func.name.unambiguous_name(), "TensorBase", bindings, (use,))


def in_tree_kernels(f: NativeFunction, indices: dict[DispatchKey, BackendIndex]) -> Iterator[tuple[DispatchKey, BackendMetadata]]:
    """(key, metadata) of f's in-tree kernels (op::native), whatever keys this build compiles."""
    for key in _IN_TREE_BY_NAME:
        index = indices.get(key)
        meta = index.get(f.func.name) if index is not None else None
        if meta is not None and meta.cpp_namespace == DEFAULT_KERNEL_NAMESPACE:
            yield key, meta


# The in-tree keys by name, sorted once (in_tree_kernels runs for every function of every group).
_IN_TREE_BY_NAME = tuple(sorted(IN_TREE_KEYS, key=lambda k: k.value))


def group_declarations(relations: GroupRelations, indices: dict[DispatchKey, BackendIndex]) -> list[Declaration]:
    """The group's declarations in header order: meta() members (one per structured family),
    impl() members (one per structured kernel), then plain kernels (one per C++ signature)."""
    metas = [_meta(relations, out) for out in relations.group.functions if out.structured]
    impls: dict[str, Declaration] = {}
    kernels: dict[str, Declaration] = {}
    for f in relations.group.functions:
        for key, meta in in_tree_kernels(f, indices):
            use = Use(key, dispatcher.qualified_name(f), f.location)
            if meta.structured:
                name = structured.impl_class(meta.kernel)
                declared = impls.get(name) or Declaration(
                    DeclarationKind.IMPL, f"native::{name}", "impl", "void", tuple(structured.impl_bindings(f)), (),
                    base=structured.meta_class(relations.functional_of(f)))
                impls[name] = replace(declared, uses=declared.uses + (use,))
            elif not f.generated and not is_generated_view_copy(f, key):
                declared = Declaration(DeclarationKind.KERNEL, "native", meta.kernel, dispatcher.return_type(f),
                                       tuple(dispatcher.bindings(f)), ())
                declared = kernels.get(declared.symbol, declared)
                kernels[declared.symbol] = replace(declared, uses=declared.uses + (use,))
    return metas + list(impls.values()) + list(kernels.values())


def _meta(relations: GroupRelations, out: NativeFunction) -> Declaration:
    name = structured.meta_class(relations.functional_of(out))
    fields = tuple(structured.precomputed_fields(out))
    return Declaration(DeclarationKind.META, f"meta::{name}", "meta",
                       f"meta::{name}::precompute_out" if fields else "void",
                       tuple(structured.meta_bindings(out)),
                       (Use(DispatchKey.Meta, dispatcher.qualified_name(out), out.location),),
                       base=structured.meta_base(out), precomputed=fields)
