"""The jobs and sections of a run, built from the generated layers for the engine
(engine/jobs.py, engine/plan.py): the in-tree files of every group (group.GroupCodegen over the
registry's layers, keyed with their content fields) and an external backend's files."""
from __future__ import annotations

from functools import partial
from typing import Collection, Optional

from ..fingerprint import digest
from ..model.backend_yaml import BackendYaml
from ..model.loader import Model
from .engine import jobs as engine_jobs
from .engine import layout
from .engine.config import CodegenConfig
from .engine.jobs import GroupJob, KeyListener
from .engine.layer import Layer, content_fields
from .engine.plan import Section
from .group import GroupCodegen
from .layers.backend import backend_groups, backend_umbrella_inputs, backend_umbrellas, render_backend_umbrellas
from .layers.umbrellas import render_umbrellas
from .registry import LAYERS


def in_tree_jobs(model: Model, config: CodegenConfig, cache=None, layers: tuple[Layer, ...] = LAYERS,
                 listener: Optional[KeyListener] = None) -> list[GroupJob]:
    """A job per operator group, rendering ``layers``; a group's key comes from ``cache``'s memo
    when its identity is there. ``listener`` is told of the jobs as their keys are computed."""
    fields = {group.name: content_fields(layers, group, config) for group in model.operator_groups}
    return engine_jobs.in_tree_jobs(model, config, lambda group: GroupCodegen(group, model.indices, config, layers),
                                    fields, cache, listener)


def backend_jobs(model: Model, backend: BackendYaml) -> list[GroupJob]:
    """A job per group the backend lists."""
    return engine_jobs.backend_jobs(backend_groups(model.operator_groups, backend), backend)


def in_tree_section(model: Model, config: CodegenConfig, cache=None, groups: Optional[Collection[str]] = None,
                    layers: tuple[Layer, ...] = LAYERS, listed: Optional[Collection[str]] = None,
                    listener: Optional[KeyListener] = None) -> Section:
    """Every group's job, or only those of ``groups`` (a selective build: opgen/selection). A
    group's files and key do not depend on which other groups are built (its codegen reads the
    whole model), so a selected group's files are byte-identical to the full build's; the
    umbrellas list the section's groups (of ``listed`` only, when given: a selective build's
    registered groups, not those generated for their declarations alone), and remove_stale
    deletes the files of the others."""
    render = render_umbrellas if listed is None else partial(_listed_umbrellas, frozenset(listed))
    inputs = "" if listed is None else " listed " + digest(",".join(sorted(listed)).encode())
    return Section(None, _only(in_tree_jobs(model, config, cache, layers, listener), groups), layout.UMBRELLAS, render, inputs)


def _listed_umbrellas(listed: frozenset[str], files_by_group):
    return render_umbrellas({group: files for group, files in files_by_group.items() if group in listed})


def backend_section(model: Model, backend: BackendYaml, groups: Optional[Collection[str]] = None) -> Section:
    key = backend.backend_key
    jobs = _only(backend_jobs(model, backend), groups)
    return Section(key, jobs, backend_umbrellas(backend), partial(render_backend_umbrellas, model, backend),
                   backend_umbrella_inputs(model, backend))


def _only(jobs: list[GroupJob], groups: Optional[Collection[str]]) -> tuple[GroupJob, ...]:
    """The jobs of ``groups`` (None: all). Keys are computed for every group first, so the key
    memo in the codegen cache is the same for a selective build and a full one."""
    if groups is None:
        return tuple(jobs)
    wanted = frozenset(groups)
    return tuple(job for job in jobs if job.id.group in wanted)
