"""Read an edited derivatives.yaml again entry by entry, from the previous read of the same file
(autograd_cache.py's miss), so an edit of one formula reads that entry alone.

An entry is taken from the previous read, moved to its new line, when its text is unchanged (its
digest), its mapping starts on its '- ' line (so all its locations move with the item) and what it
read of the model is unchanged: the same model, or the same functions sharing its schema's
signature (``DerivativeEntry.model_facts``). Every other entry is read alone, its lines numbered as
in the file. Then ``assemble_derivatives`` numbers the nodes across the file, derives the *_copy
and _foreach_ infos and runs the checks across entries on the whole, as a whole read does. Any
problem (an entry that does not read alone, a second entry for a function, any error) sends the
file through the whole read, so messages never depend on what was remembered.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Optional

from ..errors import DiagnosticCollector, OpgenError
from ..fingerprint import digest
from ..model.derivatives import (
    DerivativeEntry, Derivatives, ModelFunctions, assemble_derivatives, build_derivatives, read_entries,
)
from ..model.loader import ERROR_CAP, Model
from ..yamlio import load_bytes, load_entry_alone, mapping_on_first_line, top_level_items


def read_derivatives(data: bytes, name: str, model: Model, previous: Optional[Derivatives] = None, *,
                     same_model: bool = False) -> Derivatives:
    """The derivatives of ``data`` (the yaml's bytes; ``name``: what messages call it) read against
    ``model``, taking unchanged entries from ``previous`` (an earlier read of a file of that name;
    ``same_model``: against this very model). Remembers each entry's text digest for the next read."""
    items = _top_level_items(data)
    derivatives = None
    if previous is not None and previous.entry_digests and items is not None:
        derivatives = _reread_edited(items, name, model, previous, same_model)
    if derivatives is None:
        derivatives = build_derivatives(load_bytes(data, name), name, model)
        if items is not None and len(items) == len(derivatives.entries):  # each item gave its entry
            derivatives = replace(derivatives, entry_digests=tuple(digest(text.encode("utf-8")) for _, text in items))
    return derivatives


def _top_level_items(data: bytes) -> Optional[list[tuple[int, str]]]:
    try:
        return top_level_items(data.decode("utf-8"))
    except UnicodeDecodeError:
        return None  # the whole read says where


def _reread_edited(items: list[tuple[int, str]], name: str, model: Model, previous: Derivatives,
                   same_model: bool) -> Optional[Derivatives]:
    """The derivatives of the edited file from ``previous`` plus the entries whose text (or whose
    functions) changed; None when the file must be read whole."""
    known = dict(zip(previous.entry_digests, previous.entries))
    functions = ModelFunctions(model)
    entries, digests = [], []
    for line, text in items:
        entry_digest = digest(text.encode("utf-8"))
        entry = known.get(entry_digest) if mapping_on_first_line(text) else None
        if entry is not None and (same_model or functions.facts(entry.spec) == entry.model_facts):
            entry = entry.at_line(line)
        else:
            entry = _read_alone(text, line, name, model, functions)
            if entry is None:
                return None
        entries.append(entry)
        digests.append(entry_digest)
    if len({e.function for e in entries}) != len(entries):
        return None  # a second entry for a function: the whole read says which
    try:
        derivatives = assemble_derivatives(name, model, entries)
    except OpgenError:
        return None  # the whole read reports it, with every other problem of the file
    return replace(derivatives, entry_digests=tuple(digests))


def _read_alone(text: str, line: int, name: str, model: Model, functions: ModelFunctions) -> Optional[DerivativeEntry]:
    """One entry's text read with its lines numbered as in the file; None on any problem."""
    document = load_entry_alone(text, line, name)
    if document is None:
        return None
    errors = DiagnosticCollector(ERROR_CAP)
    entries = read_entries(document, name, model, errors, functions)
    return entries[0] if len(entries) == 1 and not errors.diagnostics else None
