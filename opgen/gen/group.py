"""Everything generated for one operator group: its file list and the rendered files.

Pure: (group, kernel indices, config) -> {relative path: text}.  Nothing here reads other
groups, which is what lets each group be its own SCons node and cache entry. The files come from
the generated layers (registry.LAYERS, each a layer.Layer) the config applies, and the group's
one translation unit, which includes every source they write.
"""
from __future__ import annotations

from functools import cached_property
from typing import Optional

from ..api import cpp, structured, types
from ..fingerprint import digest
from ..model.backend import BackendIndex
from ..model.dispatch_keys import DispatchKey
from ..model.grouping import OperatorGroup
from ..model.native_function import NativeFunction
from .engine import layout
from .engine.config import CodegenConfig
from .layers.declarations import Declaration, group_declarations, joined_by_symbol
from .layers.families import GroupRelations
from .layers.kernels import Wrapper
from .engine.layer import Layer
from .registry import LAYERS
from .engine.render import render


class GroupCodegen:
    def __init__(self, group: OperatorGroup, indices: dict[DispatchKey, BackendIndex], config: CodegenConfig,
                 layers: tuple[Layer, ...] = LAYERS):
        self.group = group
        self.name = group.name
        self.indices = indices
        self.config = config
        self.registry = layers
        self.layers = tuple(layer for layer in layers if layer.applies(config))

    @cached_property
    def relations(self) -> GroupRelations:
        # Lazy: a build materializing every group from the cache never needs them.
        return GroupRelations(self.group)

    # ----- what several layers share -----

    def keys_of(self, keys: Optional[tuple[DispatchKey, ...]]) -> list[DispatchKey]:
        """The build's keys among a layer's ``keys``; for None, those no layer of the registry names."""
        if keys is None:
            named = {key for layer in self.registry if layer.keys for key in layer.keys}
            return [key for key in self.config.keys if key not in named]
        return [key for key in self.config.keys if key in keys]

    @cached_property
    def structured_outs(self) -> list[NativeFunction]:
        return [f for f in self.group.functions if f.structured]

    @cached_property
    def methods(self) -> list[tuple[NativeFunction, cpp.CppMethod]]:
        """Method overloads; a C++ signature two overloads share is declared once (the first)."""
        seen: set[tuple[str, tuple[str, ...]]] = set()
        result = []
        for f in self.group.functions:
            for m in cpp.methods(f):
                signature = (m.name, tuple(b.type for b in m.params))
                if signature not in seen:
                    seen.add(signature)
                    result.append((f, m))
        return result

    @cached_property
    def kernels(self) -> dict[DispatchKey, list[Wrapper]]:
        """The group's wrappers per key, from the layers whose kernels are wrappers."""
        per_key = {}
        for layer in self.layers:
            if layer.wrappers is not None:
                for key in self.keys_of(layer.keys):
                    per_key[key] = layer.wrappers(self.relations, key, self.indices)
        return {key: per_key[key] for key in self.config.keys if per_key.get(key)}

    @cached_property
    def type_headers(self) -> list[str]:
        """Headers of the runtime types the group's schemas and precomputed fields (index's
        DimVector sizes) use that core/tensor.h does not bring."""
        return types.headers([t for f in self.group.functions for t in types.schema_types(f.func)]
                             + [a.type for f in self.group.functions for a in structured.precomputed_arguments(f)])

    @cached_property
    def declarations(self) -> list[Declaration]:
        """The hand-written functions the group's code calls: its kernels and meta() functions, as
        its native and meta headers declare them, then its views' functional inverses (declared
        in its Functionalize file)."""
        inverses = joined_by_symbol(d for w in self.kernels.get(DispatchKey.Functionalize, [])
                                    for d in (w.hand_written.functions if w.hand_written else ()))
        return group_declarations(self.relations, self.indices) + inverses

    # ----- files -----

    def files(self) -> list[str]:
        paths = [layout.unit_source(self.name)]
        for layer in self.layers:
            paths.extend(layer.files(self))
        return sorted(paths)

    def render(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for layer in self.layers:
            texts = layer.render(self)
            assert not texts.keys() & out.keys(), f"layer {layer.name} writes another layer's file"
            out.update(texts)
        sources = [{"path": path, "digest": digest(out[path].encode())} for path in sorted(out) if path.endswith(".cpp")]
        out[layout.unit_source(self.name)] = render("group_unit.cpp.j2", group=self.name, sources=sources)
        assert sorted(out) == self.files(), "files() and render() disagree"
        return dict(sorted(out.items()))
