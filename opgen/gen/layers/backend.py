"""What an external backend (a backend yaml) adds to one operator group.

Per group with kernels at the backend or its autograd key:
  backends/<Key>/ops/<group>_native.h     the backend's kernel declarations (dispatcher API), in
                                          namespace <cpp_namespace>::<class_name>
  backends/<Key>/ops/<group>_<Key>.cpp    registrations at the backend key, plus out= / in-place
                                          wrappers built from a functional kernel when the
                                          backend lists only that (torchgen's rule:
                                          backend_variants.py)
  backends/<Key>/ops/<group>_<AutogradKey>.cpp   registrations at the autograd key, with the
                                          same derived wrappers
and once per backend the umbrella backends/<Key>/<class_name>.h.  A backend yaml with
full_codegen / ir_gen operators adds their IR, whatever its key (lazy.py):
backends/<Key>/ops/<group>_ir.h, the full_codegen operators' kernels generated into
<group>_<Key>.cpp (declared as gen_backend_stubs declares them; nothing of them is written by hand), and the umbrellas
<Key>Ir.h, <Key>NonNativeIr.h and (a backend that writes its lowerings) <Key>IrFunctions.h.

The class of torchgen's backend stubs is rendered as a namespace of the same name: a class
cannot be declared piecemeal, a namespace can, so each group's declarations live in that group's
header and editing one operator in the backend yaml touches that group's files only.  Kernels
are still written ``Tensor XLANativeFunctions::add(...) { ... }``.

These files are generated apart from the in-tree ones (their own content key, their own
directory), so adding a backend leaves every CPU / CUDA file byte-identical.
"""
from __future__ import annotations

import json
from dataclasses import replace
from functools import cached_property
from typing import Optional

from ...api import dispatcher, types
from ...api.bindings import names, params
from ...fingerprint import digest
from ...model.backend_yaml import BackendYaml
from ...model.dispatch_keys import DispatchKey
from ...model.grouping import OperatorGroup
from ...model.lazy_ir import IrNode
from ...model.loader import Model
from ...model.native_function import NativeFunction
from ...model.schema import SchemaKind
from ..engine import layout
from .backend_variants import functional_to_wrap
from .families import GroupRelations
from .kernels import Wrapper, WrapperKind, out_from_functional, registration_source, wrapper
from .lazy import GroupIr, native_body, render_ir_functions, render_ir_umbrella, render_non_native, runtime_header
from ..engine.render import render


