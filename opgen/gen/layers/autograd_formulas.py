"""derivatives.yaml formulas translated to C++ over the method-free API, for the per-group
Autograd codegen: generated units see ``op::TensorBase`` and the per-operator headers
``ops/<g>.h`` only (``OP_ASSERT_NO_TENSOR_METHODS``), never a Tensor with methods.

A formula is parsed (``cpp_expr``), each name is given a kind from the function's schema, and
the tree is printed back with:
- ``x.f(args)``, f an operator with a method variant, as ``op::f(args with x at self's position
  in the schema)`` (``c.where(a, b)`` is ``op::where(a, c, b)``); an operator that is a method
  only is called through its handle, ``op::ops::<handle>::call(...)``, defaults filled in as the
  method fills them. An in-place method on a temporary (``where(...).masked_fill_(m, 0)``) calls
  the functional variant: a temporary cannot bind the in-place function's ``TensorBase&``, and
  writing into a fresh result is the functional result.
- ``+ - * /``, unary ``-`` and the comparisons with a Tensor operand as ``op::add/sub/mul/div/neg/
  eq/ne/lt/le/gt/ge``, checked against the overloads the model has (Tensor-Tensor, Tensor-Scalar);
  a number on the left of ``+ *`` and of a comparison swaps the operands (``2 * t`` is
  ``op::mul(t, 2)``, ``0 < t`` is ``op::gt(t, 0)``), of ``-`` uses ``rsub`` where the model has it.
  Arithmetic between numbers stays C++.
- Tensor accessors as TensorBase's: ``sym_sizes()`` -> ``sizes()``, ``sym_numel()`` ->
  ``numel()``, ``sym_strides()`` -> ``strides()``, ``scalar_type()`` -> ``dtype()``,
  ``options()`` -> ``op::TensorOptions(x.dtype()).with_device(x.device())``.
- Backward formulas first get the model's saved-variable substitutions (``self.sym_sizes()`` ->
  ``self_sym_sizes``, ``zeros_like(self)`` -> ``self_info.zeros()``: formulas.saved_names, the
  rewrite torchgen makes), so the text reads the node's saved members.
- The documented helpers as ``op::autograd::helpers::<name>(...)``; other free calls of operators
  as ``op::f(...)`` (PyTorch's ``at::f`` and ``f_symint`` spellings too: SymInt is int64_t here); a
  <cmath> function of numbers (``sqrt(M_PI)``) as ``std::sqrt(M_PI)``.

The result names the operator groups whose ``ops/<g>.h`` the text needs. Anything else raises an
``OpgenError`` at the formula's FILE:LINE naming the construct.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Union

from ...api import cpp
from ...api.dispatcher import handle_name
from ...errors import Location, OpgenError
from ...model.derivatives import DerivativeInfo, Derivatives, Formula, ForwardFormula, cpp_argument_names, output_names
from ...model.formulas import saved_names
from ...model.loader import Model
from ...model.native_function import NativeFunction, cpp_name
from ...model.types import BaseTy, BaseType, ListType, OptionalType, Type
from ..engine import layout
from .cpp_expr import (
    CONDITIONAL, POSTFIX, UNARY, Binary, Braces, Call, Conditional, ExpressionError, Index, Literal, Member, Name,
    Node, Unary, binary_precedence, parse_expression, wrap,
)

HELPERS_NAMESPACE = "op::autograd::helpers"
# The helpers formulas may call (yaml/derivatives.yaml's header lists them) and their result's kind.
HELPERS: Mapping[str, str] = {
    "maybe_multiply": "Tensor", "sum_to": "Tensor", "restore_reduced_dims": "Tensor",
    "scale_grad_by_count": "Tensor", "mean_backward": "Tensor", "pow_backward": "Tensor",
    "pow_backward_self": "Tensor", "pow_backward_exponent": "Tensor", "clamp_backward": "Tensor",
    "permute_backwards": "Tensor", "as_strided_backward": "Tensor", "_to_copy_backward": "Tensor",
    "isDifferentiableType": "bool",
}
# Tensor accessor -> (TensorBase's spelling, with {} for the tensor; the result's kind).
ACCESSORS: Mapping[str, tuple[str, str]] = {
    "sym_sizes": ("{t}.sizes()", "ints"), "sym_numel": ("{t}.numel()", "number"),
    "sym_strides": ("{t}.strides()", "ints"), "scalar_type": ("{t}.dtype()", "dtype"),
    "options": ("op::TensorOptions({t}.dtype()).with_device({t}.device())", "options"),
    "sym_size": ("{t}.size({a})", "number"), "sym_stride": ("{t}.stride({a})", "number"),
    "dim": ("{t}.dim()", "number"), "numel": ("{t}.numel()", "number"), "defined": ("{t}.defined()", "bool"),
    "sizes": ("{t}.sizes()", "ints"), "strides": ("{t}.strides()", "ints"), "device": ("{t}.device()", "device"),
    "dtype": ("{t}.dtype()", "dtype"),
}
# Binary operators with a Tensor operand -> operator name; comparisons swapped for a number on the left.
TENSOR_BINARY = {"+": "add", "-": "sub", "*": "mul", "/": "div",
                 "==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}
_SWAPPED = {"+": "+", "*": "*", "==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_BOOL_RESULT = frozenset(("==", "!=", "<", "<=", ">", ">=", "&&", "||"))
# Suffixes of saved derived names (formulas.SAVED_RULES) -> the saved value's kind.
_DERIVED_KINDS = (
    ("_sym_sizes", "ints"), ("_sym_strides", "ints"), ("_sym_numel", "number"), ("_numel", "number"),
    ("_dim", "number"), ("_options", "options"), ("_scalar_type", "dtype"), ("_info", "info"),
    ("_geometry", "geometry"), ("_layout", "other"), ("_conjugate", "bool"), ("_sym_sizes_opt", "optional"),
    ("_self_sym_blocksize_opt", "optional"),
    ("_args_sizes", "other"), ("_args_sizes_symint", "other"), ("_args_scalartypes", "other"),
)
_NULLOPT = ("std::nullopt", "c10::nullopt", "at::nullopt", "::std::nullopt")
_MATH_CONSTANT = re.compile(r"M_[A-Z0-9_]+$")  # M_PI, M_SQRT1_2 (<cmath>)
# PyTorch's C++ API spells the SymInt overload of some operators f_symint; SymInt is int64_t here.
_SYMINT_SUFFIX = "_symint"
# <cmath> functions a formula applies to numbers (sqrt(M_PI)); on a Tensor they are operators.
_CMATH = frozenset(("sqrt", "exp", "log", "pow", "abs", "sin", "cos"))


@dataclass(frozen=True)
class TranslatedFormula:
    """One formula over the method-free API: the C++ expression and the operator groups whose
    ``ops/<g>.h`` it calls into (sorted)."""

    cpp: str
    groups: tuple[str, ...]

    @property
    def headers(self) -> tuple[str, ...]:
        return tuple(layout.api_header(g) for g in self.groups)


@dataclass(frozen=True)
class Scope:
    """The names a formula may read and their kinds ("Tensor", "number", "bool", "ints", ...)."""

    kinds: Mapping[str, str]
    derived_of: tuple[str, ...] = ()   # backward: variables whose derived values are saved (self_sym_sizes), in torchgen's order
    forward: bool = False              # <var>_p / <var>_t name the primal and the tangent

    def kind(self, name: str) -> Optional[str]:
        if name in self.kinds:
            return self.kinds[name]
        for var in self.derived_of:
            if name.startswith(var + "_"):
                rest = name[len(var):]
                if rest.startswith("_sym_argsize_"):
                    return "number"
                for suffix, kind in _DERIVED_KINDS:
                    if rest == suffix:
                        return kind
        if self.forward and name.endswith(("_p", "_t")):
            base = name[:-2]
            if base == "original_self":
                return "Tensor"
            if base in self.kinds:
                return self.kinds[base]
        return None


def kind_of(t: Type) -> str:
    if isinstance(t, BaseType):
        if t.name is BaseTy.Tensor:
            return "Tensor"
        if t.name in (BaseTy.Scalar, BaseTy.int, BaseTy.SymInt, BaseTy.float):
            return "number"
        if t.name in (BaseTy.bool, BaseTy.SymBool):
            return "bool"
        return {BaseTy.ScalarType: "dtype", BaseTy.str: "string", BaseTy.Device: "device", BaseTy.Layout: "layout",
                BaseTy.MemoryFormat: "memory_format", BaseTy.Generator: "generator"}.get(t.name, "other")
    if isinstance(t, OptionalType):
        return "Tensor?" if kind_of(t.elem) == "Tensor" else "optional"
    if isinstance(t, ListType):
        elem = kind_of(t.elem)
        return {"Tensor": "tensors", "number": "ints", "bool": "bools"}.get(elem, "other")
    return "other"


def function_scope(f: NativeFunction, forward: bool = False) -> Scope:
    """What a formula of ``f`` may read: the C++ arguments, the outputs, grad/grads/
    grad_input_mask, named gradients, and (backward) the derived saved names of those."""
    kinds: dict[str, str] = {"grad": "Tensor", "grads": "tensors", "grad_input_mask": "bools", "retain_variables": "bool"}
    args = {a.name: a for a in f.func.arguments.all()}
    for name in cpp_argument_names(f):
        kinds[name] = "options" if name == "options" and name not in args else kind_of(args[name].type)
    if forward:  # forward formulas may name the schema's arguments (dtype, device) too
        for name, a in args.items():
            kinds.setdefault(name, kind_of(a.type))
    for name, ret in zip(output_names(f), f.func.returns):
        kinds[name] = kind_of(ret.type)
        if ret.name:
            kinds[f"grad_{ret.name}"] = "Tensor"
    if f.func.name.name.base.startswith("_foreach_"):
        kinds["i"] = "number"
    variables = tuple(cpp_argument_names(f)) + tuple(output_names(f))
    return Scope(kinds, derived_of=() if forward else variables, forward=forward)


@dataclass(frozen=True)
class _Value:
    text: str
    kind: str
    precedence: int = POSTFIX
    temporary: bool = True   # an rvalue (a call's result), not a named variable


class _Index:
    """The model's operators by C++ name: free functions and methods (no out= variants)."""

    def __init__(self, model: Model):
        self.functions: dict[str, list[NativeFunction]] = {}
        self.methods: dict[str, list[NativeFunction]] = {}
        for f in model.functions:
            if f.func.is_out_fn():
                continue
            name = cpp_name(f.func)
            if "function" in f.variants:
                self.functions.setdefault(name, []).append(f)
            if "method" in f.variants and f.func.arguments.self_arg is not None:
                self.methods.setdefault(name, []).append(f)


