"""The layers every group has: its operators (API header, handles, schema registration), the
declarations of the hand-written functions it calls (native and meta headers) and its Tensor
methods."""
from __future__ import annotations

from ...api import cpp, dispatcher
from ...api.bindings import names, params
from ..engine import layout
from .declarations import DeclarationKind
from ..engine.layer import GroupCodegen, Layer  # GroupCodegen: gen/group.py's, named by the engine
from ..engine.render import render

# Headers of structured base classes the meta header must include.
_BASE_HEADERS = {"impl::MetaBase": "core/meta_base.h", "TensorIteratorBase": "core/tensor_iterator.h"}


# ----- operators: ops/<g>.h, ops/<g>_ops.h, ops/<g>_schema.cpp -----

def _operator_files(codegen: "GroupCodegen") -> list[str]:
    g = codegen.name
    return [layout.api_header(g), layout.handles_header(g), layout.schema_source(g)]


def _handles(codegen: "GroupCodegen") -> list[dict]:  # both the handles header and the schema source use them
    return [{
        "name": dispatcher.handle_name(f), "signature": dispatcher.signature_type(f),
        "qualified": f"{f.namespace}::{f.func.name.name}", "overload": f.func.name.overload_name,
        "full_name": dispatcher.qualified_name(f), "returns": dispatcher.return_type(f),
        "params": params(dispatcher.bindings(f)), "args": names(dispatcher.bindings(f)),
    } for f in codegen.group.functions]


def _render_operators(codegen: "GroupCodegen") -> dict[str, str]:
    g, handles = codegen.name, _handles(codegen)
    functions = [{"returns": fn.returns, "name": fn.name, "params": params(fn.params), "handle": dispatcher.handle_name(f),
                  "args": ", ".join(fn.call_args)} for f in codegen.group.functions for fn in cpp.functions(f)]
    by_ns: dict[str, list[str]] = {}
    for f in codegen.group.functions:
        by_ns.setdefault(f.namespace, []).append(str(f.func))
    namespaces = [{"name": ns, "schemas": schemas} for ns, schemas in sorted(by_ns.items())]
    return {
        layout.api_header(g): render("operator_api.h.j2", group=g, functions=functions),
        layout.handles_header(g): render("operator_handles.h.j2", group=g, handles=handles, includes=codegen.type_headers),
        layout.schema_source(g): render("schema_registration.cpp.j2", group=g, namespaces=namespaces, handles=handles),
    }


OPERATORS = Layer("operators", _operator_files, _render_operators)


# ----- declarations: ops/<g>_native.h, and ops/<g>_meta.h for structured groups -----

def _declaration_files(codegen: "GroupCodegen") -> list[str]:
    g = codegen.name
    return [layout.native_header(g)] + ([layout.meta_header(g)] if codegen.structured_outs else [])


def _render_declarations(codegen: "GroupCodegen") -> dict[str, str]:
    g = codegen.name
    impl_classes = [{"name": d.scope.rpartition("::")[2], "meta": d.base, "params": d.params}
                    for d in codegen.declarations if d.kind is DeclarationKind.IMPL]
    kernels = [f"{d.returns} {d.name}({d.params})" for d in codegen.declarations if d.kind is DeclarationKind.KERNEL]
    out = {layout.native_header(g): render("native_declarations.h.j2", group=g, has_meta=bool(codegen.structured_outs),
                                           impl_classes=impl_classes, declarations=kernels, includes=codegen.type_headers)}
    if codegen.structured_outs:
        out[layout.meta_header(g)] = _meta_header(codegen)
    return out


def _meta_header(codegen: "GroupCodegen") -> str:
    classes, includes = [], set()
    for d in codegen.declarations:
        if d.kind is DeclarationKind.META:
            if d.base in _BASE_HEADERS:
                includes.add(_BASE_HEADERS[d.base])
            classes.append({"name": d.scope.rpartition("::")[2], "base": d.base, "params": d.params,
                            "precomputed": [{"type": b.type, "name": b.name} for b in d.precomputed]})
    if classes:
        includes.update(codegen.type_headers)
    return render("meta_declarations.h.j2", group=codegen.name, classes=classes, includes=sorted(includes))


DECLARATIONS = Layer("declarations", _declaration_files, _render_declarations)


# ----- methods: ops/<g>_methods.h for groups with Tensor methods -----

def _method_files(codegen: "GroupCodegen") -> list[str]:
    return [layout.methods_header(codegen.name)] if codegen.methods else []


def _render_methods(codegen: "GroupCodegen") -> dict[str, str]:
    if not codegen.methods:
        return {}
    g = codegen.name
    return {layout.methods_header(g): render("tensor_methods.h.j2", group=g, methods=[
        {"returns": m.returns, "name": m.name, "params": params(m.params), "handle": dispatcher.handle_name(f),
         "args": ", ".join(m.call_args), "returns_self": m.returns_self} for f, m in codegen.methods])}


METHODS = Layer("methods", _method_files, _render_methods)
