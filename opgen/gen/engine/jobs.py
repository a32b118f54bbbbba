"""The work list of a codegen run: one job per operator group, with its content key.

A key is the hash of the group's inputs (cache/inputs.py). Keys are remembered in the codegen
cache under each group's identity (cache/memos.py), so a run computes inputs only for the groups
whose entries changed, and otherwise only when the cache records them (a key new to the group).

A job's identity is a ``JobId``: the group, and the external backend whose files it produces
(None: the in-tree files). Its text, ``<group>`` or ``<group>@<Key>``, is what state files,
cache records and reports hold.

The engine knows no layer: what a job renders (``Codegen``) and what the layers add to a group's
key (its content fields) are given (gen/sections.py builds them from the registry).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from functools import partial
from typing import Callable, Iterable, Mapping, Optional, Protocol, Sequence

from ...cache.inputs import (Inputs, backend_group_inputs, codegen_sources, group_inputs, inputs_key, stored_inputs,
                             stored_key)
from ...cache.memos import group_identity, memo_id, remember, remembered
from ...collector import paused_for_resident_objects
from ...fingerprint import digest
from ...model.backend_yaml import BackendYaml
from ...model.dispatch_keys import DispatchKey
from ...model.grouping import OperatorGroup
from ...model.loader import Model
from .config import CodegenConfig


@dataclass(frozen=True)
class JobId:
    group: str
    backend_key: Optional[DispatchKey] = None   # None: the group's in-tree files

    def __str__(self) -> str:
        return self.group if self.backend_key is None else f"{self.group}@{self.backend_key}"


class Codegen(Protocol):
    """What a job renders: GroupCodegen (in-tree files) or BackendGroupCodegen (a backend's)."""
    name: str   # the group
    group: OperatorGroup

    def files(self) -> list[str]: ...          # the paths render() writes, known without rendering

    def render(self) -> dict[str, str]: ...    # {path: text}


@dataclass(frozen=True)
class GroupJob:
    id: JobId
    key: str
    codegen: Codegen
    inputs: Callable[[], Inputs]    # the fields the key hashes, computed on demand
    stored: Optional[Callable[[], dict[str, str]]] = None  # their text form, when the key kept it

    def stored_inputs(self) -> dict[str, str]:
        """The inputs as the cache's index records them (cache/inputs.py's ``stored_inputs``)."""
        return self.stored() if self.stored is not None else stored_inputs(self.inputs())

    @property
    def name(self) -> str:
        """The job's text (state files, cache records, build signatures): ``str(id)``."""
        return str(self.id)


class KeyListener(Protocol):
    """Told of the jobs while their keys are computed (engine/early.py starts rendering them)."""

    def before_keys(self, codegens: Sequence[Codegen], to_compute: int) -> None: ...  # ``to_compute``: keys no memo had

    def keyed(self, job: GroupJob) -> None: ...   # each job once its key is known, in the jobs' order


def in_tree_jobs(model: Model, config: CodegenConfig, codegen_of: Callable[[OperatorGroup], Codegen],
                 fields: Mapping[str, Mapping[str, str]], cache=None,
                 listener: Optional[KeyListener] = None) -> list[GroupJob]:
    """A job per operator group, rendered by ``codegen_of(group)``; ``fields``: {group: the
    layers' content fields}. A group's key comes from ``cache``'s memo when its identity is there."""
    groups = model.operator_groups
    # Kept once computed: a key new to its group needs them again when the run is recorded.
    inputs_of = [functools.cache(partial(group_inputs, group, model.indices, config, fields[group.name])) for group in groups]
    stored_of = [functools.cache(partial(_stored, inputs)) for inputs in inputs_of]  # what keys and the record read
    identities = _identities(model, config, fields)
    memo = memo_id(model.source, config.describe()) if cache is not None and model.entry_digests else None
    known = remembered(cache, memo)
    codegens = [codegen_of(group) for group in groups]
    memo_keys = {}
    for group in groups:
        identity, hit = identities[group.name], known.get(group.name)
        if identity is not None and hit is not None and hit[0] == identity:
            memo_keys[group.name] = hit[1]
    if listener is not None:
        listener.before_keys(codegens, len(groups) - len(memo_keys))
    jobs, pairs = [], {}
    # The inputs stay (kept for the record) as long as the jobs: ~200k objects on PyTorch's yaml
    # that collections would only walk again and again.
    with paused_for_resident_objects():
        for group, inputs, stored, codegen in zip(groups, inputs_of, stored_of, codegens):
            key = memo_keys.get(group.name) or stored_key(stored())
            if identities[group.name] is not None:
                pairs[group.name] = (identities[group.name], key)
            jobs.append(GroupJob(JobId(group.name), key, codegen, inputs, stored))
            if listener is not None:
                listener.keyed(jobs[-1])
    if pairs != known:
        remember(cache, memo, pairs)
    return jobs


def _stored(inputs: Callable[[], Inputs]) -> dict[str, str]:
    return stored_inputs(inputs())


def _identities(model: Model, config: CodegenConfig, fields: Mapping[str, Mapping[str, str]]) -> dict[str, Optional[str]]:
    """Each group's identity, from the digests of the yaml entries of its functions. Functions
    autogen derives come from their own variant family, which lies within the group (autogen
    names keep the base name), so the group's entries determine them too, with what the layers
    add (their content fields: its autograd facts). None when the model does not know its entries
    (parsed without the cache)."""
    if not model.entry_digests:
        return {group.name: None for group in model.operator_groups}
    keys_text = config.describe()
    sources = digest(*(f"{label} {value}".encode() for label, value in codegen_sources()))
    identities: dict[str, Optional[str]] = {}
    for group in model.operator_groups:
        entries = [model.entry_digests[f.func.name] for f in group.functions if f.func.name in model.entry_digests]
        entries += [f"{name} {value}" for name, value in sorted(fields[group.name].items())]
        identities[group.name] = group_identity(group.name, entries, keys_text, sources)
    return identities


def backend_jobs(codegens: Iterable[Codegen], backend: BackendYaml) -> list[GroupJob]:
    """A job per group the backend lists (a few hundred at most: keys are computed directly)."""
    jobs = []
    for codegen in codegens:
        inputs = partial(backend_group_inputs, codegen.group, backend)
        jobs.append(GroupJob(JobId(codegen.name, backend.backend_key), inputs_key(inputs()), codegen, inputs))
    return jobs
