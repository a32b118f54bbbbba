"""Everything generated for one operator group: its file list and the rendered files.

Pure: (group, kernel indices, config) -> {relative path: text}.  Nothing here reads other
groups, which is what lets each group be its own SCons node and cache entry.
"""
from __future__ import annotations

from functools import cached_property

from ..api import cpp, dispatcher, structured, types
from ..api.bindings import names, params
from ..fingerprint import digest
from ..model.backend import BackendIndex
from ..model.dispatch_keys import DispatchKey
from ..model.grouping import OperatorGroup
from ..model.native_function import NativeFunction
from . import layout
from .autograd_kernels import SUPPORT_HEADER, GroupAutograd, group_autograd
from .config import AUTOGRAD_KEYS, CodegenConfig
from .declarations import Declaration, DeclarationKind, group_declarations, joined_by_symbol
from .families import GroupRelations
from .functionalize import functionalize_kernels
from .kernels import Wrapper, by_namespace, key_kernels, registration_source
from .render import render

# Headers of structured base classes the meta header must include.
_BASE_HEADERS = {"impl::MetaBase": "core/meta_base.h", "TensorIteratorBase": "core/tensor_iterator.h"}


class GroupCodegen:
    def __init__(self, group: OperatorGroup, indices: dict[DispatchKey, BackendIndex], config: CodegenConfig):
        self.group = group
        self.name = group.name
        self.indices = indices
        self.config = config

    @cached_property
    def relations(self) -> GroupRelations:
        # Lazy: a build materializing every group from the cache never needs them.
        return GroupRelations(self.group)

    # ----- what exists -----

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
        per_key = {key: functionalize_kernels(self.relations, self.indices) if key is DispatchKey.Functionalize
                   else key_kernels(self.relations, key, self.indices) for key in self.config.keys
                   if key not in AUTOGRAD_KEYS}
        return {key: wrappers for key, wrappers in per_key.items() if wrappers}

    def autograd_keys(self) -> list[DispatchKey]:
        """The autograd keys the group has kernels at (from the decisions alone: no formula is
        translated to know the file list)."""
        if not self.config.generates_autograd:
            return []
        decisions = [self.config.autograd.decision(f) for f in self.group.functions]
        keys = []
        if DispatchKey.Autograd in self.config.keys and any(d.registers_autograd for d in decisions):
            keys.append(DispatchKey.Autograd)
        if DispatchKey.ADInplaceOrView in self.config.keys and any(d.registers_inplace_or_view for d in decisions):
            keys.append(DispatchKey.ADInplaceOrView)
        return keys

    @cached_property
    def autograd(self) -> GroupAutograd:
        return group_autograd(self.group, self.config.autograd)

    def files(self) -> list[str]:
        g = self.name
        paths = [layout.api_header(g), layout.handles_header(g), layout.native_header(g), layout.schema_source(g),
                 layout.unit_source(g)]
        if self.structured_outs:
            paths.append(layout.meta_header(g))
        if self.methods:
            paths.append(layout.methods_header(g))
        paths.extend(layout.key_source(g, key) for key in self.kernels)
        paths.extend(layout.key_source(g, key) for key in self.autograd_keys())
        return sorted(paths)

    # ----- rendering -----

    def render(self) -> dict[str, str]:
        g = self.name
        out = {
            layout.api_header(g): self._api_header(),
            layout.handles_header(g): self._handles_header(),
            layout.native_header(g): self._native_header(),
            layout.schema_source(g): self._schema_source(),
        }
        if self.structured_outs:
            out[layout.meta_header(g)] = self._meta_header()
        if self.methods:
            out[layout.methods_header(g)] = render("tensor_methods.h.j2", group=g, methods=[
                {"returns": m.returns, "name": m.name, "params": params(m.params), "handle": dispatcher.handle_name(f),
                 "args": ", ".join(m.call_args), "returns_self": m.returns_self} for f, m in self.methods])
        for key, wrappers in self.kernels.items():
            out[layout.key_source(g, key)] = self._key_source(key, wrappers)
        for key in self.autograd_keys():
            out[layout.key_source(g, key)] = self._autograd_source(key)
        sources = [{"path": path, "digest": digest(out[path].encode())} for path in sorted(out) if path.endswith(".cpp")]
        out[layout.unit_source(g)] = render("group_unit.cpp.j2", group=g, sources=sources)
        assert sorted(out) == self.files(), "files() and render() disagree"
        return dict(sorted(out.items()))

    @cached_property
    def _handles(self) -> list[dict]:  # both the handles header and the schema source use them
        return [{
            "name": dispatcher.handle_name(f), "signature": dispatcher.signature_type(f),
            "qualified": f"{f.namespace}::{f.func.name.name}", "overload": f.func.name.overload_name,
            "full_name": dispatcher.qualified_name(f), "returns": dispatcher.return_type(f),
            "params": params(dispatcher.bindings(f)), "args": names(dispatcher.bindings(f)),
        } for f in self.group.functions]

    @cached_property
    def _type_headers(self) -> list[str]:
        """Headers of the runtime types the group's schemas and precomputed fields (index's
        DimVector sizes) use that core/tensor.h does not bring."""
        return types.headers([t for f in self.group.functions for t in types.schema_types(f.func)]
                             + [a.type for f in self.group.functions for a in structured.precomputed_arguments(f)])

    def _handles_header(self) -> str:
        return render("operator_handles.h.j2", group=self.name, handles=self._handles, includes=self._type_headers)

    def _schema_source(self) -> str:
        by_ns: dict[str, list[str]] = {}
        for f in self.group.functions:
            by_ns.setdefault(f.namespace, []).append(str(f.func))
        namespaces = [{"name": ns, "schemas": schemas} for ns, schemas in sorted(by_ns.items())]
        return render("schema_registration.cpp.j2", group=self.name, namespaces=namespaces, handles=self._handles)

    def _api_header(self) -> str:
        functions = [{"returns": fn.returns, "name": fn.name, "params": params(fn.params), "handle": dispatcher.handle_name(f),
                      "args": ", ".join(fn.call_args)} for f in self.group.functions for fn in cpp.functions(f)]
        return render("operator_api.h.j2", group=self.name, functions=functions)

    @cached_property
    def declarations(self) -> list[Declaration]:
        """The hand-written functions the group's code calls: its kernels and meta() functions, as
        its native and meta headers declare them, then its views' functional inverses (declared
        in its Functionalize file)."""
        inverses = joined_by_symbol(d for w in self.kernels.get(DispatchKey.Functionalize, [])
                                    for d in (w.hand_written.functions if w.hand_written else ()))
        return group_declarations(self.relations, self.indices) + inverses

    def _meta_header(self) -> str:
        classes, includes = [], set()
        for d in self.declarations:
            if d.kind is DeclarationKind.META:
                if d.base in _BASE_HEADERS:
                    includes.add(_BASE_HEADERS[d.base])
                classes.append({"name": d.scope.rpartition("::")[2], "base": d.base, "params": d.params,
                                "precomputed": [{"type": b.type, "name": b.name} for b in d.precomputed]})
        if classes:
            includes.update(self._type_headers)
        return render("meta_declarations.h.j2", group=self.name, classes=classes, includes=sorted(includes))

    def _native_header(self) -> str:
        impl_classes = [{"name": d.scope.rpartition("::")[2], "meta": d.base, "params": d.params}
                        for d in self.declarations if d.kind is DeclarationKind.IMPL]
        declarations = [f"{d.returns} {d.name}({d.params})" for d in self.declarations if d.kind is DeclarationKind.KERNEL]
        return render("native_declarations.h.j2", group=self.name, has_meta=bool(self.structured_outs),
                      impl_classes=impl_classes, declarations=declarations, includes=self._type_headers)

    def _key_source(self, key: DispatchKey, wrappers: list[Wrapper]) -> str:
        g = self.name
        includes = {layout.handles_header(g)}
        if any(w.kind.calls_kernel for w in wrappers):
            includes.add(layout.native_header(g))
        if any(w.kind.is_structured for w in wrappers):
            includes.add("core/structured_out.h")
        if any(w.kind.derives_from_sibling for w in wrappers):
            includes.add("native/sibling_variants.h")
        if any(w.kind.functionalizes for w in wrappers):
            includes.add("functionalization/functionalization.h")
        if any(w.kind.selects_backend for w in wrappers):
            includes.add("dispatch/backend_select.h")
        return registration_source(self.relations, key.value, wrappers, includes)

    def _autograd_source(self, key: DispatchKey) -> str:
        data = self.autograd
        kernels = data.autograd if key is DispatchKey.Autograd else data.inplace_or_view
        includes = {"dispatch/registration.h", SUPPORT_HEADER, layout.handles_header(self.name)}
        nodes = []
        if key is DispatchKey.Autograd:
            nodes = list(data.nodes)
            includes.update(data.headers)
        return render("autograd_kernels.cpp.j2", group=self.name, key=key.value, includes=sorted(includes),
                      nodes=nodes, kernels=list(kernels), namespaces=by_namespace(self.group, kernels))
