"""Lazy-tensor IR nodes a backend yaml asks for (PyTorch's ``ts_native_functions.yaml`` format).

``full_codegen`` and ``ir_gen`` operators get one IR node class each, named from the operator
name in CamelCase (``add.Tensor`` -> ``AddTensor``, ``_log_softmax`` -> ``LogSoftmax``: the name
and overload are lower-cased and every ``_``-separated word capitalized, as torchgen does, so
``sum.dim_IntList`` is ``SumDimIntlist``).  ``non_native`` entries are IR-only operators with no
native function: a ``func`` schema, an optional ``opkind`` (the node's op symbol; default
``aten::<name>``) and optional ``properties`` that shape what is generated for the node.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ..errors import DiagnosticCollector, Location, SchemaError, did_you_mean
from ..yamlio import LocatedList, LocatedMap
from .native_function import describe_value
from .schema import FunctionSchema, OperatorName

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


@dataclass(frozen=True)
class IrNode:
    """One IR node class: of a native operator (full_codegen / ir_gen) or non-native."""
    class_name: str
    schema: FunctionSchema
    opkind: str                  # the op symbol the node carries, e.g. aten::add or ltc_cast
    source: str                  # full_codegen, ir_gen or non_native
    properties: tuple[str, ...] = ()
    line: int = 0

    @property
    def non_native(self) -> bool:
        return self.source == "non_native"

    @property
    def op(self) -> str:
        """The operator the node stands for, ``aten::add.Tensor`` (non-native: its own name)."""
        return f"aten::{self.schema.name}" if not self.non_native else str(self.schema.name)

    def as_json(self) -> dict[str, Any]:
        return {"class": self.class_name, "op": self.op, "opkind": self.opkind, "non_native": self.non_native,
                "source": self.source, "properties": list(self.properties), "schema": str(self.schema)}


def native_ir_node(schema: FunctionSchema, source: str, line: int) -> IrNode:
    return IrNode(ir_class_name(schema.name), schema, f"aten::{schema.name.name}", source, (), line)


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
    """The opkind string, None when absent, False when invalid."""
    if "opkind" not in item:
        return None
    value = item["opkind"]
    if not isinstance(value, str) or not value.strip() or any(c.isspace() for c in value):
        errors.add(item.where("opkind"), f"'opkind' must be an op symbol such as 'ltc_cast' or 'at::prim::Constant', "
                                         f"got {describe_value(value)}")
        return False
    return value


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
