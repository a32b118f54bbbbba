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
from typing import Iterable, Mapping, Optional

from ..fingerprint import digest
from .loader import Model
from .native_function import NativeFunction
from .schema import OperatorName


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
    written, generated = _split(model.functions)
    if not digests or len(digests) != len(written):
        return None  # no digests, or a name in two namespaces (one digest for both)
    functions = _written_tokens(written, digests)
    if functions is None:
        return None
    families: dict[str, list[str]] = {}
    for f in written:
        families.setdefault(f.func.family_key(), []).append(functions[f.key])
    for f in generated:
        members = families.get(f.func.family_key())
        if not members:
            return None  # made from no written function of its family: nothing here says what it was made from
        functions[f.key] = digest(b"generated", " ".join(members).encode())
    groups = {g.name: tuple(f.key for f in g.functions) for g in model.operator_groups}
    return ModelTokens(functions, groups)


def _split(functions: Iterable[NativeFunction]) -> tuple[list[NativeFunction], list[NativeFunction]]:
    """(written, generated), each in model order."""
    written, generated = [], []
    for f in functions:
        (generated if f.generated else written).append(f)
    return written, generated


def _written_tokens(written: list[NativeFunction], digests: Mapping[OperatorName, str]) -> Optional[dict[str, str]]:
    """{key: entry digest} of the written functions. The parse cache records the digests in entry
    order, keyed by the functions' own names, so they pair up in order (compared by identity,
    where a lookup would hash each name); else, by lookup."""
    if all(f.func.name is name for f, name in zip(written, digests)):
        return {f.key: token for f, token in zip(written, digests.values())}
    tokens = {}
    for f in written:
        token = digests.get(f.func.name)
        if token is None:
            return None
        tokens[f.key] = token
    return tokens


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
