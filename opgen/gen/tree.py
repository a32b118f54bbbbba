"""``python -m opgen generate``: run a codegen plan over an output tree.

Every group whose key differs from the one its section's state records (or one of whose files
is missing) is produced, from the codegen cache or by rendering; files are written only when
their bytes change; umbrellas follow the groups; files of groups that disappeared are deleted.
"""
from __future__ import annotations

from functools import partial
from typing import Optional

from ..cache.remote import RemoteTier
from ..cache.session import CacheSession, open_codegen_cache
from ..model.backend_yaml import BackendYaml
from ..model.loader import Model
from .engine.config import CodegenConfig
from .engine.layer import Layer
from .engine.early import EarlyRenders
from .engine.plan import CodegenPlan, Report, recorded_state
from .engine.render import compiled_templates_dir, keep_compiled_templates
from .sections import backend_section, in_tree_section
from .registry import LAYERS


def generate_tree(model: Model, out_dir: str, config: CodegenConfig = CodegenConfig(),
                  backend: Optional[BackendYaml] = None, cache_dir: Optional[str] = None,
                  remote: Optional[RemoteTier] = None, layers: tuple[Layer, ...] = LAYERS, workers: int = 1) -> Report:
    """In-tree files for every group and, with ``backend``, that backend's files for the groups it
    lists (under backends/<Key>/; counted in the report as <group>@<Key>). Groups are
    materialized from the codegen cache in ``cache_dir`` when it has their key (default:
    $OPGEN_CACHE_DIR or <repo>/cache; "" renders everything). ``layers``: the generated layers of
    the in-tree files (registry.LAYERS). ``workers``: processes that render the groups the cache
    lacks (1: this one; engine/workers.py)."""
    session = CacheSession(open_codegen_cache(cache_dir), "opgen generate", remote)
    if session.cache is not None:
        keep_compiled_templates(compiled_templates_dir(session.cache.root))
    # The in-tree groups start rendering while their keys are computed (engine/early.py).
    early = EarlyRenders(session, partial(recorded_state, out_dir), workers)
    try:
        sections = [in_tree_section(model, config, session.cache, layers=layers, listener=early)]
        if backend is not None:
            sections.append(backend_section(model, backend))
        plan = CodegenPlan(out_dir, sections, session)
        for section in sections:
            plan.produce_all([job for job in section.jobs if not plan.is_current(job, section)], workers,
                             early if section is sections[0] else None)
            files = plan.layout(section)
            plan.write_umbrellas(section, files)
            plan.remove_stale(section, files)
    finally:
        early.close()
    return plan.finish()
