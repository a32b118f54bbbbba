"""The work list of a codegen run: one job per operator group, with its content key.

A key is the hash of the group's inputs (cache/inputs.py). Keys are remembered in the codegen
cache under each group's identity (cache/memos.py), so a run computes inputs only for the groups
whose entries changed, and otherwise only when the cache records them (a key new to the group).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Optional

from ..cache.inputs import backend_group_inputs, codegen_sources, group_inputs, inputs_key
from ..cache.memos import group_identity, memo_id, remember, remembered
from ..fingerprint import digest
from ..model.backend_yaml import BackendYaml
from ..model.loader import Model
from .backend import backend_groups
from .config import CodegenConfig
from .group import GroupCodegen


@dataclass(frozen=True)
class GroupJob:
    name: str                               # the group, or "<group>@<Key>" for a backend's files
    key: str
    codegen: Any                            # .files() and .render()
    inputs: Callable[[], dict[str, str]]    # the fields the key hashes, computed on demand


def in_tree_jobs(model: Model, config: CodegenConfig, cache=None) -> list[GroupJob]:
    """A job per operator group; a group's key comes from ``cache``'s memo when its identity is there."""
    groups = model.operator_groups
    inputs_of = [partial(group_inputs, group, model.indices, config) for group in groups]
    identities = _identities(model, config)
    memo = memo_id(model.source, config.describe()) if cache is not None and model.entry_digests else None
    known = remembered(cache, memo)
    keys, pairs = {}, {}
    for group, inputs in zip(groups, inputs_of):
        identity, hit = identities[group.name], known.get(group.name)
        keys[group.name] = hit[1] if identity is not None and hit is not None and hit[0] == identity else inputs_key(inputs())
        if identity is not None:
            pairs[group.name] = (identity, keys[group.name])
    if pairs != known:
        remember(cache, memo, pairs)
    return [GroupJob(group.name, keys[group.name], GroupCodegen(group, model.indices, config), inputs)
            for group, inputs in zip(groups, inputs_of)]


def _identities(model: Model, config: CodegenConfig) -> dict[str, Optional[str]]:
    """Each group's identity, from the digests of the yaml entries of its functions. Functions
    autogen derives come from their own variant family, which lies within the group (autogen
    names keep the base name), so the group's entries determine them too. None when the model
    does not know its entries (parsed without the cache)."""
    if not model.entry_digests:
        return {group.name: None for group in model.operator_groups}
    keys_text = config.describe()
    sources = digest(*(f"{label} {value}".encode() for label, value in codegen_sources()))
    identities: dict[str, Optional[str]] = {}
    for group in model.operator_groups:
        entries = [model.entry_digests[f.func.name] for f in group.functions if f.func.name in model.entry_digests]
        identities[group.name] = group_identity(group.name, entries, keys_text, sources)
    return identities


def backend_jobs(model: Model, backend: BackendYaml) -> list[GroupJob]:
    """A job per group the backend lists (a few hundred at most: keys are computed directly)."""
    jobs = []
    for codegen in backend_groups(model.operator_groups, backend):
        inputs = partial(backend_group_inputs, codegen.group, backend)
        jobs.append(GroupJob(f"{codegen.name}@{backend.backend_key}", inputs_key(inputs()), codegen, inputs))
    return jobs
