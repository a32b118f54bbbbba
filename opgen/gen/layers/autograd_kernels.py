"""One operator group's Autograd and ADInplaceOrView kernels and backward nodes, as template data.

torchgen writes these into VariableType_N.cpp / ADInplaceOrViewType_N.cpp / Functions.cpp hash
shards; here each group gets ``ops/<g>_Autograd.cpp`` (its backward node classes and Autograd
kernels) and ``ops/<g>_ADInplaceOrView.cpp``, so a formula edit touches one group's files.

An ``AutogradModel`` holds what a run knows (the decisions of autograd_plan.py, the formula
translator); ``group_autograd`` turns one group into:
- ``NodeClass``es: one per backward node the group's kernels make (``MulBackward0`` serves
  ``mul.Tensor`` and ``mul_.Tensor``), with the members the formulas read and an ``apply`` that
  evaluates each formula whose input needs a gradient;
- Autograd wrappers: record (compute_requires_grad, ``&=`` the entry's output_differentiability
  condition; check_no_requires_grad for a Tensor argument without a formula; make the node with
  its next edges, save), redispatch below autograd, set the outputs' history (``rebase_history``
  for in-place, ``set_history`` for an in-place view such as transpose_); out=
  functions refuse inputs that require grad; non-differentiable ones pass through; functions
  without a formula whose outputs could carry a gradient get a ``NotImplemented`` node;
- ADInplaceOrView wrappers: bump the written arguments' versions, record views;
- forward mode, in the Autograd wrappers (``_forward``): when an input carries a tangent, the
  outputs' tangents from the entry's forward formula (``result:``, or torchgen's expansion of
  auto_element_wise / auto_linear), computed while tangents are hidden; a function without one
  (and every out= or NotImplemented function) raises PyTorch's "Trying to use forward AD with ...".

A formula the translator cannot express (PyTorch's own helpers, list inputs) still gets its node,
edges and registration (the sets stay torchgen's); its ``apply`` raises naming the reason. Nothing
here embeds a yaml line number, so editing one entry leaves every other group's bytes alone.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Optional

from ...api import dispatcher
from ...api.bindings import params
from ...api.types import value_type
from ...errors import OpgenError
from ...fingerprint import digest
from ...model.derivative_info import DerivativeInfo
from ...model.dispatch_keys import DispatchKey
from ...model.derivatives import Derivatives, output_names
from ...model.foreach_derivatives import is_foreach
from ...model.grouping import OperatorGroup
from ...model.loader import Model
from ...model.model_tokens import ModelChanges, ModelTokens, changes_between, model_tokens
from ...model.native_function import NativeFunction
from ...model.schema import SchemaKind
from ...model.types import BaseTy, BaseType, ListType, OptionalType, Type
from ..engine import layout
from .autograd_formulas import FormulaTranslator, Scope, function_scope
from .autograd_plan import AutogradDecision, AutogradKind, Carried, InplaceOrViewKind, make_plan
from ..engine.config import AUTOGRAD_KEYS, CodegenConfig
from .kernels import by_namespace
from ..engine.layer import GroupCodegen, Layer  # GroupCodegen: gen/group.py's, named by the engine
from ..engine.render import cpp_string, render

SUPPORT_HEADER = "autograd/codegen_support.h"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
TENSOR = BaseType(BaseTy.Tensor)
OPTIONAL_TENSOR = OptionalType(TENSOR)


class Unsupported(Exception):
    """A node opgen cannot generate a working ``apply`` for (the reason is the message)."""


# ----- saved values: what a node keeps, how the kernel fills it, how apply reads it -----

@dataclass(frozen=True)
class SavedField:
    name: str             # the formula's name: self, self_sym_sizes, result
    member_type: str      # the node member's C++ type
    bind: str             # apply's statement binding `name` from the member `name_`
    release: str = ""     # release_variables()'s statement, for SavedVariables


# Derived saved values: suffix -> (C++ type, expression over the variable {v}).
_DERIVED = {
    "_sym_sizes": ("std::vector<int64_t>", "{v}.sizes().vec()"),
    "_sym_strides": ("std::vector<int64_t>", "{v}.strides().vec()"),
    "_sym_numel": ("int64_t", "{v}.numel()"),
    "_numel": ("int64_t", "{v}.numel()"),
    "_dim": ("int64_t", "{v}.dim()"),
    "_scalar_type": ("ScalarType", "{v}.dtype()"),
    "_options": ("TensorOptions", "TensorOptions({v}.dtype()).with_device({v}.device())"),
    "_info": ("autograd::TypeAndSize", "autograd::TypeAndSize({v})"),
    "_geometry": ("autograd::TensorGeometry", "autograd::TensorGeometry({v})"),
}
_ARGSIZE = re.compile(r"_sym_argsize_(minus_)?(\d+)$")


def _tensor_field(name: str) -> SavedField:
    return SavedField(name, "autograd::SavedVariable", f"TensorBase {name} = {name}_.unpack(*this);", f"{name}_.reset();")


def saved_argument(name: str, t: Type) -> tuple[SavedField, str]:
    """(the field, the kernel's expression for its value) of an argument saved whole."""
    if t == TENSOR:
        return _tensor_field(name), "{}"
    if t == OPTIONAL_TENSOR:
        field = SavedField(name, "autograd::SavedVariable",
                           f"std::optional<TensorBase> {name}; if ({name}_.defined()) {name} = {name}_.unpack(*this);",
                           f"{name}_.reset();")
        return field, "{}.has_value() ? *{} : TensorBase()"
    if isinstance(t, ListType) and isinstance(t.elem, BaseType) and t.elem.name in (BaseTy.int, BaseTy.SymInt):
        return SavedField(name, "std::vector<int64_t>", f"IntArrayRef {name} = {name}_;"), "{}.vec()"
    if (isinstance(t, OptionalType) and isinstance(t.elem, ListType) and isinstance(t.elem.elem, BaseType)
            and t.elem.elem.name in (BaseTy.int, BaseTy.SymInt)):
        bind = (f"std::optional<IntArrayRef> {name}; if ({name}_) {name} = IntArrayRef(*{name}_);")
        return (SavedField(name, "std::optional<std::vector<int64_t>>", bind),
                "{}.has_value() ? std::optional<std::vector<int64_t>>({}->vec()) : std::nullopt")
    if isinstance(t, ListType) and isinstance(t.elem, BaseType) and t.elem.name is BaseTy.float:
        return SavedField(name, "std::vector<double>", f"ArrayRef<double> {name} = {name}_;"), "{}.vec()"
    if t.is_tensor_like():
        raise Unsupported(f"saving the tensor list '{name}'")
    if t == BaseType(BaseTy.str) or t == OptionalType(BaseType(BaseTy.str)):
        raise Unsupported(f"saving the string '{name}'")
    member = value_type(t)
    if "ArrayRef" in member or member.startswith("std::vector"):
        raise Unsupported(f"saving the list '{name}' ({t})")
    return SavedField(name, member, f"const {member}& {name} = {name}_;"), "{}"


def saved_derived(name: str, variables: dict[str, Type]) -> tuple[SavedField, str]:
    """A derived value (self_sym_sizes: the sizes of self), computed by the kernel when saving."""
    for var in sorted(variables, key=len, reverse=True):
        if not name.startswith(var + "_"):
            continue
        rest = name[len(var):]
        if variables[var] != TENSOR:
            raise Unsupported(f"saving '{name}' of the non-Tensor '{var}'")
        argsize = _ARGSIZE.match(rest)
        if argsize:
            index = ("-" if argsize.group(1) else "") + argsize.group(2)
            return SavedField(name, "int64_t", f"int64_t {name} = {name}_;"), f"{{}}.size({index})".replace("{}", var)
        if rest in _DERIVED:
            member, expr = _DERIVED[rest]
            return SavedField(name, member, f"const {member}& {name} = {name}_;"), expr.format(v=var)
        raise Unsupported(f"saving '{name}'")
    raise Unsupported(f"saving '{name}'")


# ----- the model of one run -----

class AutogradModel:
    """What the autograd codegen reads, for the whole run: one decision per function (torchgen's,
    autograd_plan.py), the derivative infos, and the formula translator."""

    def __init__(self, model: Model, derivatives: Derivatives, previous: Optional["AutogradModel"] = None, *,
                 changes: Optional[ModelChanges] = None, tokens: Optional[ModelTokens] = None):
        """``previous``: this model's autograd model before an edit of derivatives.yaml, or an
        earlier model's (the cache's: read with its references to that model's functions and groups
        resolved by name in this one, and its model as None) with ``changes``, what differs
        between the two models (found from their tokens when not given; ``tokens``: this model's,
        when the caller has them). Its decisions and fingerprints stand wherever their inputs are
        unchanged; an earlier model's whose order of functions differs stands for nothing."""
        self.model = model
        self.derivatives = derivatives
        same_model = previous is not None and previous.model is model
        self.tokens: Optional[ModelTokens] = previous.tokens if same_model else tokens or model_tokens(model)
        if previous is not None and not same_model and changes is None:
            changes = changes_between(previous.tokens, self.tokens) if previous.tokens and self.tokens else None
        if not same_model and changes is None:
            previous = None
        carried = self._carried_plan(previous, changes)
        self.plan = make_plan(model, derivatives, carried)
        self.decisions: dict[str, AutogradDecision] = self.plan.decisions
        self.infos: dict[str, DerivativeInfo] = {i.key: i for i in derivatives.infos if i.dispatch_key == "Default"}
        self._groups = {g.name: g for g in model.operator_groups}
        self._fingerprints: dict[str, str] = {}  # a job's identity and its inputs both ask
        self._callees: dict[str, tuple[str, ...]] = {}  # the groups each fingerprint read (those with any)
        self._callee_texts: dict[tuple[str, str], str] = {}
        if carried is not None:
            self._carry_fingerprints(previous, changes, carried.same_infos)

    def _carry_fingerprints(self, previous: "AutogradModel", changes: Optional[ModelChanges], same_infos: bool) -> None:
        """The previous fingerprints that stand, with the callees they read."""
        if changes is not None and same_infos:
            # The same infos and, for every unchanged function, the same decision (the plan's): the
            # fingerprints that go are those of the changed groups and of the groups calling them.
            fingerprints = dict(previous._fingerprints)
            for name in self._stale_groups(previous, changes):
                fingerprints.pop(name, None)
        else:
            fingerprints = {name: fingerprint for name, fingerprint in previous._fingerprints.items()
                            if self._fingerprint_stands(name, previous, changes)}
        self._fingerprints = fingerprints
        self._callees = {name: callees for name, callees in previous._callees.items() if name in fingerprints}

    def _stale_groups(self, previous: "AutogradModel", changes: ModelChanges) -> set[str]:
        """The groups whose fingerprint inputs may differ from ``previous``'s when the infos are the
        same: the changed groups, those whose formulas called one, and those whose formulas may
        call a group new to this model."""
        stale = set(changes.groups)
        stale.update(name for name, callees in previous._callees.items() if not changes.groups.isdisjoint(callees))
        if changes.added_groups:
            stale.update(g.name for g in self.model.operator_groups if self._may_call(g, changes.added_groups))
        return stale

    def _carried_plan(self, previous: Optional["AutogradModel"], changes: Optional[ModelChanges]) -> Optional[Carried]:
        """The previous plan and how it relates to this one: the changed functions, and whether
        the infos are the same (the cache carried the derivatives whole) and about none of them."""
        if previous is None:
            return None
        changed = changes.functions if changes is not None else None
        same_infos = self.derivatives is previous.derivatives and (
            not changed or changed.isdisjoint(i.key for i in self.derivatives.infos))
        return Carried(previous.plan, changed, same_infos)

    def _fingerprint_stands(self, name: str, previous: "AutogradModel", changes: Optional[ModelChanges]) -> bool:
        """Whether the previous fingerprint of group ``name`` is this model's: its functions are
        unchanged, and so are the groups its formulas called; no group new to this model is one
        they may call; its functions' decisions and infos are those of ``previous``."""
        group = self._groups.get(name)
        if group is None:
            return False
        if changes is not None:
            if name in changes.groups or not changes.groups.isdisjoint(previous._callees.get(name, ())):
                return False
            if changes.added_groups and self._may_call(group, changes.added_groups):
                return False
        return self._same_inputs(group, previous)

    def _same_inputs(self, group: OperatorGroup, previous: "AutogradModel") -> bool:
        """Whether the group's own fingerprint inputs are those of ``previous`` (the group's
        functions unchanged): its functions' decisions and the infos they use."""
        for f in group.functions:
            mine, theirs = self.decisions[f.key], previous.decisions[f.key]
            if mine is not theirs and mine != theirs:
                return False
            info, their_info = self.infos.get(mine.info), previous.infos.get(theirs.info)
            if info is not their_info and (info is None or their_info is None or _info_text(info) != _info_text(their_info)):
                return False  # what the fingerprint reads of an info: not its lines, which move with any edit above
        return True

    @cached_property
    def translator(self) -> FormulaTranslator:
        return FormulaTranslator(self.model)

    def decision(self, f: NativeFunction) -> AutogradDecision:
        return self.decisions[f.key]

    def info(self, f: NativeFunction) -> Optional[DerivativeInfo]:
        decision = self.decision(f)
        return self.infos.get(decision.info) if decision.info else None

    def fingerprint(self, group: OperatorGroup) -> str:
        """The autograd inputs of the group's files, as one digest: its functions' decisions, the
        infos they use (formulas, not their lines), and the operators the formulas may call: the
        full schema of those they name (a method-only call fills in the callee's defaults), the
        signature without defaults of those their arithmetic becomes (`a * b` is op::mul(a, b):
        only which overloads exist matters)."""
        if group.name not in self._fingerprints:
            self._fingerprints[group.name] = self._fingerprint(group)
        return self._fingerprints[group.name]

    def _fingerprint(self, group: OperatorGroup) -> str:
        parts: list[str] = []
        named: set[str] = set()
        arithmetic: set[str] = set()
        for f in group.functions:
            d = self.decision(f)
            parts.append(f"{d.name} {d.kind.value} {d.node} {d.inplace_or_view.value} {d.info} {','.join(d.autograd_keys)}")
            info = self.info(f)
            if info is not None:
                parts.append(_info_text(info))
                for text in _formula_texts(info):
                    named.update(_IDENTIFIER.findall(text))
                    arithmetic.update(arithmetic_callees(text))
                if d.inplace_or_view is not InplaceOrViewKind.none:
                    named.add("clone")  # an in-place kernel saves a clone of self
        callees = sorted(named & self._groups.keys() - {group.name})
        operators = sorted(arithmetic & self._groups.keys() - named - {group.name})
        parts.extend(self._callee_text("callee", name) for name in callees)
        parts.extend(self._callee_text("operator", name) for name in operators)
        if callees or operators:
            self._callees[group.name] = (*callees, *operators)
        return digest(*(p.encode() for p in parts))

    def _may_call(self, group: OperatorGroup, names: frozenset[str]) -> bool:
        """Whether the group's formulas may call one of ``names`` (a superset, found by text):
        those _fingerprint would find among the identifiers of their texts, or, for any formula,
        a name the kernel calls whatever the text (clone) or arithmetic may become."""
        implicit = not names.isdisjoint(_IMPLICIT_CALLEES)
        for f in group.functions:
            info = self.info(f)
            if info is not None and (implicit or any(name in text for text in _formula_texts(info) for name in names)):
                return True
        return False

    def _callee_text(self, kind: str, name: str) -> str:
        """What a formula's call of group ``name`` depends on: its schemas ("callee"), or its
        overloads' signatures without defaults ("operator", family keys). Remembered for the run:
        the same few groups (mul, add, sum) are called from hundreds."""
        texts = self._callee_texts
        if (kind, name) not in texts:
            functions = self._groups[name].functions
            texts[kind, name] = f"{kind} {name}: " + "; ".join(
                str(f.func) if kind == "callee" else f"{f.func.name} {f.func.family_key()}" for f in functions)
        return texts[kind, name]

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        del state["_callee_texts"]  # derived from the model: not worth storing with the plan
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._callee_texts = {}


# The operators a formula's arithmetic becomes (autograd_formulas.TENSOR_BINARY, unary minus,
# rsub for a number on the left of '-'), by the characters that spell it.
_SYMBOL_CALLEES = {"+": ("add",), "-": ("sub", "neg", "rsub"), "*": ("mul",), "/": ("div",),
                   "=": ("eq", "le", "ge"), "!": ("ne",), "<": ("lt", "le", "gt", "ge"), ">": ("lt", "le", "gt", "ge")}


# What a formula may call without naming it in its text: clone (an in-place kernel's saved self)
# and every operator arithmetic may become.
_IMPLICIT_CALLEES = frozenset({"clone", *(callee for callees in _SYMBOL_CALLEES.values() for callee in callees)})


def _formula_texts(info: DerivativeInfo) -> list[str]:
    """The texts whose identifiers a group's fingerprint looks for callees in: the formulas, the
    output_differentiability conditions, and what forward formulas call (the operator applied to
    the tangents for auto_linear; zero tangents and an in-place kernel's original self)."""
    texts = [formula.text for formula in info.formulas] + list(info.output_differentiability_conditions or ())
    texts += [formula.text for formula in info.forward_formulas]
    if any(formula.text.strip() == "auto_linear" for formula in info.forward_formulas):
        texts.append(f"{info.name.name.base} zeros_like")
    elif info.forward_formulas:
        texts.append("zeros_like clone")
    return texts


def arithmetic_callees(text: str) -> set[str]:
    """The operators the formula's arithmetic may become (a superset, found without translating)."""
    return {callee for char, callees in _SYMBOL_CALLEES.items() if char in text for callee in callees}


def _info_text(info: DerivativeInfo) -> str:
    formulas = " | ".join(f"{','.join(f.var_names)}: {f.text}" for f in info.formulas)
    forward = " | ".join(f"{','.join(f.var_names)}: {f.text}" for f in info.forward_formulas)
    return (f"info {info.key} node={info.node} inputs={info.differentiable_inputs} "
            f"non_differentiable={info.non_differentiable} saved={info.saved_inputs}/{info.saved_outputs} "
            f"outputs={info.differentiable_outputs} conditions={info.output_differentiability_conditions} "
            f"formulas={formulas} forward={forward}")


# ----- one group's nodes and kernels -----

@dataclass(frozen=True)
class FormulaCall:
    edges: tuple[int, ...]      # the next edges it fills, one per variable
    cpp: str                    # the translated expression
    returns_tuple: bool         # several variables: a std::tuple, masked with grad_input_mask


@dataclass(frozen=True)
class NodeClass:
    name: str
    fields: tuple[SavedField, ...]
    formulas: tuple[FormulaCall, ...]
    n_edges: int
    uses_grad: bool
    unsupported: str = ""       # why apply raises instead of computing

    @property
    def releases(self) -> list[str]:
        return [f.release for f in self.fields if f.release]


@dataclass(frozen=True)
class Kernel:
    operator: str       # registered name: "mul.Tensor"
    name: str           # wrapper_Autograd_mul_Tensor
    returns: str
    params: str
    body: tuple[str, ...]


@dataclass(frozen=True)
class GroupAutograd:
    nodes: tuple[NodeClass, ...]
    autograd: tuple[Kernel, ...]
    inplace_or_view: tuple[Kernel, ...]
    headers: tuple[str, ...]    # the ops/<g>.h headers the formulas and saving need


def group_autograd(group: OperatorGroup, am: AutogradModel) -> GroupAutograd:
    nodes: dict[str, NodeClass] = {}
    autograd, inplace_or_view = [], []
    headers: set[str] = set()
    for f in group.functions:
        d = am.decision(f)
        info = am.info(f)
        if d.registers_autograd:
            autograd.append(_autograd_kernel(f, d, info, am, nodes, headers))
        if d.registers_inplace_or_view:
            inplace_or_view.append(_inplace_or_view_kernel(f, d))
    return GroupAutograd(tuple(nodes[n] for n in sorted(nodes)), tuple(autograd), tuple(inplace_or_view),
                         tuple(sorted(headers)))


def _wrapper(key: str, f: NativeFunction, body: list[str]) -> Kernel:
    return Kernel(str(f.func.name), f"wrapper_{key}_{f.func.name.unambiguous_name()}", dispatcher.return_type(f),
                  params(dispatcher.bindings(f)), tuple(body))


def _below_autograd(d: AutogradDecision) -> str:
    """The guard an Autograd kernel redispatches under: past ADInplaceOrView too when the function
    has no kernel there (torchgen's choice), so the in-place calls inside a composite kernel
    (zeros fills an empty tensor) bump no version and skip a layer."""
    return "BelowAutograd" if d.registers_inplace_or_view else "BelowADInplaceOrView"


def _call(f: NativeFunction, guard: str) -> list[str]:
    """The redispatch under ``guard``, its result in ``_result`` (none for void)."""
    args = ", ".join(a.name for a in f.func.arguments.all())
    call = f"ops::{dispatcher.handle_name(f)}::call({args})"
    ret = dispatcher.return_type(f)
    if ret == "void":
        return [f"{{ autograd::{guard} below; {call}; }}"]
    return [f"{ret} _result = ([&]() -> {ret} {{ autograd::{guard} below; return {call}; }})();"]


def _tensor_inputs(f: NativeFunction) -> list[str]:
    """The tensor-like arguments a call reads (not out= arguments)."""
    outs = {a.name for a in f.func.arguments.out}
    return [a.name for a in f.func.arguments.all() if a.type.is_tensor_like() and a.name not in outs]


def _outputs(f: NativeFunction) -> list[tuple[int, str]]:
    """(index, C++ expression) of each output held in ``_result``."""
    n = len(f.func.returns)
    if n == 1:
        return [(0, "self" if f.func.kind() is SchemaKind.inplace else "_result")]
    return [(i, f"std::get<{i}>(_result)") for i in range(n)]


def _return_statement(f: NativeFunction) -> list[str]:
    return [] if dispatcher.return_type(f) == "void" else ["return _result;"]


def _autograd_kernel(f: NativeFunction, d: AutogradDecision, info: Optional[DerivativeInfo], am: AutogradModel,
                     nodes: dict[str, NodeClass], headers: set[str]) -> Kernel:
    kind = f.func.kind()
    if kind is SchemaKind.out:
        inputs = [a.name for a in f.func.arguments.all() if a.type.is_tensor_like()]
        body = [f"if (autograd::compute_requires_grad({', '.join(inputs)})) "
                f"autograd::throw_error_out_requires_grad(\"{f.func.name.name}\");"]
        before, after = [], []
        if (info is not None and info.forward_formulas and d.kind is AutogradKind.differentiable
                and all(a.type == TENSOR for a in f.func.arguments.out)):  # not Tensor[] out (torchgen neither)
            # torchgen's out= kernels compute the out arguments' tangents from the functional's formulas
            before, after = _forward(f, d, info, am, headers)
        if not before:
            before = [f"if (autograd::any_fw_grad_defined({', '.join(inputs)})) "
                      f"autograd::throw_fw_not_implemented(\"{f.func.name.name}_out\", \"it is an out= function\");"]
        return _wrapper("Autograd", f, body + before + _call(f, _below_autograd(d)) + after + _return_statement(f))
    passthrough = (d.kind is AutogradKind.non_differentiable or (d.kind is AutogradKind.differentiable and info is None)
                   or (d.kind is AutogradKind.not_implemented and not _tensor_inputs(f)))  # a factory: nothing requires grad
    if passthrough:
        return _wrapper("Autograd", f, _call(f, _below_autograd(d)) + _return_statement(f))
    if d.kind is AutogradKind.not_implemented:
        return _not_implemented(f, d)
    assert info is not None and info.node
    if is_foreach(f) and not is_foreach(am.model.by_name[info.name]):
        # An in-place _foreach_ function with the per-tensor operator's formulas (torchgen records
        # one node per list element): history without a formula, backward raises naming f; so
        # does forward mode, naming what torchgen would compute
        reason = ("opgen does not generate its forward formula (an in-place _foreach_ function with the "
                  "per-tensor operator's formulas)") if info.forward_formulas else ""
        return _not_implemented(f, d, reason)
    node = nodes.get(info.node) or _node_class(info, am, headers)
    try:
        kernel = _differentiable(f, d, info, node, am, headers)
    except Unsupported:
        # f's arguments are not the info function's (a _foreach_ function using the per-tensor
        # operator's formulas): history without a formula, backward raises naming f
        return _not_implemented(f, d)
    nodes[info.node] = node
    return kernel


def _history(f: NativeFunction, differentiable: tuple[bool, ...], inplace_view: bool = False) -> list[str]:
    if f.func.kind() is SchemaKind.inplace and not inplace_view:
        return ["  autograd::rebase_history(self, grad_fn);"]
    if inplace_view:  # transpose_: self is a new view of its old self (torchgen sets, not rebases, its history)
        return ["  autograd::set_history(self, grad_fn);"]
    lines = []
    for (i, expr), diff in zip(_outputs(f), differentiable):
        ret = f.func.returns[i]
        if diff and ret.type == TENSOR:
            lines.append(f"  autograd::set_history({expr}, grad_fn);")
    return lines


def _not_implemented(f: NativeFunction, d: AutogradDecision, forward_reason: str = "") -> Kernel:
    inputs = _tensor_inputs(f)
    body = [f"const bool _any_requires_grad = autograd::compute_requires_grad({', '.join(inputs)});"]
    if f.func.kind() is SchemaKind.inplace:
        body.append("if (_any_requires_grad) autograd::check_inplace(self);")
    body.append(_refuse_forward(f, inputs, forward_reason))
    body.append("std::shared_ptr<autograd::Node> grad_fn;")
    body.append(f"if (_any_requires_grad) grad_fn = std::make_shared<autograd::NotImplemented>("
                f"\"{f.namespace}::{f.func.name}\", autograd::collect_next_edges({', '.join(inputs)}));")
    body += _call(f, _below_autograd(d))
    history = _history(f, tuple(r.type.is_tensor_like() for r in f.func.returns))
    if history:
        body += ["if (grad_fn) {", *history, "}"]
    return _wrapper("Autograd", f, body + _return_statement(f))


def _differentiable(f: NativeFunction, d: AutogradDecision, info: DerivativeInfo, node: NodeClass,
                    am: AutogradModel, headers: set[str]) -> Kernel:
    inplace = f.func.kind() is SchemaKind.inplace
    inputs = list(info.differentiable_inputs)
    body = [f"{'bool' if info.output_differentiability_conditions else 'const bool'} _any_requires_grad = "
            f"autograd::compute_requires_grad({', '.join(inputs)});"] if inputs else \
        ["const bool _any_requires_grad = false;"]
    if inputs and info.output_differentiability_conditions:
        body.append(f"_any_requires_grad &= ({_condition(f, info, am, headers)});")
    if inplace:
        body.append("if (_any_requires_grad) autograd::check_inplace(self);")
    body += [f"autograd::check_no_requires_grad({name}, \"{name}\", \"{f.func.name.name}\");"
             for name in _without_formula(f, info)]
    forward_before, forward_after = _forward(f, d, info, am, headers)
    body += forward_before
    body.append(f"std::shared_ptr<{node.name}> grad_fn;")
    saves_before, saves_after = [], []
    if not node.unsupported:
        arg_types = {a.name: a.type for a in f.func.arguments.all()}
        outputs = output_names(am.model.by_name[info.name])
        for name in info.saved_inputs:
            saves_before.append(_save_input(name, arg_types, inplace, headers))
        for name in info.saved_outputs:
            index = outputs.index(name) if name in outputs else 0
            expr = _outputs(f)[index][1] if len(f.func.returns) > 1 else ("self" if inplace else "_result")
            saves_after.append(f"  grad_fn->{name}_ = autograd::SavedVariable({expr}, true);")
    body.append("if (_any_requires_grad) {")
    body.append(f"  grad_fn = std::make_shared<{node.name}>(autograd::collect_next_edges({', '.join(inputs)}));")
    body += saves_before
    body.append("}")
    body += _call(f, _below_autograd(d))
    inplace_view = d.inplace_or_view is InplaceOrViewKind.inplace_view
    body += ["if (grad_fn) {", *_history(f, info.differentiable_outputs, inplace_view), *saves_after, "}"]
    body += forward_after
    return _wrapper("Autograd", f, body + _return_statement(f))


# ----- forward mode: the outputs' tangents from the entry's forward formulas -----

_AUTO = ("auto_element_wise", "auto_linear")


def _refuse_forward(f: NativeFunction, inputs: list[str], reason: str = "") -> str:
    """PyTorch's error for a dual input reaching a function without a forward formula (``reason``:
    why a formula the entry has is not generated)."""
    because = f", \"{cpp_string(reason)}\"" if reason else ""
    return (f"if (autograd::any_fw_grad_defined({', '.join(inputs)})) "
            f"autograd::throw_fw_not_implemented(\"{f.func.name.name}\"{because});")


def _uses(name: str, text: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text) is not None


def _replace_name(text: str, name: str, by: str) -> str:
    return re.sub(rf"(?<![A-Za-z0-9_.]){re.escape(name)}(?![A-Za-z0-9_])", by, text)


def forward_formula_text(info: DerivativeInfo, formula, model: Model) -> str:
    """The forward formula as an expression over ``<arg>_p`` / ``<arg>_t``: as written, or
    torchgen's expansion of ``auto_element_wise`` (the backward formula of the one differentiable
    input with ``grad`` its tangent and the differentiable inputs their primals; no conj() for
    real dtypes) and ``auto_linear`` (the function itself applied to the tangents of its
    differentiable inputs)."""
    text = formula.text.strip()
    if text == "auto_element_wise":
        if len(info.formulas) != 1 or len(info.formulas[0].var_names) != 1:
            raise Unsupported("auto_element_wise needs exactly one differentiable input")
        (var,) = info.formulas[0].var_names
        out = _replace_name(info.formulas[0].text, "grad", f"{var}_t")
        for name in info.differentiable_inputs:
            out = _replace_name(out, name, f"{name}_p")
        return out
    if text == "auto_linear":
        f = model.by_name[info.name]
        differentiable = set(info.differentiable_inputs)
        args = [a.name + ("_t" if a.name in differentiable else "") for a in f.func.arguments.all()
                if a.name not in {o.name for o in f.func.arguments.out}]
        name = str(f.func.name.name)
        if "function" in f.variants:
            return f"{name}({', '.join(args)})"
        return f"{args[0]}.{name}({', '.join(args[1:])})"
    return text


def _forward(f: NativeFunction, d: AutogradDecision, info: DerivativeInfo, am: AutogradModel,
             headers: set[str]) -> tuple[list[str], list[str]]:
    """(lines before the redispatch, lines after it) of forward mode: whether an input carries a
    tangent (and, in place, self's value as it was), then each output's tangent from its formula,
    computed with ordinary operators while tangents are hidden (ForwardADDisabled)."""
    inputs = list(info.differentiable_inputs)
    if not inputs:
        return [], []
    refuse = [_refuse_forward(f, inputs)]
    if not info.forward_formulas:
        return refuse, []
    inplace = f.func.kind() is SchemaKind.inplace
    out_fn = f.func.kind() is SchemaKind.out  # the tangents go into the out arguments, in place
    arg_types = {a.name: a.type for a in f.func.arguments.all()}
    info_outputs = output_names(am.model.by_name[info.name])
    try:
        computed = []
        for formula in info.forward_formulas:
            text = forward_formula_text(info, formula, am.model)
            if _uses("original_self_p", text) or _uses("original_self_t", text):
                raise Unsupported("original_self in a forward formula")
            translated = am.translator.translate(text, function_scope(am.model.by_name[info.name], forward=True))
            if len(formula.var_names) != 1 or formula.var_names[0] not in info_outputs:
                raise Unsupported(f"the forward formula of '{', '.join(formula.var_names)}'")
            computed.append((formula.var_names, text, translated))
        for name in inputs:
            if arg_types.get(name) != TENSOR:
                raise Unsupported(f"the tangent of the non-Tensor input '{name}'")
    except (Unsupported, OpgenError) as exc:
        reason = re.sub(r"^[^:]*:\d+: error: ", "", str(exc).splitlines()[0])  # the formula's text, not its line
        return [_refuse_forward(f, inputs, f"opgen does not generate its forward formula ({reason})")], []
    before = [f"{'bool' if info.output_differentiability_conditions else 'const bool'} _any_fw_grad = "
              f"autograd::any_fw_grad_defined({', '.join(inputs)});"]
    if info.output_differentiability_conditions:
        before.append(f"_any_fw_grad &= ({_condition(f, info, am, headers)});")
    texts = " ".join(text for _, text, _ in computed)
    after = ["if (_any_fw_grad) {"]
    for name in inputs:
        if _uses(f"{name}_t", texts):
            mutated = re.search(rf"(?<![A-Za-z0-9_]){name}_t\.[A-Za-z0-9_]*[A-Za-z0-9]_\(", texts) is not None
            value = f"autograd::fw_grad_or_zeros({name})"
            if mutated:  # an in-place formula (self_t.zero_()): on a copy, as another tensor may share the tangent
                headers.add(layout.api_header("clone"))
                value = f"op::clone({value})"
            after.append(f"  TensorBase {name}_t = {value};")
    after.append("  autograd::ForwardADDisabled _hide_tangents;")
    for name in inputs:
        if _uses(f"{name}_p", texts):
            if inplace and name == "self":
                before.append("TensorBase _original_self;")
                before.append("if (_any_fw_grad) { autograd::ForwardADDisabled _hide_tangents; _original_self = op::clone(self); }")
                headers.add(layout.api_header("clone"))
                after.append("  const TensorBase& self_p = _original_self;")
            else:
                after.append(f"  const TensorBase& {name}_p = {name};")
    outputs = _outputs(f)
    for name, index in zip(info_outputs, range(len(info_outputs))):
        if _uses(name, texts) and name not in arg_types:
            expr = outputs[index][1] if len(f.func.returns) > 1 else ("self" if inplace else "_result")
            after.append(f"  const TensorBase& {name} = {expr};")
    for var_names, _, translated in computed:
        headers.update(translated.headers)
        (var,) = var_names
        index = info_outputs.index(var)
        if not info.differentiable_outputs[index]:
            continue
        expr = outputs[index][1] if len(f.func.returns) > 1 else ("self" if inplace else "_result")
        value = translated.cpp
        if inplace or out_fn:
            after.append(f"  autograd::set_fw_grad_inplace({expr}, {value});")
            continue
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*_t", value):  # an input's tangent itself: the output's is a copy
            headers.add(layout.api_header("clone"))
            value = f"op::clone({value})"
        after.append(f"  autograd::set_fw_grad_of_output({expr}, {value});")
    after.append("}")
    return before, after


def _condition(f: NativeFunction, info: DerivativeInfo, am: AutogradModel, headers: set[str]) -> str:
    """The output_differentiability condition (``!dtype || isDifferentiableType(*dtype)``) over the
    kernel's arguments: torchgen's ``_any_requires_grad &= (condition);``."""
    (condition,) = info.output_differentiability_conditions
    # The kernel's arguments are the schema's, ungrouped (dtype, not the C++ API's options): the
    # forward scope names them.
    try:
        translated = am.translator.translate(condition, Scope(function_scope(f, forward=True).kinds))
    except OpgenError as exc:
        raise Unsupported(f"the output_differentiability condition '{condition}': {str(exc).splitlines()[0]}") from None
    headers.update(translated.headers)
    return translated.cpp


def _without_formula(f: NativeFunction, info: DerivativeInfo) -> list[str]:
    """Tensor arguments that get no gradient although they could carry one: no formula, not marked
    non_differentiable (torchgen's check_no_requires_grad, which skips an argument named output)."""
    skip = set(info.differentiable_inputs) | set(info.non_differentiable) | {"output"}
    outs = {a.name for a in f.func.arguments.out}
    return [a.name for a in f.func.arguments.all()
            if a.type in (TENSOR, OPTIONAL_TENSOR) and a.name not in skip and a.name not in outs]


def _save_input(name: str, arg_types: dict[str, Type], inplace: bool, headers: set[str]) -> str:
    if name in arg_types:
        field, expr = saved_argument(name, arg_types[name])
        value = expr.replace("{}", name)
        if field.member_type == "autograd::SavedVariable":
            if inplace and name == "self":  # self is about to change: keep its value as it was
                # Cloned at Autograd, as PyTorch does: the copy's history leads back to self's,
                # so a double backward differentiates the formula through it.
                headers.add(layout.api_header("clone"))
                value = "op::clone(self)"
            return f"  grad_fn->{name}_ = autograd::SavedVariable({value}, false);"
        return f"  grad_fn->{name}_ = {value};"
    field, expr = saved_derived(name, arg_types)
    return f"  grad_fn->{name}_ = {expr};"


def _node_class(info: DerivativeInfo, am: AutogradModel, headers: set[str]) -> NodeClass:
    f = am.model.by_name[info.name]
    edges = {name: i for i, name in enumerate(info.differentiable_inputs)}
    try:
        arg_types = {a.name: a.type for a in f.func.arguments.all()}
        for name in info.differentiable_inputs:
            if arg_types[name] not in (TENSOR, OPTIONAL_TENSOR):
                raise Unsupported(f"the list input '{name}'")
        fields = [saved_argument(n, arg_types[n])[0] if n in arg_types else saved_derived(n, arg_types)[0]
                  for n in info.saved_inputs]
        outputs = dict(zip(output_names(f), f.func.returns))
        for name in info.saved_outputs:
            if outputs.get(name) is None or outputs[name].type != TENSOR:
                raise Unsupported(f"saving the output '{name}'")
            fields.append(_tensor_field(name))
        calls, uses_grad = [], False
        for formula in info.formulas:
            translated = am.translator.backward(info, formula)
            headers.update(translated.headers)
            uses_grad = uses_grad or re.search(r"\bgrad\b", translated.cpp) is not None
            calls.append(FormulaCall(tuple(edges[v] for v in formula.var_names), translated.cpp, len(formula.var_names) > 1))
        return NodeClass(info.node, tuple(fields), tuple(calls), len(edges), uses_grad)
    except (Unsupported, OpgenError) as exc:
        reason = str(exc).splitlines()[0]
        reason = re.sub(r"^[^:]*:\d+: error: ", "", reason)  # the formula's text, not its line
        return NodeClass(info.node, (), (), len(edges), False, unsupported=reason)


def _inplace_or_view_kernel(f: NativeFunction, d: AutogradDecision) -> Kernel:
    body = _call(f, "BelowADInplaceOrView")
    kind = d.inplace_or_view
    if kind in (InplaceOrViewKind.inplace, InplaceOrViewKind.inplace_view):
        body.append("autograd::bump_version(self);")
    elif kind is InplaceOrViewKind.out:
        body += [f"autograd::bump_version({a.name});" for a in f.func.arguments.out]
    elif kind is InplaceOrViewKind.view:
        base = next(a.name for a in f.func.arguments.all() if a.type == TENSOR)
        returns = f.func.returns
        if len(returns) == 1 and returns[0].type == TENSOR:
            body.append(f"_result = autograd::as_view({base}, _result);")
        elif len(returns) == 1 and isinstance(returns[0].type, ListType):
            # one node for all the outputs: none may be modified in place (PyTorch's MULTI_OUTPUT_NODE)
            body.append(f"for (TensorBase& view : _result) "
                        f"view = autograd::as_view({base}, view, autograd::CreationMeta::MultiOutputNode);")
    return _wrapper("ADInplaceOrView", f, body + _return_statement(f))


# ----- the autograd layer: ops/<g>_Autograd.cpp and ops/<g>_ADInplaceOrView.cpp -----

def _autograd_keys(codegen: "GroupCodegen") -> list[DispatchKey]:
    """The autograd keys the group has kernels at (from the decisions alone: no formula is
    translated to know the file list)."""
    if not codegen.config.trains(codegen.name):
        return []  # a selective build's inference-only group
    decisions = [codegen.config.autograd.decision(f) for f in codegen.group.functions]
    keys = []
    if DispatchKey.Autograd in codegen.config.keys and any(d.registers_autograd for d in decisions):
        keys.append(DispatchKey.Autograd)
    if DispatchKey.ADInplaceOrView in codegen.config.keys and any(d.registers_inplace_or_view for d in decisions):
        keys.append(DispatchKey.ADInplaceOrView)
    return keys


def _autograd_files(codegen: "GroupCodegen") -> list[str]:
    return [layout.key_source(codegen.name, key) for key in _autograd_keys(codegen)]


def _render_autograd(codegen: "GroupCodegen") -> dict[str, str]:
    keys = _autograd_keys(codegen)
    if not keys:
        return {}
    data = group_autograd(codegen.group, codegen.config.autograd)
    out = {}
    for key in keys:
        kernels = data.autograd if key is DispatchKey.Autograd else data.inplace_or_view
        includes = {"dispatch/registration.h", SUPPORT_HEADER, layout.handles_header(codegen.name)}
        nodes = []
        if key is DispatchKey.Autograd:
            nodes = list(data.nodes)
            includes.update(data.headers)
        out[layout.key_source(codegen.name, key)] = render(
            "autograd_kernels.cpp.j2", group=codegen.name, key=key.value, includes=sorted(includes), nodes=nodes,
            kernels=list(kernels), namespaces=by_namespace(codegen.group, kernels))
    return out


def _autograd_fields(group: OperatorGroup, config: CodegenConfig) -> dict[str, str]:
    """The group's autograd facts (``AutogradModel.fingerprint``) enter its content key; an
    inference-only group's key says it has no autograd files instead."""
    if not config.trains(group.name):
        return {"autograd": "inference"}
    return {"autograd": config.autograd.fingerprint(group)}


AUTOGRAD = Layer("autograd", _autograd_files, _render_autograd, keys=AUTOGRAD_KEYS,
                 content_fields=_autograd_fields, applies=lambda config: config.generates_autograd)