class FormulaTranslator:
    """Translates formulas against one model (its index of operators is built once)."""

    def __init__(self, model: Model):
        self.model = model
        self.index = _Index(model)

    # ----- entry points -----

    def translate(self, text: str, scope: Scope, location: Optional[Location] = None) -> TranslatedFormula:
        """``text`` over ``scope``; a backward scope's derived expressions (``self.sym_sizes()``)
        first become the saved names, as the model derives them."""
        rewritten = text
        if not scope.forward and scope.derived_of:
            rewritten, _ = saved_names(text, scope.derived_of)
        try:
            tree = parse_expression(rewritten)
            return _Printer(self.index, scope).formula(tree)
        except ExpressionError as exc:
            shown = f"'{text}'" + (f" (with saved values: '{rewritten}')" if rewritten != text else "")
            raise FormulaError(exc.construct, f"cannot translate formula {shown}: {exc.message}", location) from None

    def backward(self, info: DerivativeInfo, formula: Formula) -> TranslatedFormula:
        return self.translate(formula.text, function_scope(self._function(info)), formula.location)

    def forward(self, info: DerivativeInfo, formula: ForwardFormula) -> Optional[TranslatedFormula]:
        """None for auto_element_wise / auto_linear (derived from the backward formula)."""
        if formula.text.strip() in ("auto_element_wise", "auto_linear"):
            return None
        return self.translate(formula.text, function_scope(self._function(info), forward=True), formula.location)

    def info_groups(self, info: DerivativeInfo) -> tuple[str, ...]:
        """The groups every formula of ``info`` (backward and forward) needs."""
        found = set()
        for formula in info.formulas:
            found.update(self.backward(info, formula).groups)
        for forward in info.forward_formulas:
            translated = self.forward(info, forward)
            if translated is not None:
                found.update(translated.groups)
        return tuple(sorted(found))

    def group_headers(self, derivatives: Derivatives, group: str) -> tuple[str, ...]:
        """The ``ops/<g>.h`` headers the formulas of operator group ``group``'s infos need."""
        found = set()
        for info in derivatives.infos:
            if self._function(info).root_name == group:
                found.update(self.info_groups(info))
        return tuple(layout.api_header(g) for g in sorted(found))

    def _function(self, info: DerivativeInfo) -> NativeFunction:
        return self.model.by_name[info.name]