class BackendGroupCodegen:
    def __init__(self, group: OperatorGroup, backend: BackendYaml):
        self.group = group
        self.name = group.name
        self.backend = backend
        self.relations = GroupRelations(group)
        self.ir = GroupIr(group, backend)

    @property
    def key_dir(self) -> str:
        return layout.backend_dir(self.backend.backend_key)

    @property
    def kernel_scope(self) -> str:
        return f"{self.backend.cpp_namespace}::{self.backend.class_name}"

    # ----- what exists -----

    def _listed(self, key: Optional[DispatchKey]) -> list[tuple[NativeFunction, str]]:
        """(function, kernel name) of the group's functions listed for one key, in yaml order."""
        index = self.backend.indices.get(key) if key is not None else None
        if index is None:
            return []
        return [(f, index.get(f.func.name).kernel) for f in self.group.functions if index.has_kernel(f.func.name)]

    @cached_property
    def declared(self) -> list[tuple[NativeFunction, str]]:
        return self._listed(self.backend.backend_key) + self._listed(self.backend.autograd_key)

    @cached_property
    def kernels(self) -> dict[DispatchKey, list[Wrapper]]:
        out = {}
        for key in (self.backend.backend_key, self.backend.autograd_key):
            wrappers = self._key_wrappers(key) if key is not None else []
            if wrappers:
                out[key] = wrappers
        return out

    def files(self) -> list[str]:
        if not self.declared and not self.ir:
            return []
        paths = [layout.backend_native_header(self.backend.backend_key, self.name)]
        if self.ir:
            paths.append(self.ir.header)
        paths.extend(layout.backend_key_source(self.backend.backend_key, self.name, key) for key in self.kernels)
        return sorted(paths)

    # ----- wrappers -----

    def _direct(self, key: DispatchKey, f: NativeFunction, kernel: str) -> Wrapper:
        return replace(wrapper(WrapperKind.DIRECT, key, f), callee=f"::{self.kernel_scope}::{kernel}", args=names(dispatcher.bindings(f)))

    def _key_wrappers(self, key: DispatchKey) -> list[Wrapper]:
        """The registrations at one key: the listed kernels, and the in-place / out= wrappers
        torchgen's rule derives from a listed functional kernel (backend_variants.py)."""
        index = self.backend.indices.get(key)
        if index is None:
            return []
        listed = dict((f.func.name, kernel) for f, kernel in self._listed(key))
        # full_codegen kernels are registered as the hand-written ones are: the generated code
        # defines them (kernel_definitions) where a person defines a supported one.
        wrappers = []
        for f in self.group.functions:
            if f.func.name in listed:
                wrappers.append(self._direct(key, f, listed[f.func.name]))
                continue
            functional = functional_to_wrap(self.relations, index, f)
            if functional is None:
                continue
            callee = f"::{self.kernel_scope}::{listed[functional.func.name]}"
            if f.func.kind() is SchemaKind.out:
                body = out_from_functional(self.relations, f, callee)
            else:
                body = self._inplace_from_functional(f, functional, callee)
            wrappers.append(replace(wrapper(WrapperKind.GENERATED, key, f), body=tuple(body)))
        return wrappers

    @staticmethod
    def _inplace_from_functional(f: NativeFunction, functional: NativeFunction, callee: str) -> list[str]:
        written = [a.name for a in f.func.arguments.all() if a.is_write]
        if len(written) != 1 or len(functional.func.returns) != 1:
            return [f'OP_CHECK(false, "{f.func.name}: in-place wrappers are built only for one written tensor");']
        target = written[0]
        return [f"auto result = {callee}({names(dispatcher.bindings(functional))});",
                f"return impl::copy_to_self({target}, result);"]

    # ----- rendering -----

    def render(self) -> dict[str, str]:
        if not self.declared and not self.ir:
            return {}
        key = self.backend.backend_key
        out = {layout.backend_native_header(key, self.name): self._declarations()}
        if self.ir:
            out[self.ir.header] = self.ir.render_header()
        for dispatch_key, wrappers in self.kernels.items():
            out[layout.backend_key_source(key, self.name, dispatch_key)] = self._key_source(dispatch_key, wrappers)
        assert sorted(out) == self.files(), "files() and render() disagree"
        return dict(sorted(out.items()))

    def declarations(self, generated: bool = False) -> list[str]:
        """One declaration per kernel signature, written by hand (or, ``generated``, the
        full_codegen kernels the generated code defines), as gen_backend_stubs declares them."""
        seen: dict[str, None] = {}
        for f, kernel in self.declared:
            if self.ir.is_full_codegen(f) == generated:
                seen[f"{dispatcher.return_type(f)} {kernel}({params(dispatcher.bindings(f))})"] = None
        return list(seen)

    def kernel_definitions(self) -> list[str]:
        """The full_codegen kernels of the group, defined: operands as IR, a node, a tensor over it."""
        definitions = []
        for f, kernel in self._listed(self.backend.backend_key):
            if self.ir.is_full_codegen(f):
                body = "".join(f"  {line}\n" for line in native_body(f, self.backend.ir_node(f.func.name), self.backend))
                # A trailing return type: what follows the qualified name is looked up in the
                # kernel's namespace, which sees the operator library's types.
                definitions.append(f"// {f.func.name}: full_codegen\nauto ::{self.kernel_scope}::{kernel}("
                                   f"{params(dispatcher.bindings(f), with_defaults=False)}) -> {dispatcher.return_type(f)} {{\n{body}}}")
        return definitions

    def _declarations(self) -> str:
        namespace = self.backend.cpp_namespace
        return render("backend_declarations.h.j2", group=self.name, backend=str(self.backend.backend_key),
                      namespace=namespace, class_name=self.backend.class_name,
                      import_op_types=not (namespace == "op" or namespace.startswith("op::")),
                      declarations=self.declarations(), generated=self.declarations(generated=True),
                      includes=types.headers(t for f, _ in self.declared for t in types.schema_types(f.func)))

    def _key_source(self, key: DispatchKey, wrappers: list[Wrapper]) -> str:
        # The group's handles header brings the operator library's types the wrappers use.
        includes = {layout.backend_native_header(self.backend.backend_key, self.name), layout.handles_header(self.name)}
        if any(w.kind.derives_from_sibling for w in wrappers):
            includes.add("native/sibling_variants.h")
        definitions = []
        if self.ir and key == self.backend.backend_key:
            includes.update((self.ir.header, runtime_header(self.backend)))
            definitions = self.kernel_definitions()
        return registration_source(self.relations, key.value, wrappers, includes, definitions)


