"""Umbrella headers: sorted include lists of the per-group headers, the only generated files
that name every group.  They change only when the set of groups (or of their headers) does."""
from __future__ import annotations

from typing import Mapping, Sequence

from ..engine import layout
from ..engine.render import render

_UMBRELLAS = (
    (layout.FUNCTIONS_H, "The C++ API of every operator group.", layout.api_header),
    (layout.OPERATORS_H, "The operator handles of every operator group.", layout.handles_header),
    (layout.NATIVE_FUNCTIONS_H, "The hand-written kernel declarations of every operator group.", layout.native_header),
    (layout.META_FUNCTIONS_H, "The structured meta classes of every operator group that has them.", layout.meta_header),
    (layout.TENSOR_METHODS_H, "Tensor methods of every group; included inside class op::Tensor (csrc/api/tensor.h).",
     layout.methods_header),
)
# The handles the methods call, included before class op::Tensor: groups with methods only.
_METHOD_OPERATORS = (layout.METHOD_OPERATORS_H, "The operator handles of every group with Tensor methods.")


def render_umbrellas(files_by_group: Mapping[str, Sequence[str]]) -> dict[str, str]:
    out = {}
    for path, description, header_of in _UMBRELLAS:
        headers = [header_of(g) for g in sorted(files_by_group) if header_of(g) in files_by_group[g]]
        out[path] = render("umbrella.h.j2", description=description, headers=headers)
    path, description = _METHOD_OPERATORS
    headers = [layout.handles_header(g) for g in sorted(files_by_group) if layout.methods_header(g) in files_by_group[g]]
    out[path] = render("umbrella.h.j2", description=description, headers=headers)
    return out
