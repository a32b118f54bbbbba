"""The work list of a codegen run: one job per operator group, with its content key.

A key is the hash of the group's inputs (cache/inputs.py). The keys of a whole model are
remembered in the codegen cache (cache/memos.py), so an unchanged model reads them back and
computes a group's inputs only when the cache records them (its key is new to the group).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Callable

from ..cache.inputs import backend_group_inputs, codegen_sources, group_inputs, inputs_key
from ..cache.memos import memo_id, remember, remembered
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
    """A job per operator group; keys come from ``cache``'s memo when it has this model's."""
    groups = model.operator_groups
    inputs_of = [partial(group_inputs, group, model.indices, config) for group in groups]
    memo = memo_id(model.fingerprint, config.describe(), codegen_sources()) if cache is not None and model.fingerprint else None
    keys = remembered(cache, memo, [group.name for group in groups])
    if keys is None:
        keys = {group.name: inputs_key(inputs()) for group, inputs in zip(groups, inputs_of)}
        remember(cache, memo, keys)
    return [GroupJob(group.name, keys[group.name], GroupCodegen(group, model.indices, config), inputs)
            for group, inputs in zip(groups, inputs_of)]


def backend_jobs(model: Model, backend: BackendYaml) -> list[GroupJob]:
    """A job per group the backend lists (a few hundred at most: keys are computed directly)."""
    jobs = []
    for codegen in backend_groups(model.operator_groups, backend):
        inputs = partial(backend_group_inputs, codegen.group, backend)
        jobs.append(GroupJob(f"{codegen.name}@{backend.backend_key}", inputs_key(inputs()), codegen, inputs))
    return jobs
