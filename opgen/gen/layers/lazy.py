"""IR node classes of one operator group, for any backend whose yaml asks for them.

Per group with IR nodes (its ``full_codegen`` / ``ir_gen`` operators), for backend key <Key>:
  backends/<Key>/ops/<group>_ir.h   one IR node class per operator, named as torchgen names it:
                                   operands as IR values (tensors, Scalars and a ``symint``
                                   operator's SymInts, as lazy tensor core makes them), every
                                   other argument stored by value (strings owned), a hash of the
                                   op and those attributes, to_string(), can_be_reused(...), and
                                   lower(): the operands' data turned back into the operator's
                                   arguments, then the lowering called
and in backends/<Key>/ops/<group>_<Key>.cpp, for each ``full_codegen`` operator, the native
function registered at <Key>: operands as IR values, output shapes, a reused or new node, a
tensor over it.  Non-native nodes (IR only) go to backends/<Key>/<Key>NonNativeIr.h.

Two kinds of backend, told apart by the key:
- Lazy (the in-tree lazy runtime) lowers a node to its operator called eagerly through the
  dispatcher, and takes every output shape from the operator run on meta tensors;
- any other key writes a lowering per node, ``lower_<kernel>(arguments)``, and a shape function
  ``compute_shape_<kernel>(arguments)`` (torchgen's names) for each ``full_codegen`` operator
  that is neither structured nor a view_copy (those run on meta tensors, as torchgen does).
  Both are declared, for the whole backend, in backends/<Key>/<Key>IrFunctions.h; each group's
  _ir.h declares its own again, so a yaml edit recompiles that group only.

The generated code is written against the backend's IR runtime header, backends/<key>/ir.h
(lower-cased key: csrc/backends/lazy/ir.h), which provides the IR core of
csrc/backends/support/lazy_ir.h and, in the backend's C++ namespace, the helpers the kernels call
(common_device(ArrayRef<TensorBase>), default_device, ir_value, scalar_operand, symint_operand,
reuse_or_make, make_tensor).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ...api import dispatcher, types
from ...api.bindings import params
from ...api.types import value_type
from ...model.backend_yaml import BackendYaml
from ...model.dispatch_keys import DispatchKey
from ...model.grouping import OperatorGroup
from ...model.lazy_ir import SCALAR, SYMINT, TENSOR, IrArgument, IrNode
from ...model.native_function import NativeFunction, cpp_name
from ...model.op_kind import split_op_kind
from ...model.types import BaseTy, BaseType, Type
from ..engine import layout
from ..engine.render import render

RUNTIME_HEADER = "backends/lazy/ir.h"  # the Lazy key's IR runtime
_TENSOR = BaseType(BaseTy.Tensor)


def runtime_header(backend: BackendYaml) -> str:
    """The backend's IR runtime header: csrc/backends/<key lower-cased>/ir.h."""
    return f"backends/{backend.backend_key.value.lower()}/ir.h"


def has_ir(backend: BackendYaml) -> bool:
    """Whether the backend gets IR files (the Lazy runtime always includes its umbrellas)."""
    return bool(backend.ir_nodes) or backend.backend_key is DispatchKey.Lazy


def lowers_eagerly(backend: BackendYaml) -> bool:
    """The in-tree lazy runtime lowers every node to its operator's eager call, with shapes from
    meta tensors; other backends write lowerings and shape functions."""
    return backend.backend_key is DispatchKey.Lazy


def needs_shape_function(backend: BackendYaml, f: NativeFunction) -> bool:
    """torchgen's rule: structured and view_copy operators run on meta tensors, the others need
    compute_shape_<kernel>."""
    return not lowers_eagerly(backend) and not f.part_of_structured_group and "view_copy" not in f.tags


def kernel_name(f: NativeFunction, node: IrNode) -> str:
    """The name the backend's functions of one operator share: its kernel's (``add``, ``slice_copy_symint``)."""
    return cpp_name(f.func) + ("_symint" if node.symint else "")


