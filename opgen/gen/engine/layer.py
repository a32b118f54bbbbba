"""A generated layer: one kind of per-group output (headers, a key's kernels, ...), declared once.

The in-tree codegen of a group (``group.GroupCodegen``) iterates a registry of layers
(``registry.LAYERS``); nothing else names a layer. A layer declares:

- ``name``: what it is called (unique in a registry);
- ``files(codegen)``: the paths it writes for the group, known without rendering;
- ``render(codegen)``: {path: text} for exactly those paths;
- ``keys``: the dispatch keys whose kernels it registers (its ``ops/<g>_<Key>.cpp``), () for
  none; ``None`` for the kernels layer, which takes every key of the build no other layer names;
- ``wrappers(relations, key, indices)``: for layers whose kernels are ``kernels.Wrapper``s, the
  group's wrappers at one of its keys (what ``GroupCodegen.kernels`` gathers);
- ``content_fields(group, config)``: what enters the group's content key beyond its yaml
  entries, the codegen sources and the dispatch keys ({field name: text}; cache/inputs.py);
- ``applies(config)``: whether a build with this config generates the layer at all.

``codegen`` is the group's ``GroupCodegen``: the group, its kernel indices, the config and what
several layers share (relations, methods, structured functions, declarations, kernels).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

from ...model.dispatch_keys import DispatchKey
from ...model.grouping import OperatorGroup
from .config import CodegenConfig

# What the layers hand the engine, named for the reader only: the engine imports no layer, not
# even for types (gen/group.py's GroupCodegen, layers/families.py's GroupRelations,
# layers/kernels.py's Wrapper, model/backend.py's BackendIndex).
GroupCodegen = GroupRelations = Wrapper = BackendIndex = Any


def no_fields(group: OperatorGroup, config: CodegenConfig) -> dict[str, str]:
    return {}


def always(config: CodegenConfig) -> bool:
    return True


@dataclass(frozen=True)
class Layer:
    name: str
    files: Callable[[GroupCodegen], list[str]]
    render: Callable[[GroupCodegen], dict[str, str]]
    keys: Optional[tuple[DispatchKey, ...]] = ()
    wrappers: Optional[Callable[[GroupRelations, DispatchKey, dict[DispatchKey, BackendIndex]], list[Wrapper]]] = None
    content_fields: Callable[[OperatorGroup, CodegenConfig], dict[str, str]] = no_fields
    applies: Callable[[CodegenConfig], bool] = always


def content_fields(layers: Iterable[Layer], group: OperatorGroup, config: CodegenConfig) -> dict[str, str]:
    """The content-key fields the layers a build generates add for one group (field names are
    unique across a registry)."""
    fields: dict[str, str] = {}
    for layer in layers:
        if layer.applies(config):
            for name, value in layer.content_fields(group, config).items():
                assert name not in fields, f"layers disagree on the content field {name!r}"
                fields[name] = value
    return fields