class FormulaError(OpgenError):
    """A formula the translator cannot express; ``construct`` labels what it uses."""

    def __init__(self, construct: str, message: str, location: Optional[Location]):
        super().__init__(message, location)
        self.construct = construct


def _unsupported(construct: str, message: str) -> ExpressionError:
    return ExpressionError(construct, message)


class _Printer:
    def __init__(self, index: _Index, scope: Scope):
        self.index = index
        self.scope = scope
        self.groups: set[str] = set()

    def formula(self, tree: Node) -> TranslatedFormula:
        value = self.expr(tree)
        return TranslatedFormula(value.text, tuple(sorted(self.groups)))

    def expr(self, node: Node) -> _Value:
        handler = getattr(self, "_" + type(node).__name__.lower())
        return handler(node)

    # ----- leaves -----

    def _literal(self, node: Literal) -> _Value:
        return _Value(node.text, {"number": "number", "string": "string", "char": "number"}[node.kind])

    def _name(self, node: Name) -> _Value:
        if node.text in ("true", "false"):
            return _Value(node.text, "bool", temporary=False)
        if node.text in _NULLOPT or node.text == "nullptr":
            return _Value("std::nullopt" if node.text != "nullptr" else "nullptr", "optional", temporary=False)
        if _MATH_CONSTANT.match(node.text):
            return _Value(node.text, "number", temporary=False)
        if node.qualified:
            raise _unsupported("qualified name", f"qualified name '{node.text}' is outside the formula API")
        kind = self.scope.kind(node.text)
        if kind is None:
            raise _unsupported("unknown name", f"'{node.text}' is neither an argument, an output nor a saved value")
        return _Value(node.text, kind, temporary=False)

    def _braces(self, node: Braces) -> _Value:
        items = [self.expr(i) for i in node.items]
        return _Value("{" + ", ".join(i.text for i in items) + "}", "other")  # a list, an empty optional ...

    # ----- operators -----

    def _unary(self, node: Unary) -> _Value:
        operand = self.expr(node.operand)
        if operand.kind == "Tensor":
            if node.op == "-":
                return self.operator_call("neg", [operand], ("Tensor",))
            raise _unsupported(f"Tensor operator {node.op}", f"unary '{node.op}' on a Tensor is outside the formula API")
        if node.op == "*":
            if operand.kind not in ("optional", "Tensor?"):
                raise _unsupported("dereference", f"'*' of a {operand.kind} value")
            return _Value("*" + wrap(operand.text, operand.precedence, UNARY), "other" if operand.kind == "optional" else "Tensor", UNARY)
        kind = "bool" if node.op == "!" else operand.kind
        return _Value(node.op + wrap(operand.text, operand.precedence, UNARY), kind, UNARY)

    def _binary(self, node: Binary) -> _Value:
        left, right = self.expr(node.left), self.expr(node.right)
        op = node.op
        if "Tensor" in (left.kind, right.kind):
            return self.tensor_binary(op, left, right)
        if "Tensor?" in (left.kind, right.kind) or "tensors" in (left.kind, right.kind):
            raise _unsupported(f"Tensor operator {op}", f"'{op}' on an optional Tensor or a Tensor list")
        level = binary_precedence(op)
        text = f"{wrap(left.text, left.precedence, level)} {op} {wrap(right.text, right.precedence, level + 1)}"
        kind = "bool" if op in _BOOL_RESULT else left.kind if left.kind == right.kind else "number"
        return _Value(text, kind, level)

    def tensor_binary(self, op: str, left: _Value, right: _Value) -> _Value:
        if op not in TENSOR_BINARY:
            raise _unsupported(f"Tensor operator {op}", f"'{op}' with a Tensor operand is outside the formula API "
                                                        "(use + - * / == != < <= > >= or an operator)")
        other = right if left.kind == "Tensor" else left
        if other.kind not in ("Tensor", "number", "bool"):
            raise _unsupported(f"Tensor {op} {other.kind}", f"'{op}' between a Tensor and a {other.kind} value")
        if left.kind == "Tensor":
            return self.operator_call(TENSOR_BINARY[op], [left, right], ("Tensor", "Tensor" if right.kind == "Tensor" else "number"))
        if op in _SWAPPED:
            return self.operator_call(TENSOR_BINARY[_SWAPPED[op]], [right, left], ("Tensor", "number"))
        if op == "-" and self.find_overload("rsub", ("Tensor", "number")):
            return self.operator_call("rsub", [right, left], ("Tensor", "number"))
        raise _unsupported(f"number {op} Tensor", f"'{left.text} {op} {right.text}': a number on the left of '{op}' "
                                                 "has no operator in the model")

    def find_overload(self, name: str, kinds: tuple[str, ...]) -> Optional[NativeFunction]:
        for f in self.index.functions.get(name, ()):
            args = list(f.func.arguments.all())
            if len(args) >= len(kinds) and all(kind_of(a.type) == k for a, k in zip(args, kinds)):
                return f
        return None

    def operator_call(self, name: str, operands: list[_Value], kinds: tuple[str, ...]) -> _Value:
        f = self.find_overload(name, kinds)
        if f is None:
            raise _unsupported(f"no {name}({', '.join(kinds)})",
                               f"the model has no function {name}({', '.join('Scalar' if k == 'number' else k for k in kinds)}) "
                               "for this operator")
        self.groups.add(f.root_name)
        return _Value(f"op::{name}({', '.join(o.text for o in operands)})", _return_kind([f]))

    def _conditional(self, node: Conditional) -> _Value:
        cond, then, other = self.expr(node.cond), self.expr(node.then), self.expr(node.other)
        kind = "Tensor" if "Tensor" in (then.kind, other.kind) else then.kind
        text = f"{wrap(cond.text, cond.precedence, 1)} ? {then.text} : {wrap(other.text, other.precedence, CONDITIONAL)}"
        return _Value(text, kind, CONDITIONAL)

    def _index(self, node: Index) -> _Value:
        obj, index = self.expr(node.obj), self.expr(node.index)
        kind = {"tensors": "Tensor", "bools": "bool", "ints": "number"}.get(obj.kind)
        if kind is None:
            raise _unsupported("subscript", f"subscript of a {obj.kind} value")
        return _Value(f"{wrap(obj.text, obj.precedence, POSTFIX)}[{index.text}]", kind, temporary=obj.temporary)

    def _member(self, node: Member) -> _Value:
        raise _unsupported("data member", f"member '{'->' if node.arrow else '.'}{node.name}' without a call")

    # ----- calls -----

    def _call(self, node: Call) -> _Value:
        if isinstance(node.callee, Member):
            return self.method(node.callee, node.args)
        if not isinstance(node.callee, Name):
            raise _unsupported("call of an expression", "only named functions and methods can be called")
        name = node.callee.text
        args = [self.expr(a) for a in node.args]
        if name in HELPERS:
            return _Value(f"{HELPERS_NAMESPACE}::{name}({_join(args)})", HELPERS[name])
        if name == "Tensor" and not args:
            return _Value("op::TensorBase()", "Tensor")
        if name.startswith(("at::", "std::")) and name.split("::", 1)[1] in _CMATH and _numbers(args):
            name = name.split("::", 1)[1]
        elif name.startswith("at::") and "::" not in name[4:]:
            name = name[4:]  # PyTorch's operator namespace: at::where is an operator like where
        if node.callee.qualified and "::" in name:
            raise _unsupported("qualified call", f"call of '{name}', which is outside the formula API")
        if name in _CMATH and _numbers(args):
            return _Value(f"std::{name}({_join(args)})", "number")
        if name.endswith(_SYMINT_SUFFIX) and name[:-len(_SYMINT_SUFFIX)] in self.index.functions:
            name = name[:-len(_SYMINT_SUFFIX)]
        candidates = [f for f in self.index.functions.get(name, ()) if _takes(f, args)]
        if not candidates:
            known = name in self.index.functions or name in self.index.methods
            raise _unsupported("unknown function" if not known else "no overload",
                               f"'{name}' is {'no operator function taking ' + str(len(args)) + ' arguments' if known else 'neither an operator function nor a helper'}")
        self.groups.update(f.root_name for f in candidates)
        return _Value(f"op::{name}({_join(args)})", _return_kind(candidates))

    def method(self, callee: Member, raw_args: tuple[Node, ...]) -> _Value:
        receiver = self.expr(callee.obj)
        args = [self.expr(a) for a in raw_args]
        name = callee.name
        if callee.arrow:
            raise _unsupported("->", f"'->{name}()' is outside the formula API")
        if receiver.kind == "info" and name == "zeros" and not args:
            return _Value(f"{receiver.text}.zeros()", "Tensor")
        if receiver.kind in ("optional", "Tensor?") and name in ("has_value", "value") and not args:
            return _Value(f"{wrap(receiver.text, receiver.precedence, POSTFIX)}.{name}()",
                          "bool" if name == "has_value" else ("Tensor" if receiver.kind == "Tensor?" else "other"))
        if receiver.kind != "Tensor":
            raise _unsupported(f"method of {receiver.kind}", f"'.{name}()' on a {receiver.kind} value ('{receiver.text}')")
        if name in ACCESSORS:
            spelling, kind = ACCESSORS[name]
            if len(args) != int("{a}" in spelling):
                raise _unsupported("accessor arguments", f"Tensor.{name}() given {len(args)} arguments")
            base = wrap(receiver.text, receiver.precedence, POSTFIX)
            return _Value(spelling.format(t=base, a=args[0].text if args else ""), kind)
        if name.endswith(_SYMINT_SUFFIX) and name[:-len(_SYMINT_SUFFIX)] in self.index.methods:
            name = name[:-len(_SYMINT_SUFFIX)]
        candidates = [f for f in self.index.methods.get(name, ()) if _method_overload(f, args)]
        if not candidates:
            known = name in self.index.methods
            raise _unsupported("unknown method" if not known else "no overload",
                               f"Tensor.{name}({len(args)} arguments) is {'no overload' if known else 'no operator method'} of the model")
        exact = [f for f in candidates if _method_overload(f, args, exact=True)]
        if exact:  # as C++ overload resolution: an exact match beats one that converts (to.dtype over to.dtype_layout)
            candidates = exact
        if receiver.temporary and name.endswith("_") and not name.endswith("__"):
            functional = [f for f in self.index.methods.get(name[:-1], ()) if _method_overload(f, args)]
            if functional:
                name, candidates = name[:-1], functional
            elif not all(f.use_const_ref_for_mutable_tensors for f in candidates):
                raise _unsupported("in-place on a temporary", f"Tensor.{name} writes into a temporary "
                                   f"('{receiver.text}') and {name[:-1]} has no method variant to use instead")
        with_function = [f for f in candidates if "function" in f.variants]
        if len(with_function) == len(candidates):
            positions = {_self_position(f) for f in candidates}
            if len(positions) != 1 or min(positions) > len(args):
                raise _unsupported("ambiguous self", f"the overloads of Tensor.{name} put self at different positions")
            position = positions.pop()
            self.groups.update(f.root_name for f in candidates)
            ordered = args[:position] + [receiver] + args[position:]
            return _Value(f"op::{name}({_join(ordered)})", _return_kind(candidates))
        if len(candidates) != 1:
            raise _unsupported("ambiguous method", f"Tensor.{name} matches several overloads, some of them methods only")
        return self.handle_call(candidates[0], receiver, args)

    def handle_call(self, f: NativeFunction, receiver: _Value, args: list[_Value]) -> _Value:
        """A method-only operator: its handle, with the arguments the method passes."""
        overload = next(m for m in cpp.methods(f) if len(m.params) == len(args))
        given = {p.name: a.text for p, a in zip(overload.params, args)}
        self_name = f.func.arguments.self_arg.name
        call = []
        for binding, value in zip(f.func.arguments.all(), overload.call_args):
            call.append(receiver.text if binding.name == self_name else given.get(binding.name, value))
        self.groups.add(f.root_name)
        return _Value(f"op::ops::{handle_name(f)}::call({', '.join(call)})", _return_kind([f]))


