"""Which functions get kernels at the Autograd and ADInplaceOrView keys, and of which kind: the
decisions torchgen 2.13's gen_autograd takes (VariableType, ADInplaceOrViewType), made from the
operator model and the derivatives model alone. No C++ here; the renderers read these decisions.

The rules, in torchgen's terms:
- A function is *derived* (gets generated kernels at all) when PyTorch does not write its autograd
  kernel by hand (``HAND_WRITTEN``) and it is abstract (it has a kernel of its own: a dispatch
  table beyond CompositeImplicitAutograd, or a structured delegate) or a matched derivative info
  has a backward formula. A CompositeImplicitAutograd function otherwise decomposes into
  operators that have Autograd kernels, and gets none.
- Its derivative infos: its own entry's (or the info the model derives for a _foreach_
  function: ``_foreach_add.Scalar`` gets ForeachAddBackward1Scalar from ``add.Scalar``'s formulas);
  else, unless it is a _foreach_ function, the entry of the functional variant with the same
  signature (``mul_`` and ``mul.out`` use ``mul``'s); else, for a generated function, the entry
  of a mutable variant with that signature; else, for an in-place _foreach_ function, the
  per-tensor operator's info itself (``_foreach_add_.Scalar`` uses AddBackward1).
- A derived function registers at Autograd when it has no infos (a generated passthrough, or the
  boxed not-implemented kernel when an output could carry a gradient) or an info for the Default
  section (dispatch sections for other Autograd keys register at those keys).
- A derived function registers at ADInplaceOrView when it is a view (it returns an alias of an
  input: the view is recorded on the output) or an in-place/out= function that returns something
  (versions of the written arguments are bumped).
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import Collection, Optional

from ...model.derivatives import DEFAULT, DerivativeInfo, Derivatives
from ...model.dispatch_keys import DispatchKey
from ...model.foreach_derivatives import References, is_foreach, reference_info
from ...model.loader import Model
from ...model.native_function import NativeFunction, cpp_name
from ...model.schema import FunctionSchema, SchemaKind

AUTOGRAD = "Autograd"
AD_INPLACE_OR_VIEW = "ADInplaceOrView"
KEYS = (AUTOGRAD, AD_INPLACE_OR_VIEW)

# Functions whose Autograd (and tracer) kernels PyTorch writes by hand, by C++ name (add_out for
# add.out): metadata accessors and setters, and the few whose kernels reset accumulators or
# manage views or dual tensors themselves. Not generated at either key.
HAND_WRITTEN = frozenset({
    "options", "data", "set_data", "is_leaf", "output_nr", "_version", "retain_grad", "_backward", "requires_grad_",
    "resize_", "resize_as_", "detach", "detach_", "copy_", "_fw_primal", "_make_dual",
})
# Kernels that are composite only (no kernel of their own) and need no Autograd kernel.
_IMPLICIT = frozenset({DispatchKey.CompositeImplicitAutograd, DispatchKey.CompositeImplicitAutogradNestedTensor})
# In-place functions that reset the gradient accumulator: the generated kernel handles them even
# without a formula (the not-implemented kernel could not).
_RESETS_ACCUMULATOR = frozenset({"set_", "resize_"})
# Operators (by base name: logical_and covers logical_and_ and logical_and.out) whose Tensor
# outputs never carry a gradient, so without a formula their kernel is a passthrough rather than
# a not-implemented error (torchgen's DONT_REQUIRE_DERIVATIVE).
NO_GRADIENT = frozenset({
    # the result depends on the input's shape, dtype and device, not on its values
    "empty_like", "ones_like", "full_like", "zeros_like", "rand_like", "randn_like",
    "new_empty", "new_empty_strided", "new_full", "new_zeros", "new_ones",
    # integral results: bitwise operators, indices, quasi-random integers
    "__and__", "__iand__", "__or__", "__ior__", "__xor__", "__ixor__",
    "__lshift__", "__ilshift__", "__rshift__", "__irshift__",
    "argmax", "argmin", "argsort", "searchsorted", "bucketize",
    "_sobol_engine_draw", "_sobol_engine_ff", "_sobol_engine_scramble_", "_sobol_engine_initialize_state_",
    # boolean results
    "isnan", "isposinf", "isneginf", "isinf", "signbit", "isin", "allclose",
    "logical_and", "logical_or", "logical_xor", "logical_not",
    # quantized results, nested-tensor metadata, and what is out of autograd's reach by design
    "quantize_per_tensor", "quantize_per_channel",
    "_nested_tensor_size", "_nested_tensor_strides", "_nested_tensor_storage_offsets",
    "_coalesced_", "record_stream",
})


class AutogradKind(Enum):
    none = "none"                            # no Autograd kernel (hand-written or decomposes)
    differentiable = "differentiable"        # makes a backward node, saves what the formula needs
    non_differentiable = "non_differentiable"  # generated passthrough: redispatch, no history
    not_implemented = "not_implemented"      # boxed not-implemented kernel: backward raises


class InplaceOrViewKind(Enum):
    none = "none"
    inplace = "inplace"          # in-place: bump the written arguments' versions
    out = "out"                  # out=: bump the out arguments' versions
    view = "view"                # record the output as a view of its base
    inplace_view = "inplace_view"  # in-place view (transpose_): bump and update the view metadata


@dataclass(frozen=True)
class AutogradDecision:
    """What one function gets at the Autograd key (``kind``, ``node``: from the entry's Default
    section), at the other Autograd keys its entry has sections for (``autograd_keys``), and at
    ADInplaceOrView (``inplace_or_view``)."""

    name: str                                 # "add.Tensor" ("ns::name" outside aten)
    kind: AutogradKind
    node: Optional[str]                       # backward node class of the Default info, or None
    inplace_or_view: InplaceOrViewKind
    info: Optional[str] = None                # the function whose derivative entry applies
    autograd_keys: tuple[str, ...] = ()       # keys with generated kernels: Autograd, AutogradNestedTensor

    @property
    def registers_autograd(self) -> bool:
        return AUTOGRAD in self.autograd_keys

    @property
    def registers_inplace_or_view(self) -> bool:
        return self.inplace_or_view is not InplaceOrViewKind.none


def is_abstract(f: NativeFunction, model: Model) -> bool:
    """torchgen's 'abstract': a kernel of its own, not only a composite decomposition."""
    if f.structured_delegate is not None:
        return True
    keys = set(model.kernels_of(f))
    return not (keys and keys <= _IMPLICIT)


