"""Tokens of what each function of a model was made from, so that what an earlier model's functions
gave (the autograd plan, fingerprints, derivatives entries) can stand for a later model wherever
its functions are unchanged: an edit of one operator in native_functions.yaml then derives again
only what reads that operator.

- A written function is made from its entry's text alone: its schema, its fields, and its kernels
  (the entry's dispatch section). Its token is the entry's digest (``Model.entry_digests``).
- A generated function (``autogen``) is made from the written functions of its signature family
  (expand_autogen reads nothing else): its token is a digest of their tokens.

Tokens exist only for a model whose every written function has an entry digest (the parse cache's
models) and whose names do not repeat across namespaces (the digests are by name).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

from ..fingerprint import digest
from .loader import Model
from .native_function import NativeFunction


@dataclass(frozen=True)
class ModelTokens:
    functions: dict[str, str]              # function key -> token, in model order
    groups: dict[str, tuple[str, ...]]     # operator group name -> its functions' keys


@dataclass(frozen=True)
class ModelChanges:
    """What differs between two models, by their tokens."""

    functions: frozenset[str]     # keys of the functions changed, added or removed
    groups: frozenset[str]        # the groups those are (or were) in: changed, added or removed
    added_groups: frozenset[str]  # the groups new to the later model


def model_tokens(model: Model) -> Optional[ModelTokens]:
    """The tokens of ``model``'s functions; None when it has no entry digests."""
    digests = model.entry_digests
    written = _written_families(model.functions)
    if not digests or len(digests) != sum(len(members) for members in written.values()):
        return None  # no digests, or a name in two namespaces (one digest for both)
    functions: dict[str, str] = {}
    for f in model.functions:
        if f.generated:
            members = written.get(f.func.family_key(), ())
            token = digest(b"generated", " ".join(digests[g.func.name] for g in members).encode())
        else:
            token = digests.get(f.func.name)
            if token is None:
                return None
        functions[f.key] = token
    groups = {g.name: tuple(f.key for f in g.functions) for g in model.operator_groups}
    return ModelTokens(functions, groups)


def _written_families(functions: Iterable[NativeFunction]) -> dict[str, list[NativeFunction]]:
    families: dict[str, list[NativeFunction]] = {}
    for f in functions:
        if not f.generated:
            families.setdefault(f.func.family_key(), []).append(f)
    return families


def changes_between(before: ModelTokens, after: ModelTokens) -> Optional[ModelChanges]:
    """The changes from ``before`` to ``after``; None when the functions both have are in another
    order (an entry moved: what follows the model's order is derived again, whole)."""
    old, new = before.functions, after.functions
    if [k for k in old if k in new] != [k for k in new if k in old]:
        return None
    functions = frozenset(k for k, token in new.items() if old.get(k) != token) | frozenset(k for k in old if k not in new)
    groups = {name for tokens in (before, after) for name, keys in tokens.groups.items() if not functions.isdisjoint(keys)}
    return ModelChanges(functions, frozenset(groups), frozenset(after.groups.keys() - before.groups.keys()))


def family_members(model: Model) -> dict[str, tuple[str, ...]]:
    """{family key: the keys of the functions sharing it, in model order}: a derivatives entry
    reads its function's family, which is within these."""
    members: dict[str, list[str]] = {}
    for f in model.functions:
        members.setdefault(f.func.family_key(), []).append(f.key)
    return {family: tuple(keys) for family, keys in members.items()}


def families_of_changed(model: Model, changes: ModelChanges) -> frozenset[str]:
    """The family keys the changed functions have in ``model``: the families they joined or stay in."""
    return frozenset(f.func.family_key() for f in model.functions if f.key in changes.functions)