# Runtime types an attribute may have, qualified: a node class may share their name (non-native
# `scalar` is class Scalar, as torchgen names it) and would hide them inside its own body.
_RUNTIME_TYPES = re.compile(r"(?<![:\w])(Scalar|ScalarType|Layout|Device|MemoryFormat|QScheme|Dimname|Stream|DimVector|"
                            r"Generator|Storage|GraphModule|TensorBase)\b")


def qualified(cpp: str) -> str:
    return _RUNTIME_TYPES.sub(r"::op::\1", cpp)


def owned_type(t: Type) -> str:
    """The C++ type a node stores an argument in: no views (ArrayRef, string_view) of the caller's data."""
    cpp = value_type(t)
    cpp = (cpp.replace("IntArrayRef", "std::vector<int64_t>").replace("ArrayRef<", "std::vector<")
           .replace("std::string_view", "std::string"))
    return qualified(cpp)


@dataclass(frozen=True)
class Operand:
    name: str
    kind: str          # one, optional, list
    value: str         # tensor, scalar, symint: what the lowering turns its data back into
    ir_type: str       # the constructor parameter type


@dataclass(frozen=True)
class Attribute:
    name: str
    type: str          # stored by value


_IR_TYPES = {"one": "const Value&", "optional": "const std::optional<Value>&", "list": "const std::vector<Value>&"}
# What the kernel calls to make an operand's IR value, per what it stands for.
_MAKE_OPERAND = {TENSOR: "ir_value", SCALAR: "scalar_operand", SYMINT: "symint_operand"}
# The lowering's conversion of an operand's data back into the argument (a 0-d tensor for scalars).
_FROM_DATA = {TENSOR: "{}", SCALAR: "::op::lazy::scalar_of({})", SYMINT: "::op::lazy::symint_of({})"}
_LOCAL_TYPES = {SCALAR: "::op::Scalar", SYMINT: "int64_t"}


def _arguments(node: IrNode) -> tuple[list[Operand], list[Attribute], tuple[IrArgument, ...]]:
    operands, attributes = [], []
    arguments = node.arguments
    for a in arguments:
        if a.is_operand:
            operands.append(Operand(a.name, a.arity, a.value, _IR_TYPES[a.arity]))
        else:
            attributes.append(Attribute(a.name, owned_type(a.argument.type)))
    return operands, attributes, arguments


def _member(name: str) -> str:
    return f"{name}_"


@dataclass(frozen=True)
class BackendFunctions:
    """The functions a backend that does not lower eagerly writes for one operator."""
    lowering: Optional[str]        # declaration of lower_<kernel>
    shape: Optional[str]           # declaration of compute_shape_<kernel>, None when meta gives shapes

    @property
    def declarations(self) -> list[str]:
        return [d for d in (self.shape, self.lowering) if d]


def backend_functions(backend: BackendYaml, f: NativeFunction, node: IrNode) -> BackendFunctions:
    if lowers_eagerly(backend):
        return BackendFunctions(None, None)
    name, args = kernel_name(f, node), qualified(params(dispatcher.bindings(f), with_defaults=False))
    lowering = f"std::vector<::op::TensorBase> lower_{name}({args});"
    shape = None
    if f.func.name in backend.full_codegen and needs_shape_function(backend, f):
        shape = f"std::vector<::op::lazy::Shape> compute_shape_{name}({args});"
    return BackendFunctions(lowering, shape)


def node_context(node: IrNode, f: Optional[NativeFunction], backend: BackendYaml) -> dict:
    """What the IR template needs of one node (plain data)."""
    operands, attributes, arguments = _arguments(node)
    ctor = [f"{o.ir_type} {o.name}" for o in operands] + [f"{a.type} {a.name}" for a in attributes]
    lowering = None
    if f is not None:
        lowering = _lowering(f, node, operands, arguments, backend)
    kind_ns, kind_name = split_op_kind(node.opkind)
    return {
        "class_name": node.class_name,
        "op": node.op,
        "opkind": {"ns": kind_ns, "name": kind_name},
        "ctor_params": ", ".join(ctor + ["std::vector<Shape> shapes"]),
        "reuse_params": ", ".join(ctor),
        "operands": operands,
        "operand_args": ", ".join(o.name for o in operands),
        "attributes": [{"name": a.name, "member": _member(a.name), "type": a.type} for a in attributes],
        "attribute_args": ", ".join(a.name for a in attributes),
        "attribute_params": ", ".join(f"const {a.type}& {a.name}" for a in attributes),
        "has_counts": any(o.kind != "one" for o in operands),
        "lowering": lowering,
        "n_outputs": len(node.schema.returns),
    }