def backend_groups(groups: list[OperatorGroup], backend: BackendYaml) -> list[BackendGroupCodegen]:
    """The groups the backend lists any operator of, as codegen objects."""
    listed = {name for index in backend.indices.values() for name in index.index}
    listed.update(node.schema.name for node in backend.ir_nodes if not node.non_native)
    return [BackendGroupCodegen(g, backend) for g in groups if any(f.func.name in listed for f in g.functions)]


def ir_functions(model: Model, backend: BackendYaml) -> list[tuple[NativeFunction, IrNode]]:
    """Every native IR node of the backend with its function, in yaml order."""
    return [(model.by_name[node.schema.name], node) for node in backend.ir_nodes if not node.non_native]


def backend_umbrellas(backend: BackendYaml) -> tuple[str, ...]:
    """The paths render_backend_umbrellas writes."""
    key = backend.backend_key
    paths = [layout.backend_umbrella(key, backend.class_name)]
    paths += list(render_ir_umbrella(backend, [])) + list(render_non_native(backend))
    paths += list(render_ir_functions(backend, []))
    return tuple(sorted(paths))


def backend_umbrella_inputs(model: Model, backend: BackendYaml) -> str:
    """What the backend's umbrellas render besides which files each group has: its namespace and
    class (the declarations umbrella's text), its non-native nodes (<Key>NonNativeIr.h) and the
    functions it writes (<Key>IrFunctions.h). A build keys the umbrellas by it, so editing a
    non_native entry rewrites that header."""
    texts = sorted({**render_non_native(backend), **render_ir_functions(backend, ir_functions(model, backend))}.items())
    return digest(json.dumps([backend.cpp_namespace, backend.class_name, texts]).encode())


def render_backend_umbrellas(model: Model, backend: BackendYaml, files_by_group: dict[str, list[str]]) -> dict[str, str]:
    out = render_backend_umbrella(backend, list(files_by_group))
    ir_groups = [g for g, files in files_by_group.items() if layout.backend_ir_header(backend.backend_key, g) in files]
    out.update(render_ir_umbrella(backend, ir_groups))
    out.update(render_non_native(backend))
    out.update(render_ir_functions(backend, ir_functions(model, backend)))
    return dict(sorted(out.items()))


def render_backend_umbrella(backend: BackendYaml, groups: list[str]) -> dict[str, str]:
    key = backend.backend_key
    headers = [layout.backend_native_header(key, g) for g in sorted(groups)]
    description = (f"Every kernel the {key} backend declares, in namespace "
                   f"{backend.cpp_namespace}::{backend.class_name} (one header per operator group).")
    return {layout.backend_umbrella(key, backend.class_name): render("umbrella.h.j2", description=description, headers=headers)}
