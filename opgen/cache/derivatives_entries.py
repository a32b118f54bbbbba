"""Read an edited derivatives.yaml again entry by entry, from the previous read of the same file
(autograd_cache.py's miss), so an edit of one formula reads that entry alone.

An entry is taken from the previous read, moved to its new line, when its text is unchanged (its
digest), its mapping starts on its '- ' line (so all its locations move with the item) and what it
read of the model is unchanged: the same model, a family whose functions' tokens are unchanged
(``FamilyCheck``, against an earlier model), or the same functions sharing its schema's
signature (``DerivativeEntry.model_facts``). Every other entry is read alone, its lines numbered as
in the file. Then ``assemble_derivatives`` numbers the nodes across the file, derives the *_copy
and _foreach_ infos and runs the checks across entries on the whole, as a whole read does. Any
problem (an entry that does not read alone, a second entry for a function, any error) sends the
file through the whole read, so messages never depend on what was remembered.

Across an edit of the operator yaml with the same derivatives bytes, ``carried_whole`` takes the
previous read whole when nothing its entries or its assembly read of the model changed.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Optional

from ..errors import DiagnosticCollector, OpgenError
from ..fingerprint import digest
from ..model.derivatives import (
    MANUAL_AUTOGRAD, DerivativeEntry, Derivatives, ModelFunctions, assemble_derivatives, build_derivatives,
    needs_formula, read_entries,
)
from ..model.foreach_derivatives import PREFIX as FOREACH_PREFIX
from ..model.grouping import ViewGroup
from ..model.loader import ERROR_CAP, Model
from ..model.model_tokens import ModelChanges, families_of_changed, family_members
from ..model.native_function import NativeFunction
from ..yamlio import load_bytes, load_entry_alone, mapping_on_first_line, top_level_items


# Whether the previous read's entry (its index and itself) read the same of this model as of its own.
EntryCheck = Callable[[int, DerivativeEntry], bool]


def read_derivatives(data: bytes, name: str, model: Model, previous: Optional[Derivatives] = None, *,
                     same_model: bool = False, family_unchanged: Optional[EntryCheck] = None) -> Derivatives:
    """The derivatives of ``data`` (the yaml's bytes; ``name``: what messages call it) read against
    ``model``, taking unchanged entries from ``previous`` (an earlier read of a file of that name;
    ``same_model``: against this very model; ``family_unchanged``: against an earlier model, and
    which of its entries' families are unchanged, by token: others compare what they read).
    Remembers each entry's text digest for the next read."""
    items = _top_level_items(data)
    derivatives = None
    if previous is not None and previous.entry_digests and items is not None:
        derivatives = _reread_edited(items, name, model, previous, same_model, family_unchanged)
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
                   same_model: bool, family_unchanged: Optional[EntryCheck]) -> Optional[Derivatives]:
    """The derivatives of the edited file from ``previous`` plus the entries whose text (or whose
    functions) changed; None when the file must be read whole."""
    known = {entry_digest: i for i, entry_digest in enumerate(previous.entry_digests)}
    functions = ModelFunctions(model)
    entries, digests = [], []
    for line, text in items:
        entry_digest = digest(text.encode("utf-8"))
        index = known.get(entry_digest) if mapping_on_first_line(text) else None
        entry = previous.entries[index] if index is not None else None
        if entry is not None and (same_model or (family_unchanged is not None and family_unchanged(index, entry))
                                  or functions.facts(entry.spec) == entry.model_facts):
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


# ----- across edits of the operator yaml -----

@dataclass(frozen=True)
class DerivativesBasis:
    """What a read of derivatives.yaml took from the model it was read against, so that a later
    model (with the changes between the two, model_tokens.py) tells what still reads the same: the
    yaml's digest; per entry, its function and the keys of its function's family, in model order
    (all an entry reads of the model is in that family); the model's views with their *_copy
    twins (whose infos are derived from the views')."""

    data: str
    functions: tuple[NativeFunction, ...]  # per entry, in order (stored as references: resolved by key)
    families: tuple[tuple[str, ...], ...]  # per entry, in order
    copies: tuple[tuple[str, str], ...]    # (view, its copy) by key, in the model's order


def derivatives_basis(data: bytes, derivatives: Derivatives, model: Model,
                      same_model: Optional[DerivativesBasis] = None) -> DerivativesBasis:
    """``same_model``: the basis of a read against this same model, whose families and copies are
    this one's (an edit of derivatives.yaml: found again only for the functions it lacks)."""
    functions = tuple(model.by_name[e.function] for e in derivatives.entries)
    if same_model is not None:
        known = {id(f): family for f, family in zip(same_model.functions, same_model.families)}
        if all(id(f) in known for f in functions):
            return DerivativesBasis(digest(data), functions, tuple(known[id(f)] for f in functions), same_model.copies)
    members = family_members(model)
    return DerivativesBasis(digest(data), functions, tuple(members[f.func.family_key()] for f in functions), _copies(model))


def _copies(model: Model) -> tuple[tuple[str, str], ...]:
    return tuple((g.view.key, g.view_copy.key) for g in model.view_groups if isinstance(g, ViewGroup) and g.view_copy is not None)


class FamilyCheck:
    """Whether an entry of the previous read (by its index) read a family that is unchanged in
    ``model``: none of its functions changed or left, and no changed function joined it."""

    def __init__(self, basis: DerivativesBasis, model: Model, changes: ModelChanges):
        self.basis, self.changed = basis, changes.functions
        self.joined = families_of_changed(model, changes)

    def __call__(self, index: int, entry: Optional[DerivativeEntry] = None) -> bool:
        function, family = self.basis.functions[index], self.basis.families[index]
        return function is not None and self.changed.isdisjoint(family) and function.func.family_key() not in self.joined


def family_check(basis: DerivativesBasis, previous: Derivatives, model: Model, changes: ModelChanges) -> Optional[EntryCheck]:
    """read_derivatives' ``family_unchanged`` for the entries of ``previous`` (read with ``basis``)."""
    return FamilyCheck(basis, model, changes) if len(basis.families) == len(previous.entries) else None


def carried_whole(data: bytes, previous: Derivatives, basis: DerivativesBasis, model: Model,
                  changes: ModelChanges) -> Optional[Derivatives]:
    """``previous`` (read with ``basis`` against an earlier model) when a read of the same ``data``
    against ``model`` gives it unchanged, else None. Beside the entries (each reads its family),
    the assembly reads the views and their copies, the _foreach_ functions and the functions with
    infos (the references of the foreach infos), and checks that views have formulas: each
    unchanged, or the changed functions checked again."""
    if basis.data != digest(data) or len(basis.families) != len(previous.entries):
        return None
    changed = changes.functions
    if any(key.rpartition("::")[2].startswith(FOREACH_PREFIX) for key in changed):
        return None
    if not changed.isdisjoint(info.key for info in previous.infos) or _copies(model) != basis.copies:
        return None
    family_unchanged = FamilyCheck(basis, model, changes)
    if not all(family_unchanged(i) for i in range(len(previous.entries))):
        return None
    covered = {info.name for info in previous.infos}
    for f in model.functions:
        if f.key in changed and needs_formula(f, model) and f.func.name not in covered and str(f.func.name) not in MANUAL_AUTOGRAD:
            return None  # the whole read reports it
    return previous
