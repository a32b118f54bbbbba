"""Lazy-tensor IR for one operator group of a lazy backend (backend key Lazy).

Per group with IR nodes (its ``full_codegen`` / ``ir_gen`` operators):
  backends/Lazy/ops/<group>_ir.h   one IR node class per operator: tensor operands as IR values,
                                   every other argument stored by value (strings owned), a hash of
                                   the op and those arguments, to_string(), can_be_reused(...) and
                                   the node's lowering (the operator called eagerly through the
                                   dispatcher on the operands' data)
and in backends/Lazy/ops/<group>_Lazy.cpp, for each ``full_codegen`` operator, the native function
registered at Lazy: operands as IR values, output shapes and dtypes from the operator run on
meta tensors (structured operators' meta(), the composite of ``*_copy`` operators), a reused or
new node, a lazy tensor over it.  Non-native nodes (IR only) go to backends/Lazy/LazyNonNativeIr.h.

The generated code is written against the runtime in csrc/backends/lazy/ir.h.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ..api import dispatcher
from ..api.bindings import names
from ..api.types import value_type
from ..model.backend_yaml import BackendYaml
from ..model.dispatch_keys import DispatchKey
from ..model.grouping import OperatorGroup
from ..model.lazy_ir import IrNode
from ..model.native_function import NativeFunction
from ..model.schema import Argument, FunctionSchema
from ..model.types import BaseTy, BaseType, ListType, OptionalType, Type
from . import layout
from .render import render

RUNTIME_HEADER = "backends/lazy/ir.h"
_TENSOR = BaseType(BaseTy.Tensor)


def is_lazy(backend: BackendYaml) -> bool:
    """Only a Lazy backend gets IR (pytorch/xla's full_codegen stays a list of hand-written kernels here)."""
    return backend.backend_key is DispatchKey.Lazy


# Runtime types an attribute may have, qualified: a node class may share their name (non-native
# `scalar` is class Scalar, as torchgen names it) and would hide them inside its own body.
_RUNTIME_TYPES = re.compile(r"(?<![:\w])(Scalar|ScalarType|Layout|Device|MemoryFormat|QScheme|Dimname|Stream|DimVector|"
                            r"Generator|Storage|GraphModule|TensorBase)\b")


def owned_type(t: Type) -> str:
    """The C++ type a node stores an argument in: no views (ArrayRef, string_view) of the caller's data."""
    cpp = value_type(t)
    cpp = (cpp.replace("IntArrayRef", "std::vector<int64_t>").replace("ArrayRef<", "std::vector<")
           .replace("std::string_view", "std::string"))
    return _RUNTIME_TYPES.sub(r"::op::\1", cpp)


def operand_kind(t: Type) -> Optional[str]:
    """'one', 'optional' or 'list' for tensor arguments (IR operands), None for attributes."""
    if t == _TENSOR:
        return "one"
    if isinstance(t, OptionalType) and t.elem == _TENSOR:
        return "optional"
    if isinstance(t, ListType) and t.elem in (_TENSOR, OptionalType(_TENSOR)):
        return "list"
    return None


@dataclass(frozen=True)
class Operand:
    name: str
    kind: str          # one, optional, list
    ir_type: str       # the constructor parameter type


@dataclass(frozen=True)
class Attribute:
    name: str
    type: str          # stored by value


_IR_TYPES = {"one": "const Value&", "optional": "const std::optional<Value>&", "list": "const std::vector<Value>&"}


def _arguments(schema: FunctionSchema) -> tuple[list[Operand], list[Attribute], list[Argument]]:
    operands, attributes = [], []
    arguments = list(schema.arguments.all())
    for a in arguments:
        kind = operand_kind(a.type)
        if kind is not None:
            operands.append(Operand(a.name, kind, _IR_TYPES[kind]))
        else:
            attributes.append(Attribute(a.name, owned_type(a.type)))
    return operands, attributes, arguments


def _member(name: str) -> str:
    return f"{name}_"


def node_context(node: IrNode, f: Optional[NativeFunction]) -> dict:
    """What the IR template needs of one node (plain data)."""
    operands, attributes, arguments = _arguments(node.schema)
    ctor = [f"{o.ir_type} {o.name}" for o in operands] + [f"{a.type} {a.name}" for a in attributes]
    lowering = None
    if f is not None:
        lowering = _lowering(f, operands, arguments)
    return {
        "class_name": node.class_name,
        "op": node.op,
        "opkind": node.opkind,
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


def _lowering(f: NativeFunction, operands: list[Operand], arguments: list[Argument]) -> dict:
    """Statements that rebuild the call's arguments from the operands' data and call the operator."""
    lines = ["size_t at = 0;"]
    for o in operands:
        if o.kind == "one":
            lines.append(f"const TensorBase& {o.name} = data[at++];")
        elif o.kind == "optional":
            lines.append(f"std::optional<TensorBase> {o.name};")
            lines.append(f"if ({_member('has_' + o.name)}) {o.name} = data[at++];")
        else:
            lines.append(f"std::vector<TensorBase> {o.name}(data.begin() + at, data.begin() + at + {_member(o.name + '_count')});")
            lines.append(f"at += {_member(o.name + '_count')};")
    args = [a.name if operand_kind(a.type) else _member(a.name) for a in arguments]
    call = f"ops::{dispatcher.handle_name(f)}::call({', '.join(args)})"
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


def native_body(f: NativeFunction, node: IrNode, namespace: str) -> list[str]:
    """The body of the Lazy kernel of a full_codegen function (``namespace``: the IR classes')."""
    operands, attributes, arguments = _arguments(node.schema)
    tensors = [o for o in operands]
    lines = []
    device_args = ", ".join(o.name for o in tensors)
    lines.append(f"Device device = lazy::common_device({{{device_args}}});" if tensors
                 else "Device device = lazy::default_device();")
    for o in tensors:
        lines.append(f"auto {o.name}_ir = lazy::ir_value({o.name});")
    meta_args = [f"lazy::to_meta({a.name})" if operand_kind(a.type) else a.name for a in arguments]
    meta_call = f"ops::{dispatcher.handle_name(f)}::call({', '.join(meta_args)})"
    lines.append(f"std::vector<lazy::Shape> shapes = lazy::shapes_of({meta_call});")
    node_args = [f"{o.name}_ir" for o in tensors] + [a.name for a in attributes]
    lines.append(f"auto node = lazy::reuse_or_make<::{namespace}::{node.class_name}>({', '.join(node_args + ['std::move(shapes)'])});")
    n = len(f.func.returns)
    if n == 1 and f.func.returns[0].type == _TENSOR:
        lines.append("return lazy::make_tensor(lazy::Value{node, 0}, device);")
    elif n > 1 and all(r.type == _TENSOR for r in f.func.returns):
        outs = ", ".join(f"lazy::make_tensor(lazy::Value{{node, {i}}}, device)" for i in range(n))
        lines.append(f"return std::make_tuple({outs});")
    else:
        lines = [f'OP_CHECK(false, "{f.func.name}: the lazy backend records tensor results only");']
    return lines


class LazyGroupIr:
    """The IR nodes of one operator group under a lazy backend."""

    def __init__(self, group: OperatorGroup, backend: BackendYaml):
        self.group = group
        self.backend = backend
        self.nodes: list[tuple[NativeFunction, IrNode]] = []
        if is_lazy(backend):
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
        return is_lazy(self.backend) and f.func.name in self.backend.full_codegen

    def render_header(self) -> str:
        nodes = [node_context(node, f) for f, node in self.nodes]
        return render("lazy_ir.h.j2", description=f"operator group '{self.group.name}'", runtime=RUNTIME_HEADER,
                      namespace=self.backend.cpp_namespace, includes=[layout.handles_header(self.group.name)], nodes=nodes)


def render_non_native(backend: BackendYaml) -> dict[str, str]:
    """backends/Lazy/LazyNonNativeIr.h: the IR-only nodes (lowering written by hand)."""
    if not is_lazy(backend):
        return {}
    nodes = [node_context(node, None) for node in backend.ir_nodes if node.non_native]
    text = render("lazy_ir.h.j2", description="the non-native (IR-only) nodes; their lower() is written by hand",
                  runtime=RUNTIME_HEADER, namespace=backend.cpp_namespace, includes=[], nodes=nodes)
    return {layout.backend_non_native_ir(backend.backend_key): text}


def render_ir_umbrella(backend: BackendYaml, groups: list[str]) -> dict[str, str]:
    """backends/Lazy/LazyIr.h: every group's IR header, a sorted include list."""
    if not is_lazy(backend):
        return {}
    key = backend.backend_key
    headers = [layout.backend_ir_header(key, g) for g in sorted(groups)] + [layout.backend_non_native_ir(key)]
    return {layout.backend_ir_umbrella(key): render("umbrella.h.j2", description=f"Every IR node class of the {key} backend.",
                                                    headers=headers)}