def _lowering(f: NativeFunction, node: IrNode, operands: list[Operand], arguments: tuple[IrArgument, ...],
              backend: BackendYaml) -> dict:
    """Statements that rebuild the call's arguments from the operands' data and call the lowering."""
    lines = ["size_t at = 0;"]
    for o in operands:
        take = _FROM_DATA[o.value].format("data[at++]")
        if o.kind == "one":
            local = "const TensorBase&" if o.value == TENSOR else f"const {_LOCAL_TYPES[o.value]}"
            lines.append(f"{local} {o.name} = {take};")
        elif o.kind == "optional":
            local = "TensorBase" if o.value == TENSOR else _LOCAL_TYPES[o.value]
            lines.append(f"std::optional<{local}> {o.name};")
            lines.append(f"if ({_member('has_' + o.name)}) {o.name} = {take};")
        else:
            lines.append(f"std::vector<TensorBase> {o.name}(data.begin() + at, data.begin() + at + {_member(o.name + '_count')});")
            lines.append(f"at += {_member(o.name + '_count')};")
    args = ", ".join(a.name if a.is_operand else _member(a.name) for a in arguments)
    if not lowers_eagerly(backend):
        lines.append(f"return ::{backend.cpp_namespace}::lower_{kernel_name(f, node)}({args});")
        return {"lines": lines}
    call = f"::op::ops::{dispatcher.handle_name(f)}::call({args})"
    n = len(f.func.returns)
    if n == 1 and f.func.returns[0].type == _TENSOR:
        lines.append(f"return {{{call}}};")
    elif n > 1 and all(r.type == _TENSOR for r in f.func.returns):
        lines.append(f"auto results = {call};")
        lines.append("return {" + ", ".join(f"std::get<{i}>(results)" for i in range(n)) + "};")
    else:
        lines.append(f'OP_CHECK(false, "{f.func.name}: lazy lowering supports tensor results only");')
        lines.append("return {};")
    return {"lines": lines}


def native_body(f: NativeFunction, node: IrNode, backend: BackendYaml) -> list[str]:
    """The body of the generated kernel of a full_codegen function at the backend's key. Names
    of the operator library are qualified: the kernel's namespace may have its own (torch::lazy)."""
    operands, attributes, arguments = _arguments(node)
    runtime = f"::{backend.cpp_namespace}"
    tensors = [o for o in operands if o.value == TENSOR]
    lines = []
    device_args = ", ".join(o.name for o in tensors)
    # Plain tensors as a braced list; optional ones and lists flattened (clamp.Tensor's min and max).
    if all(o.kind == "one" for o in tensors):
        device_args = f"{{{device_args}}}"
    else:
        device_args = f"::op::lazy::tensor_operands({device_args})"
    lines.append(f"::op::Device device = {runtime}::common_device({device_args});" if tensors
                 else f"::op::Device device = {runtime}::default_device();")
    for o in operands:
        lines.append(f"auto {o.name}_ir = {runtime}::{_MAKE_OPERAND[o.value]}({o.name});")
    if needs_shape_function(backend, f):
        shape_call = f"{runtime}::compute_shape_{kernel_name(f, node)}({', '.join(a.name for a in arguments)})"
    else:
        meta_args = [f"::op::lazy::to_meta({a.name})" if a.value == TENSOR else a.name for a in arguments]
        shape_call = f"::op::lazy::shapes_of(::op::ops::{dispatcher.handle_name(f)}::call({', '.join(meta_args)}))"
    lines.append(f"std::vector<::op::lazy::Shape> shapes = {shape_call};")
    node_args = [f"{o.name}_ir" for o in operands] + [a.name for a in attributes]
    lines.append(f"auto node = {runtime}::reuse_or_make<{runtime}::{node.class_name}>({', '.join(node_args + ['std::move(shapes)'])});")
    n = len(f.func.returns)
    if n == 1 and f.func.returns[0].type == _TENSOR:
        lines.append(f"return {runtime}::make_tensor(::op::lazy::Value{{node, 0}}, device);")
    elif n > 1 and all(r.type == _TENSOR for r in f.func.returns):
        outs = ", ".join(f"{runtime}::make_tensor(::op::lazy::Value{{node, {i}}}, device)" for i in range(n))
        lines.append(f"return std::make_tuple({outs});")
    else:
        lines = [f'OP_CHECK(false, "{f.func.name}: IR kernels record tensor results only");']
    return lines