def _numbers(values: list[_Value]) -> bool:
    return bool(values) and all(v.kind == "number" for v in values)


def _join(values: Iterable[_Value]) -> str:
    return ", ".join(v.text for v in values)


def _takes(f: NativeFunction, args: list[_Value]) -> bool:
    """Whether a free function of ``f`` accepts ``args`` (count, and kinds where known)."""
    kinds = [kind_of(a.type) for a in f.func.arguments.all()]
    return (any(len(fn.params) >= len(args) >= sum(p.default is None for p in fn.params) for fn in cpp.functions(f))
            and all(_accepts(k, a.kind) for k, a in zip(kinds, args)))


def _method_overload(f: NativeFunction, args: list[_Value], exact: bool = False) -> bool:
    """Whether the Tensor method of ``f`` accepts ``args`` (self not among them); ``exact``: each
    argument's kind is the parameter's."""
    kinds = [kind_of(a.type) for a in f.func.arguments.all() if a.name != "self"]
    fits = (lambda k, a: k == a) if exact else _accepts
    return any(len(m.params) == len(args) for m in cpp.methods(f)) and all(fits(k, a.kind) for k, a in zip(kinds, args))


def _accepts(param: str, arg: str) -> bool:
    """Whether a parameter of kind ``param`` takes a value of kind ``arg`` (unknown kinds: yes)."""
    if param == arg or "other" in (param, arg):
        return True
    if param == "number":
        return arg == "bool"
    if param == "bool":
        return arg == "number"
    if param == "Tensor?":
        return arg in ("Tensor", "optional")
    if param == "optional":  # TensorOptions is no argument here: the API takes dtype, layout, device apart
        return arg not in ("Tensor", "tensors", "Tensor?", "options")
    if param == "ints":
        return arg in ("number",)  # int[1] takes one int
    return False


