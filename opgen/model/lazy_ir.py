"""Lazy-tensor IR nodes a backend yaml asks for (PyTorch's ``ts_native_functions.yaml`` format).

``full_codegen`` and ``ir_gen`` operators get one IR node class each, named from the operator
name in CamelCase (``add.Tensor`` -> ``AddTensor``, ``_log_softmax`` -> ``LogSoftmax``: the name
and overload are lower-cased and every ``_``-separated word capitalized, as torchgen does, so
``sum.dim_IntList`` is ``SumDimIntlist``).  ``non_native`` entries are IR-only operators with no
native function: a ``func`` schema, an optional ``opkind`` (the node's op symbol; default
``aten::<name>``) and optional ``properties`` that shape what is generated for the node.

A node's arguments are operands (IR values, inputs of the graph) or attributes (stored in the
node, part of its hash), as lazy tensor core divides them: tensors, Scalars and, for operators
listed under ``symint``, SymInts are operands, so one graph serves every value of a scalar; the
rest (ints, SymInt lists, dtypes, strings, ...) are attributes.  ``TreatScalarsAsConstants``
keeps a non-native node's Scalars attributes (the ``scalar`` constant node itself).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ..errors import DiagnosticCollector, Location, SchemaError, did_you_mean
from ..yamlio import LocatedList, LocatedMap
from .native_function import describe_value
from .op_kind import parse_op_kind
from .schema import Argument, FunctionSchema, OperatorName
from .types import BaseTy, BaseType, ListType, OptionalType, Type

# What a non_native entry's `properties` may say (torchgen's vocabulary):
#   ShapeCompute: output shapes come from a shape function;  ShapeCache: shapes computed once, cached
#   Lower / LowerDeclOnly, CanBeReused / CanBeReusedDeclOnly, CreateFn / CreateFnDeclOnly: generate the
#   member (or only declare it, defined by hand);  TreatScalarsAsConstants: Scalars are node attributes.
PROPERTIES = ("CanBeReused", "CanBeReusedDeclOnly", "CreateFn", "CreateFnDeclOnly", "Lower", "LowerDeclOnly",
              "ShapeCache", "ShapeCompute", "TreatScalarsAsConstants")
NON_NATIVE_KEYS = ("func", "opkind", "properties")


def ir_class_name(name: OperatorName) -> str:
    """The IR node class of an operator: ``bitwise_and.Tensor`` -> ``BitwiseAndTensor``."""
    words = f"{name.name}_{name.overload_name}".lower().split("_")
    return "".join(word.capitalize() for word in words)


# What an operand's IR value stands for; the lowering turns its data back into that.
TENSOR, SCALAR, SYMINT = "tensor", "scalar", "symint"
_VALUE_TYPES = {BaseTy.Tensor: TENSOR, BaseTy.Scalar: SCALAR, BaseTy.SymInt: SYMINT}


@dataclass(frozen=True)
class IrArgument:
    """One argument of an IR node: an operand (``value`` is what it stands for, ``arity`` one,
    optional or list) or an attribute (``value`` None)."""
    argument: Argument
    value: Optional[str]         # tensor, scalar, symint; None for an attribute
    arity: str = "one"           # one, optional, list

    @property
    def name(self) -> str:
        return self.argument.name

    @property
    def is_operand(self) -> bool:
        return self.value is not None


def _classify(t: Type, symint: bool, scalars_are_constants: bool) -> tuple[Optional[str], str]:
    arity, elem = "one", t
    if isinstance(elem, OptionalType):
        arity, elem = "optional", elem.elem
    elif isinstance(elem, ListType):
        arity, elem = "list", elem.elem
        if isinstance(elem, OptionalType):
            elem = elem.elem
    value = _VALUE_TYPES.get(elem.name) if isinstance(elem, BaseType) else None
    if value == SCALAR and scalars_are_constants or value == SYMINT and not symint:
        value = None
    if value in (SCALAR, SYMINT) and arity == "list":  # Scalar[] and SymInt[] stay attributes, as in LTC
        value = None
    return value, arity if value is not None else "one"


@dataclass(frozen=True)
class IrNode:
    """One IR node class: of a native operator (full_codegen / ir_gen) or non-native."""
    class_name: str
    schema: FunctionSchema
    opkind: str                  # the op symbol the node carries, namespace::name (aten::add, prim::Constant)
    source: str                  # full_codegen, ir_gen or non_native
    properties: tuple[str, ...] = ()
    line: int = 0
    symint: bool = False         # listed under `symint`: its SymInts are operands

    @property
    def arguments(self) -> tuple[IrArgument, ...]:
        """Every schema argument in order, each an operand or an attribute."""
        constants = "TreatScalarsAsConstants" in self.properties
        return tuple(IrArgument(a, *_classify(a.type, self.symint, constants)) for a in self.schema.arguments.all())

    @property
    def operands(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.arguments if a.is_operand)

    @property
    def attributes(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.arguments if not a.is_operand)

    @property
    def non_native(self) -> bool:
        return self.source == "non_native"

    @property
    def op(self) -> str:
        """The operator the node stands for, ``aten::add.Tensor`` (non-native: its own name)."""
        return f"aten::{self.schema.name}" if not self.non_native else str(self.schema.name)

    def as_json(self) -> dict[str, Any]:
        return {"class": self.class_name, "op": self.op, "opkind": self.opkind, "non_native": self.non_native,
                "source": self.source, "properties": list(self.properties), "schema": str(self.schema),
                "operands": list(self.operands), "attributes": list(self.attributes)}


def native_ir_node(schema: FunctionSchema, source: str, line: int, symint: bool = False) -> IrNode:
    return IrNode(ir_class_name(schema.name), schema, f"aten::{schema.name.name}", source, (), line, symint)


def read_non_native(document: LocatedMap, errors: DiagnosticCollector) -> list[IrNode]:
    """The ``non_native`` entries of a backend yaml; each problem is added to ``errors`` with its line."""
    items = document.get("non_native")
    if items is None:
        return []
    if not isinstance(items, LocatedList):
        errors.add(document.where("non_native"), f"'non_native' must be a list of entries such as "
                                                 f"'- func: scalar(Scalar value, ScalarType type) -> Tensor', "
                                                 f"got {describe_value(items)}")
        return []
    nodes: list[IrNode] = []
    seen: dict[str, int] = {}
    for item, line in zip(items, items.item_lines):
        node = _non_native_entry(item, Location(document.file, line), errors)
        if node is None:
            continue
        first = seen.get(node.class_name)
        if first is not None:
            errors.add(Location(document.file, node.line), f"non_native node {node.class_name} ({node.schema.name}) is "
                                                           f"defined twice (first at line {first}); remove one")
            continue
        seen[node.class_name] = node.line
        nodes.append(node)
    return nodes


def _non_native_entry(item: Any, location: Location, errors: DiagnosticCollector) -> Optional[IrNode]:
    if not isinstance(item, LocatedMap):
        errors.add(location, f"a 'non_native' entry must be a mapping with 'func:', got {describe_value(item)}; "
                             f"write '- func: name(Tensor input) -> Tensor'")
        return None
    bad = False
    for key in item:
        if key not in NON_NATIVE_KEYS:
            hint = did_you_mean(str(key), NON_NATIVE_KEYS)
            hint = f"{hint} " if hint else ""
            errors.add(item.where(key), f"unknown key '{key}' in a 'non_native' entry; {hint}"
                                        f"known keys: {', '.join(NON_NATIVE_KEYS)}")
            bad = True
    schema = _schema(item, location, errors)
    opkind = _opkind(item, errors)
    properties = _properties(item, errors)
    if schema is None or opkind is False or properties is None or bad:
        return None
    line = item.where("func").line
    return IrNode(ir_class_name(schema.name), schema, opkind or f"aten::{schema.name.name}", "non_native", properties, line)


def _schema(item: LocatedMap, location: Location, errors: DiagnosticCollector) -> Optional[FunctionSchema]:
    if "func" not in item:
        errors.add(item.where(), "a 'non_native' entry needs 'func:', e.g. 'func: cast(Tensor input, ScalarType dtype) -> Tensor'")
        return None
    text = item["func"]
    if not isinstance(text, str):
        errors.add(item.where("func"), f"'func' must be a schema string, got {describe_value(text)}")
        return None
    try:
        schema = FunctionSchema.parse(text)
    except SchemaError as exc:
        errors.add(item.where("func"), f"'{text}' is not a function schema ({exc.diagnostics[0].message})")
        return None
    if len(schema.returns) == 0:
        errors.add(item.where("func"), f"non_native {schema.name} returns nothing; an IR node produces at least one value")
        return None
    return schema


def _opkind(item: LocatedMap, errors: DiagnosticCollector):
    """The op kind, namespace::name; None when absent, False when invalid."""
    if "opkind" not in item:
        return None
    value = item["opkind"]
    kind = parse_op_kind(value) if isinstance(value, str) else None
    if kind is None:
        errors.add(item.where("opkind"), f"'opkind' must be an op symbol such as 'ltc_cast', 'at::prim::Constant' or "
                                         f"'lazy::cast', got {describe_value(value)}")
        return False
    return kind


def _properties(item: LocatedMap, errors: DiagnosticCollector) -> Optional[tuple[str, ...]]:
    value = item.get("properties")
    if value is None:
        return ()
    if not isinstance(value, LocatedList):
        errors.add(item.where("properties"), f"'properties' must be a list such as [ShapeCompute], got {describe_value(value)}")
        return None
    found: list[str] = []
    ok = True
    for prop, line in zip(value, value.item_lines):
        where = Location(item.file, line)
        if not isinstance(prop, str) or prop not in PROPERTIES:
            otherwise = f"known: {', '.join(PROPERTIES)}"
            hint = did_you_mean(prop, PROPERTIES, otherwise) if isinstance(prop, str) else otherwise
            errors.add(where, f"unknown property {describe_value(prop) if not isinstance(prop, str) else repr(prop)}; {hint}")
            ok = False
        elif prop in found:
            errors.add(where, f"property '{prop}' is listed twice; remove one")
            ok = False
        else:
            found.append(prop)
    return tuple(found) if ok else None
