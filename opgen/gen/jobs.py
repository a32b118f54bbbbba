"""The work list of a codegen run: one job per operator group, with its content key.

A key is the hash of the group's inputs (inputs.py), and computing the inputs of PyTorch's 1,342
groups means canonicalizing ~150k fields (~0.2 s). The keys of a whole model are therefore
remembered in the codegen cache under a digest of everything they depend on (the parsed model's
fingerprint, the dispatch keys, opgen's codegen sources); an unchanged model reads them back and
computes a group's inputs only when the cache records them (its key is new to the group).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Optional

from ..fingerprint import digest
from ..model.backend_yaml import BackendYaml
from ..model.loader import Model
from .backend import backend_groups
from .config import CodegenConfig
from .group import GroupCodegen
from .inputs import backend_group_inputs, codegen_sources, group_inputs, inputs_key

_MEMO_FORMAT = b"opgen-group-keys-1"


@dataclass(frozen=True)
class GroupJob:
    name: str                               # the group, or "<group>@<Key>" for a backend's files
    key: str
    codegen: Any                            # .files() and .render()
    inputs: Callable[[], dict[str, str]]    # the fields the key hashes, computed on demand


def in_tree_jobs(model: Model, config: CodegenConfig, cache=None) -> list[GroupJob]:
    """A job per operator group; keys come from ``cache``'s memo when it has this model's."""
    groups = model.operator_groups
    inputs_of = [partial(group_inputs, group, model.indices, config) for group in groups]
    memo = _memo_id(model, config) if cache is not None and model.fingerprint else None
    keys = _remembered(cache, memo, [group.name for group in groups])
    if keys is None:
        keys = {group.name: inputs_key(inputs()) for group, inputs in zip(groups, inputs_of)}
        _remember(cache, memo, keys)
    return [GroupJob(group.name, keys[group.name], GroupCodegen(group, model.indices, config), inputs)
            for group, inputs in zip(groups, inputs_of)]


def backend_jobs(model: Model, backend: BackendYaml) -> list[GroupJob]:
    """A job per group the backend lists (a few hundred at most: keys are computed directly)."""
    jobs = []
    for codegen in backend_groups(model.operator_groups, backend):
        inputs = partial(backend_group_inputs, codegen.group, backend)
        jobs.append(GroupJob(f"{codegen.name}@{backend.backend_key}", inputs_key(inputs()), codegen, inputs))
    return jobs


def _memo_id(model: Model, config: CodegenConfig) -> str:
    sources = "\n".join(f"{label} {value}" for label, value in codegen_sources())
    return digest(_MEMO_FORMAT, model.fingerprint.encode(), config.describe().encode(), sources.encode())


def _remembered(cache, memo: Optional[str], names: list[str]) -> Optional[dict[str, str]]:
    if memo is None:
        return None
    try:
        keys = cache.remembered_keys(memo)
    except OSError:
        return None
    # A memo of other groups (never expected, since the id covers the model) is not trusted.
    return keys if keys is not None and sorted(keys) == sorted(names) else None


def _remember(cache, memo: Optional[str], keys: dict[str, str]) -> None:
    if memo is None:
        return
    try:
        cache.remember_keys(memo, keys)
    except OSError:
        pass  # a read-only or full cache only costs the next run the same 0.2 s