def _self_position(f: NativeFunction) -> int:
    return [a.name for a in f.func.arguments.all()].index("self")


def _return_kind(functions: list[NativeFunction]) -> str:
    kinds = {kind_of(f.func.returns[0].type) if len(f.func.returns) == 1 else "other" for f in functions}
    return kinds.pop() if len(kinds) == 1 else "other"


def translate_all(translator: FormulaTranslator, derivatives: Derivatives) -> tuple[list[tuple[DerivativeInfo, object, TranslatedFormula]], list[FormulaError]]:
    """Every backward and (non-auto) forward formula of ``derivatives``: (info, formula, result)
    for those that translate, and the errors of those that do not."""
    done: list[tuple[DerivativeInfo, object, TranslatedFormula]] = []
    failed: list[FormulaError] = []
    for info in derivatives.infos:
        if info.derived_from is not None:
            continue  # the view's own info translates the same formulas
        pairs: list[tuple[Union[Formula, ForwardFormula], bool]] = [(f, False) for f in info.formulas]
        pairs += [(f, True) for f in info.forward_formulas if f.text.strip() not in ("auto_element_wise", "auto_linear")]
        for formula, is_forward in pairs:
            try:
                translated = translator.forward(info, formula) if is_forward else translator.backward(info, formula)
            except FormulaError as exc:
                failed.append(exc)
                continue
            done.append((info, formula, translated))
    return done, failed