# The variant a generated function is made from, by preference (torchgen's base function).
_SOURCE_ORDER = (SchemaKind.mutable, SchemaKind.inplace, SchemaKind.out, SchemaKind.functional)


def generation_sources(model: Model, keys: Optional[Collection[str]] = None) -> dict[str, NativeFunction]:
    """{generated function: the written variant of its signature it was generated from}, for every
    generated function or those of ``keys``. A generated function is abstract exactly when that
    one is: the out= variant autogenerated for a CompositeImplicitAutograd operator
    (avg_pool1d.out) decomposes like it, and needs no Autograd kernel."""
    written: dict[str, list[NativeFunction]] = {}  # by family key: equal signatures have equal keys
    for f in model.functions:
        if not f.generated:
            written.setdefault(f.func.family_key(), []).append(f)
    signatures: dict[int, FunctionSchema] = {}

    def signature(f: NativeFunction) -> FunctionSchema:
        if id(f) not in signatures:
            signatures[id(f)] = f.func.signature()
        return signatures[id(f)]

    sources = {}
    for f in model.functions:
        if not f.generated or (keys is not None and f.key not in keys):
            continue
        variants: dict[SchemaKind, NativeFunction] = {}
        for g in written.get(f.func.family_key(), ()):
            if signature(g) == signature(f):
                variants.setdefault(g.func.kind(), g)
        source = next((variants[k] for k in _SOURCE_ORDER if k in variants), None)
        if source is not None:
            sources[f.key] = source
    return sources


def carried_sources(model: Model, previous: dict[str, Optional[NativeFunction]], changed: frozenset[str]) -> dict[str, NativeFunction]:
    """``generation_sources(model)`` from ``previous``, an earlier model's (its functions resolved by
    key in this model): a generated function whose token is unchanged (not in ``changed``) has the
    same written family (model_tokens.py), so the same source; the changed ones are found again."""
    sources = {key: source for key, source in previous.items() if key not in changed}
    if any(source is None for source in sources.values()):
        return generation_sources(model)  # not the model the tokens describe: find them all
    again = {f.key for f in model.functions if f.key in changed and f.generated}
    if again:
        sources.update(generation_sources(model, again))
    return sources


# Functions whose schema returns an alias of an input but whose output autograd does not record
# as a view (torchgen leaves them out of its view lists): lift_fresh hands its input back as a
# fresh leaf for tracing; _sparse_broadcast_to has sparse kernels only.
NOT_RECORDED_AS_VIEWS = frozenset({"lift_fresh", "_sparse_broadcast_to"})