class GroupIr:
    """The IR nodes of one operator group under a backend that asks for IR."""

    def __init__(self, group: OperatorGroup, backend: BackendYaml):
        self.group = group
        self.backend = backend
        self.nodes: list[tuple[NativeFunction, IrNode]] = []
        for f in group.functions:
            node = backend.ir_node(f.func.name)
            if node is not None:
                self.nodes.append((f, node))

    def __bool__(self) -> bool:
        return bool(self.nodes)

    @property
    def header(self) -> str:
        return layout.backend_ir_header(self.backend.backend_key, self.group.name)

    def is_full_codegen(self, f: NativeFunction) -> bool:
        return f.func.name in self.backend.full_codegen

    def render_header(self) -> str:
        nodes = [node_context(node, f, self.backend) for f, node in self.nodes]
        functions = [d for f, node in self.nodes for d in backend_functions(self.backend, f, node).declarations]
        includes = [layout.handles_header(self.group.name)]
        return render("lazy_ir.h.j2", description=f"operator group '{self.group.name}'", runtime=runtime_header(self.backend),
                      namespace=self.backend.cpp_namespace, includes=includes, nodes=nodes, functions=functions,
                      backend=str(self.backend.backend_key))




def render_non_native(backend: BackendYaml) -> dict[str, str]:
    """backends/<Key>/<Key>NonNativeIr.h: the IR-only nodes (lowering written by hand)."""
    if not has_ir(backend):
        return {}
    nodes = [node_context(node, None, backend) for node in backend.ir_nodes if node.non_native]
    text = render("lazy_ir.h.j2", description="the non-native (IR-only) nodes; their lower() is written by hand",
                  runtime=runtime_header(backend), namespace=backend.cpp_namespace, includes=[], nodes=nodes,
                  functions=[], backend=str(backend.backend_key))
    return {layout.backend_non_native_ir(backend.backend_key): text}


def render_ir_functions(backend: BackendYaml, functions: dict) -> dict[str, str]:
    """backends/<Key>/<Key>IrFunctions.h: every lowering and shape function the backend writes
    (a backend that lowers eagerly writes none, and gets no such header)."""
    if not has_ir(backend) or lowers_eagerly(backend):
        return {}
    declarations = [d for f, node in functions for d in backend_functions(backend, f, node).declarations]
    argument_types = [t for f, _ in functions for t in types.schema_types(f.func)]
    text = render("ir_functions.h.j2", backend=str(backend.backend_key), runtime=runtime_header(backend),
                  namespace=backend.cpp_namespace, includes=types.headers(argument_types), declarations=declarations)
    return {layout.backend_ir_functions(backend.backend_key): text}


def render_ir_umbrella(backend: BackendYaml, groups: list[str]) -> dict[str, str]:
    """backends/<Key>/<Key>Ir.h: every group's IR header, a sorted include list."""
    if not has_ir(backend):
        return {}
    key = backend.backend_key
    headers = [layout.backend_ir_header(key, g) for g in sorted(groups)] + [layout.backend_non_native_ir(key)]
    return {layout.backend_ir_umbrella(key): render("umbrella.h.j2", description=f"Every IR node class of the {key} backend.",
                                                    headers=headers)}
