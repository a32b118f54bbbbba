"""Which unlisted variants an external backend gets as wrappers around its functional kernel.

The rule is torchgen's (gen_backend_stubs / gen_lazy_tensor registrations), so a backend yaml
registers the same operators with either generator:

- only when the yaml leaves ``use_out_as_primary`` off;
- only for an in-place or out= variant the yaml does not list, whose functional sibling it lists
  at the same dispatch key (the backend key or its autograd key);
- only inside a family (variants sharing one signature) that has an out= variant: torchgen groups
  functional / in-place / mutable / out= variants only then, and derives nothing for ungrouped
  functions.

The last point is what keeps ``t_`` from being derived from ``t``: its family has no out= variant,
so the dispatcher's CompositeExplicitAutograd kernel (which changes metadata, not data) stays in
charge, where a copy of ``t(self)`` into ``self`` would be wrong.
"""
from __future__ import annotations

from typing import Optional

from ...model.backend import BackendIndex
from ...model.native_function import NativeFunction
from ...model.schema import SchemaKind
from .families import GroupRelations

DERIVED_KINDS = (SchemaKind.inplace, SchemaKind.out)


def functional_to_wrap(relations: GroupRelations, index: BackendIndex, f: NativeFunction) -> Optional[NativeFunction]:
    """The listed functional variant a wrapper for ``f`` calls at ``index``'s key, or None when
    torchgen would register nothing for ``f`` there."""
    if index.use_out_as_primary or index.has_kernel(f.func.name) or f.func.kind() not in DERIVED_KINDS:
        return None
    if relations.sibling(f, SchemaKind.out) is None:
        return None
    functional = relations.sibling(f, SchemaKind.functional)
    if functional is None or not index.has_kernel(functional.func.name):
        return None
    return functional