def is_view(f: NativeFunction) -> bool:
    """Returns an alias of an input (a view), or changes an input's view metadata in place. set_
    (every overload) swaps the storage: an in-place function, not a view."""
    return f.is_view_op and f.func.name.name.base != "set" and str(f.func.name) not in NOT_RECORDED_AS_VIEWS


class _InfoIndex:
    """Derivative infos by function, and by signature (family key) for the functional / non-functional matches."""

    def __init__(self, model: Model, derivatives: Derivatives):
        self.exact: dict[str, dict[str, DerivativeInfo]] = {}
        for info in derivatives.infos:
            self.exact.setdefault(info.key, {})[info.dispatch_key] = info
        self.functional: dict[str, dict[str, DerivativeInfo]] = {}
        self.non_functional: dict[str, dict[str, DerivativeInfo]] = {}
        self._model, self._infos = model, derivatives.infos
        by_key = {f.key: f for f in model.functions}
        for key, infos in self.exact.items():
            f = by_key[key]
            table = self.functional if f.func.kind() is SchemaKind.functional else self.non_functional
            table.setdefault(f.func.family_key(), infos)

    @cached_property
    def foreach_references(self) -> References:
        """Built when a _foreach_ function is looked up: a plan carried across an edit looks up
        only the edited functions."""
        return References(self._model.functions, self._infos)

    def find(self, f: NativeFunction) -> Optional[dict[str, DerivativeInfo]]:
        if f.generated and f.func.kind() is SchemaKind.out:
            return None
        if f.key in self.exact:
            return self.exact[f.key]
        signature = f.func.family_key()
        foreach = is_foreach(f)
        if not foreach and signature in self.functional:
            return self.functional[signature]
        if f.generated and signature in self.non_functional:
            return self.non_functional[signature]
        reference = reference_info(f, self.foreach_references) if foreach else None
        return {DEFAULT: reference} if reference is not None else None


def _has_differentiable_output(f: NativeFunction) -> bool:
    return any(r.type.is_tensor_like() for r in f.func.returns)


def _inplace_or_view(f: NativeFunction) -> InplaceOrViewKind:
    kind = f.func.kind()
    if is_view(f):
        return InplaceOrViewKind.inplace_view if kind is SchemaKind.inplace else InplaceOrViewKind.view
    if not f.func.returns:  # nothing to return the bumped arguments through (pytorch#53796)
        return InplaceOrViewKind.none
    if kind is SchemaKind.inplace:
        return InplaceOrViewKind.inplace
    if kind is SchemaKind.out:
        return InplaceOrViewKind.out
    return InplaceOrViewKind.none


# What a decision reads of the infos a function finds: per dispatch section, in the entry's
# order, the function whose entry it is and the node it makes. An entry that only moved to
# another line finds the same.
Found = tuple[tuple[str, str, Optional[str]], ...]


def found_of(infos: Optional[dict[str, DerivativeInfo]]) -> Optional[Found]:
    return None if infos is None else tuple((key, info.key, info.node) for key, info in infos.items())


def decide(f: NativeFunction, model: Model, sources: dict[str, NativeFunction], found: Optional[Found]) -> AutogradDecision:
    """``found``: what f finds of the derivatives (``found_of(_InfoIndex.find(f))``)."""
    info_name = found[0][1] if found else None
    with_formula = bool(found) and any(node for _, _, node in found)
    abstract = is_abstract(sources.get(f.key, f), model)
    if cpp_name(f.func) in HAND_WRITTEN or not (abstract or with_formula):
        return AutogradDecision(f.key, AutogradKind.none, None, InplaceOrViewKind.none, info_name)
    default = next((section for section in found or () if section[0] == DEFAULT), None)
    default_node = default[2] if default is not None else None
    if found is None:
        keys = (AUTOGRAD,)
        needs_formula = (_has_differentiable_output(f) and str(f.func.name.name) not in _RESETS_ACCUMULATOR
                         and f.func.name.name.base not in NO_GRADIENT)
        kind = AutogradKind.not_implemented if needs_formula else AutogradKind.non_differentiable
    else:
        keys = tuple(sorted(AUTOGRAD if key == DEFAULT else key for key, _, _ in found))
        if default is None:  # formulas for other Autograd keys only: those keys get kernels, Autograd none
            kind = AutogradKind.none
        else:
            kind = AutogradKind.differentiable if default_node else AutogradKind.non_differentiable
    return AutogradDecision(f.key, kind, default_node, _inplace_or_view(f), info_name, keys)


