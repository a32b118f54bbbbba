"""From yaml files to a validated ``Model``: parse, check across entries, autogen, index.

Every problem in the file is collected and reported together (up to a cap).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property
from typing import Collection, Mapping, Optional, Sequence, Union

from ..errors import DiagnosticCollector, OpgenError, did_you_mean
from ..project import tags_beside
from ..yamlio import iter_entries, read_located
from .autogen import expand_autogen
from .backend import BackendIndex, BackendMetadata, build_indices
from .dispatch_keys import DispatchKey
from .grouping import OperatorGroup, VariantGroup, ViewGroup, group_operators, group_variants, group_views
from .native_function import KernelTable, NativeFunction, parse_entry
from .schema import OperatorName

ERROR_CAP = 50


@dataclass(frozen=True)
class Model:
    """Everything known about the operators of one native_functions.yaml."""

    source: str
    functions: tuple[NativeFunction, ...]  # yaml order, generated functions last
    indices: dict[DispatchKey, BackendIndex]
    # Digest of the yaml text each function was parsed from (set by the parse cache; generated
    # functions have none): what is derived from one entry alone may be remembered under it.
    entry_digests: Mapping[OperatorName, str] = field(default_factory=dict, compare=False)

    @cached_property
    def by_name(self) -> dict[OperatorName, NativeFunction]:
        return {f.func.name: f for f in self.functions}

    @cached_property
    def variant_groups(self) -> list[Union[VariantGroup, NativeFunction]]:
        return group_variants(self.functions)

    @cached_property
    def view_groups(self) -> list[Union[ViewGroup, NativeFunction]]:
        return group_views(self.functions)

    @cached_property
    def operator_groups(self) -> list[OperatorGroup]:
        return group_operators(self.functions)

    def kernels_of(self, f: NativeFunction) -> dict[DispatchKey, BackendMetadata]:
        return {key: index.index[f.func.name] for key, index in self.indices.items() if f.func.name in index.index}


def default_tags_path(yaml_path: str) -> Optional[str]:
    return tags_beside(os.path.abspath(yaml_path))


def load_tags(path: Optional[str], display: Optional[str] = None) -> frozenset[str]:
    if path is None:
        return frozenset()
    name = display or path
    return tags_from_document(read_located(path, name), name)


def tags_from_document(document, name: str) -> frozenset[str]:
    """The tag names a parsed tags.yaml declares."""
    tags = set()
    for entry in iter_entries(document, name):
        tag = entry.get("tag")
        if not isinstance(tag, str) or not tag:
            raise OpgenError("each tags.yaml entry needs 'tag: NAME'", entry.where("tag"))
        if tag in tags:
            raise OpgenError(f"tag '{tag}' is declared twice", entry.where("tag"))
        tags.add(tag)
    return frozenset(tags)


def load_model(yaml_path: str, tags_path: Optional[str] = None, *, display_name: Optional[str] = None,
               tags_display_name: Optional[str] = None) -> Model:
    """Parse and validate; raises OpgenError listing every problem found.

    The display names are what error messages call the files (e.g. repo-relative paths).
    """
    name = display_name or yaml_path
    valid_tags = load_tags(tags_path, tags_display_name)
    return build_model(read_located(yaml_path, name), name, valid_tags)


ParsedEntry = tuple[NativeFunction, KernelTable]


def build_model(document, name: str, valid_tags: frozenset[str]) -> Model:
    return assemble_model(name, *parse_entries(document, name, valid_tags))


def parse_entries(document, name: str, valid_tags: frozenset[str]) -> tuple[list[ParsedEntry], DiagnosticCollector, set[str]]:
    """Each entry on its own: what parsed, the problems found, and the names of entries with
    problems (so checks across entries do not cascade from them)."""
    errors = DiagnosticCollector(ERROR_CAP)
    parsed: list[ParsedEntry] = []
    unparsed: set[str] = set()
    for entry in iter_entries(document, name, on_error=errors.extend):
        try:
            parsed.append(parse_entry(entry, valid_tags))
        except OpgenError as exc:
            errors.extend(exc, entry.where())
            unparsed.add(str(entry.get("func", "")).split("(")[0])
    return parsed, errors, unparsed


def assemble_model(name: str, parsed: Sequence[ParsedEntry], errors: Optional[DiagnosticCollector] = None,
                   unparsed: Collection[str] = frozenset(), *,
                   entry_digests: Optional[Mapping[OperatorName, str]] = None) -> Model:
    """The model of entries parsed one by one (in yaml order): checks across entries, autogen,
    kernel indices and groupings. ``errors`` may already hold the entries' own problems."""
    errors = errors if errors is not None else DiagnosticCollector(ERROR_CAP)
    functions = [f for f, _ in parsed]
    kernels = [(key, f.func.name, meta) for f, table in parsed for key, meta in table]
    _check_across_entries(functions, errors, unparsed)
    errors.sort_by_location()
    errors.raise_if_any()

    implicit = {n for key, n, _ in kernels if key is DispatchKey.CompositeImplicitAutograd}
    try:
        generated = expand_autogen(functions, implicit)
    except OpgenError as exc:
        errors.extend(exc)
        errors.sort_by_location()
        errors.raise_if_any()
    functions.extend(fn for fn, _, _ in generated)
    kernels.extend((key, fn.func.name, meta) for fn, key, meta in generated)
    model = Model(name, tuple(functions), build_indices(kernels), entry_digests or {})
    try:
        model.variant_groups, model.view_groups  # noqa: B018 - grouping validates
    except OpgenError as exc:
        errors.extend(exc)
    errors.sort_by_location()
    errors.raise_if_any()
    return model


def _check_across_entries(functions: Sequence[NativeFunction], errors: DiagnosticCollector, unparsed: Collection[str]) -> None:
    first: dict[tuple[str, OperatorName], NativeFunction] = {}
    for f in functions:
        key = (f.namespace, f.func.name)
        if key in first:
            errors.add(f.location, f"duplicate function {f.func.name} (first defined at line {first[key].location.line}); rename the overload or remove one")
        else:
            first[key] = f
    by_name = {f.func.name: f for f in functions}
    base_names = {f.func.name.name for f in functions}
    for f in functions:
        if f.structured_delegate is not None:
            target = by_name.get(f.structured_delegate)
            if target is None and str(f.structured_delegate) not in unparsed:
                others = (str(n) for n in by_name if n != f.func.name)  # delegating to itself is no fix
                hint = did_you_mean(str(f.structured_delegate), others,
                                    "point it at the structured out= variant")
                errors.add(f.location, f"structured_delegate {f.structured_delegate} does not exist; {hint}")
            elif target is not None and not target.structured:
                errors.add(f.location, f"structured_delegate {f.structured_delegate} is not structured; add 'structured: True' to {f.structured_delegate}")
        if "inplace_view" in f.tags and str(f.func.name) not in ("resize_", "resize_as_") and str(f.func.name.name) != "set_":
            base = f.func.name.name
            if not base.inplace:
                errors.add(f.location, f"{f.func.name} is tagged inplace_view but its name has no trailing '_'")
            elif base.__class__(base.base, False, base.dunder_method) not in base_names:
                errors.add(f.location, f"{f.func.name} is tagged inplace_view but there is no out-of-place view '{base.base}'")

