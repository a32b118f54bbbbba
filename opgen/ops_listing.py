"""``opgen ops``: which operators a yaml defines, per operator group: each overload's variants,
kernels per dispatch key and FILE:LINE.  Pure functions from a Model to text or JSON."""
from __future__ import annotations

import difflib
import fnmatch
import json
from dataclasses import dataclass

from .model.loader import Model
from .model.native_function import NativeFunction


class NoMatch(Exception):
    """A pattern that names no operator; the message suggests close names."""


@dataclass(frozen=True)
class Overload:
    name: str  # add.Tensor, or myops::scale outside aten
    schema: str
    variants: tuple[str, ...]
    kernels: tuple[tuple[str, str], ...]  # (dispatch key, kernel), sorted by key
    structured_delegate: str | None  # where a kernel-less structured variant's kernels come from
    location: str  # FILE:LINE


@dataclass(frozen=True)
class GroupListing:
    name: str
    overloads: tuple[Overload, ...]


def _overload(model: Model, f: NativeFunction) -> Overload:
    kernels = tuple(sorted((str(key), meta.kernel) for key, meta in model.kernels_of(f).items()))
    delegate = str(f.structured_delegate) if f.structured_delegate else None
    return Overload(f.key, str(f.func), tuple(f.variants), kernels, delegate, str(f.location))


def _names_of(f: NativeFunction) -> tuple[str, ...]:
    # A pattern may name the overload with or without its namespace.
    return (str(f.func.name), f.key)


def select(model: Model, pattern: str) -> tuple[GroupListing, ...]:
    """Groups whose name matches ``pattern`` (all their overloads), else the overloads whose full
    name does; NoMatch when nothing does."""
    listings = []
    for group in sorted(model.operator_groups, key=lambda g: g.name):
        if fnmatch.fnmatchcase(group.name, pattern):
            functions = group.functions
        else:
            functions = tuple(f for f in group.functions if any(fnmatch.fnmatchcase(n, pattern) for n in _names_of(f)))
        if functions:
            listings.append(GroupListing(group.name, tuple(_overload(model, f) for f in functions)))
    if not listings:
        raise NoMatch(_no_match_message(model, pattern))
    return tuple(listings)


def _no_match_message(model: Model, pattern: str) -> str:
    names = sorted({g.name for g in model.operator_groups} | {n for f in model.functions for n in _names_of(f)})
    close = difflib.get_close_matches(pattern, names, n=3)
    hint = f"; did you mean {', '.join(repr(n) for n in close)}?" if close else ""
    return f"no operator matches '{pattern}'{hint}"


def ops_json(model: Model, groups: tuple[GroupListing, ...]) -> str:
    def overload(o: Overload) -> dict:
        return {"name": o.name, "schema": o.schema, "variants": list(o.variants), "kernels": dict(o.kernels),
                "structured_delegate": o.structured_delegate, "location": o.location}

    document = {"source": model.source,
                "groups": [{"name": g.name, "overloads": [overload(o) for o in g.overloads]} for g in groups]}
    return json.dumps(document, indent=1, sort_keys=True) + "\n"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _kernels_text(o: Overload) -> str:
    if o.kernels:
        return "  ".join(f"{key}: {kernel}" for key, kernel in o.kernels)
    return f"structured_delegate: {o.structured_delegate}" if o.structured_delegate else "-"


def ops_text(groups: tuple[GroupListing, ...]) -> str:
    """One heading per group, then one row per overload: name, variants, FILE:LINE, KEY: kernel ...
    Columns line up across the whole listing."""
    rows = {g.name: [(o.name, ", ".join(o.variants), o.location, _kernels_text(o)) for o in g.overloads] for g in groups}
    widths = [max(len(row[column]) for group_rows in rows.values() for row in group_rows) for column in range(3)]
    lines = []
    for group in groups:
        lines.append(f"{group.name}  ({_count(len(group.overloads), 'overload')})")
        for row in rows[group.name]:
            cells = [cell.ljust(width) for cell, width in zip(row, widths)] + [row[3]]
            lines.append("  " + "  ".join(cells).rstrip())
    total = sum(len(g.overloads) for g in groups)
    lines.append(f"{_count(len(groups), 'operator group')}, {_count(total, 'overload')}")
    return "\n".join(lines) + "\n"