@dataclass(frozen=True)
class AutogradPlan:
    """One decision per function (by key), with what each was decided from beside the model:
    what the function found of the derivatives and the generation sources. A plan of the same
    model after an edit of derivatives.yaml decides again only the functions that find otherwise;
    a plan of an edited model, only the functions that changed or find otherwise."""

    decisions: dict[str, AutogradDecision]
    found: dict[str, Optional[Found]]
    sources: dict[str, NativeFunction]


@dataclass(frozen=True)
class Carried:
    """How a plan relates to the previous one: ``changed``: the keys of the functions that differ
    from those it was made from (ModelChanges.functions; None: the same model, so none);
    ``same_infos``: the same derivative infos, none of them about a changed function, so an
    unchanged function finds what it found (the index reads only the functions with infos)."""

    plan: AutogradPlan
    changed: Optional[frozenset[str]] = None
    same_infos: bool = False


def make_plan(model: Model, derivatives: Derivatives, previous: Optional[Carried] = None) -> AutogradPlan:
    """``previous``: a plan of this model or an earlier one, whose decisions stand wherever a
    function is unchanged and finds what it found then: a decision depends on the function, its
    generation source (unchanged with it: model_tokens.py), what it finds and nothing else of the
    model (``decide``)."""
    if previous is not None and previous.changed is not None and previous.same_infos:
        return _plan_of_changed(model, derivatives, previous)
    if previous is None:
        sources = generation_sources(model)
    elif previous.changed is None:
        sources = previous.plan.sources
    else:
        sources = carried_sources(model, previous.plan.sources, previous.changed)
    lookup = _Lookup(model, derivatives)
    decisions: dict[str, AutogradDecision] = {}
    found: dict[str, Optional[Found]] = {}
    for f in model.functions:
        key = f.key
        before = _found_before(previous, key)
        found[key] = now = found_of(lookup.index.find(f))
        if before is not _CHANGED and before == now:
            decisions[key] = previous.plan.decisions[key]
        else:
            decisions[key] = decide(f, model, sources, now)
    return AutogradPlan(dict(sorted(decisions.items())), found, sources)


def _plan_of_changed(model: Model, derivatives: Derivatives, previous: Carried) -> AutogradPlan:
    """The plan of an edited model with the same infos: the previous plan, with the changed
    functions looked up and decided again and the removed ones left out (an unchanged function
    finds what it found and is decided alike)."""
    changed = previous.changed
    functions = [f for f in model.functions if f.key in changed]  # changed or added
    present = {f.key for f in functions}
    removed = changed - present
    sources = carried_sources(model, previous.plan.sources, changed)
    decisions, found = dict(previous.plan.decisions), dict(previous.plan.found)
    for key in removed:
        decisions.pop(key, None)
        found.pop(key, None)
    lookup = _Lookup(model, derivatives)
    added = False
    for f in functions:
        added = added or f.key not in decisions
        found[f.key] = now = found_of(lookup.index.find(f))
        decisions[f.key] = decide(f, model, sources, now)
    return AutogradPlan(dict(sorted(decisions.items())) if added else decisions, found, sources)


class _Lookup:
    """The info index, built when the first function must look (none must, when neither the
    functions nor the infos changed)."""

    def __init__(self, model: Model, derivatives: Derivatives):
        self.model, self.derivatives = model, derivatives

    @cached_property
    def index(self) -> _InfoIndex:
        return _InfoIndex(self.model, self.derivatives)


_CHANGED = object()  # what _found_before answers when the previous plan cannot stand for a function


def _found_before(previous: Optional[Carried], key: str):
    """What the function ``key`` found in the previous plan when it is unchanged since (None is a
    finding: no infos), else _CHANGED."""
    if previous is None or key not in previous.plan.found or (previous.changed is not None and key in previous.changed):
        return _CHANGED
    return previous.plan.found[key]


def plan_autograd(model: Model, derivatives: Derivatives) -> tuple[AutogradDecision, ...]:
    """One decision per function of the model, sorted by name."""
    return tuple(make_plan(model, derivatives).decisions.values())


def registration_sets(decisions: tuple[AutogradDecision, ...]) -> dict[str, list[str]]:
    """{key: sorted names of the functions registered there} for Autograd and ADInplaceOrView."""
    return {
        AUTOGRAD: sorted(d.name for d in decisions if d.registers_autograd),
        AD_INPLACE_OR_VIEW: sorted(d.name for d in decisions if d.registers_inplace_or_view),
    }
