"""``close_selection``: the selected operators plus everything they need, each with why.

The unit is the operator group: a selected operator brings its whole group (its other
overloads, the out= its functional delegates to, what autogen made from it). Then, to a
fixpoint, breadth first (so a group's first reason is its shortest path to a root), the closure
*by operator*: a group is kept (generated, compiled, registered) only when something kept needs
it:

* what a group's generated code calls (``generated_includes``: group -> callee groups, or
  (callee, generated file) pairs; ``callees.GeneratedCallees`` renders and scans the files),
  its autograd formulas' callees only when the group is used for training;
* the groups a structured function delegates to;
* hand-written sources: one implementing a kept group is compiled, so the groups it calls are
  kept; the runtime's sources and support code (sources implementing no group) are always
  compiled, so the groups they call, and those whose native kernels a runtime source names
  (``ops/<g>_native.h``: a backend's autograd kernels call them), are always kept; an umbrella
  header included by a compiled source keeps every group. A source marked backward only
  (``// opgen: backward only``, sources.BACKWARD_ONLY: the autograd engine, gradient
  accumulation, hooks, formula helpers) is compiled all the same, but the groups it calls are
  kept only when it is compiled for training: a selection no entry of which is used for training
  never runs a backward pass.

A compiled source's *other* groups (``unary_ops.cpp`` compiled for ``clamp`` also implements
``cos``) are only *declared*: their headers are generated, since the source includes them, but
their units are not compiled and nothing registers them, so they raise like any left-out
operator and the linker can drop their kernels.

Training: a group kept for an entry with ``is_used_for_training: true`` (or for a kept group
used for training, or for the runtime when any entry is) gets the autograd layer; every other
kept group is listed in ``inference`` and generated without it (CodegenConfig.inference).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Callable, Collection, Iterable, Mapping, Optional, Union

from ..errors import Location, close_match
from ..model.loader import Model
from .names import DEFAULT_NAMESPACE
from .selection import Selection
from .sources import HandWritten, index_sources

Callee = Union[str, tuple[str, str]]  # a callee group, or (callee group, the generated file calling it)


class ReasonKind(Enum):
    SELECTED = "selected"                # the selection names one of its operators
    SELECTED_ALL = "selected all"        # include_all_operators: true
    STRUCTURED = "structured"            # a function of another group delegates to one of its out=
    GENERATED = "generated"              # another group's generated code calls it
    CALLED_BY_SOURCE = "called"          # a compiled kernel source calls it
    # Not a reason to keep a group any more (the closure is by operator: such groups are only
    # declared, Closure.declared); kept so that callers naming it still import.
    IMPLEMENTED_BESIDE = "beside"        # a compiled kernel source implements it too
    RUNTIME_CALL = "runtime call"        # the runtime calls it
    RUNTIME_IMPL = "runtime impl"        # the runtime implements it
    SUPPORT = "support"                  # support code (implements no group) calls it
    UMBRELLA = "umbrella"                # a compiled source includes an umbrella header


@dataclass(frozen=True)
class Reason:
    """Why a group is in the build; ``via`` is the group it came from (None: a root)."""

    kind: ReasonKind
    via: Optional[str] = None
    source: Optional[str] = None          # the hand-written source, or the generated file, needing it
    operator: Optional[str] = None        # the selected (or delegating) operator
    location: Optional[Location] = None   # where the selection names it
    detail: str = ""                      # the umbrella header; the delegate of a structured function

    def text(self, group: str = "") -> str:
        kind = self.kind
        if kind is ReasonKind.SELECTED:
            return f"selected at {self.location}" if self.operator == group else f"{self.operator} selected at {self.location}"
        if kind is ReasonKind.SELECTED_ALL:
            return f"selected at {self.location} (include_all_operators)"
        if kind is ReasonKind.STRUCTURED:
            return f"structured: {self.operator} delegates to {self.detail}"
        if kind is ReasonKind.GENERATED:
            return f"called by {self.via}'s generated {self.source}"
        if kind is ReasonKind.CALLED_BY_SOURCE:
            return f"called by {self.source}, which implements {self.via}"
        if kind is ReasonKind.IMPLEMENTED_BESIDE:
            return f"implemented in {self.source}, which is compiled for {self.via}"
        if kind is ReasonKind.RUNTIME_CALL:
            return f"called by the runtime: {self.source}"
        if kind is ReasonKind.RUNTIME_IMPL:
            return f"implemented by the runtime: {self.source}"
        if kind is ReasonKind.SUPPORT:
            return f"called by {self.source}, support code compiled in every build (it implements no operator group)"
        compiled_for = f", which implements {self.via}," if self.via else ""
        return f"every group is in: {self.source}{compiled_for} includes the umbrella header {self.detail}"


@dataclass(frozen=True)
class SourceReason:
    """Why a hand-written source is compiled: it is the runtime, support code, or implements ``group``."""

    kind: str                      # "runtime", "support" or "implements"
    group: Optional[str] = None

    def text(self) -> str:
        if self.kind == "runtime":
            return "part of the runtime (always compiled)"
        if self.kind == "support":
            return "support code: implements no operator group (always compiled)"
        return f"implements {self.group}"


@dataclass(frozen=True)
class Closure:
    groups: tuple[str, ...]                          # sorted
    operators: tuple[str, ...]                       # NativeFunction.key of every function of those groups, sorted
    reasons: Mapping[str, tuple[Reason, ...]]        # group -> reasons, the first on a shortest path to a root
    sources: tuple[str, ...]                         # hand-written sources to compile, sorted
    source_reasons: Mapping[str, SourceReason]
    selected: tuple[str, ...]                        # the operators the selection names, sorted
    operator_notes: Mapping[str, str] = field(default_factory=dict)   # overload -> why it comes with its group
    group_of: Mapping[str, str] = field(default_factory=dict)         # operator key -> group
    unresolved: tuple[tuple[str, str], ...] = ()     # (compiled source, ops/ header no group of the yaml has)
    model_names: frozenset[str] = field(default=frozenset(), compare=False, repr=False)  # every operator and group
    group_of_model: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)  # every operator -> group
    # Groups whose headers are generated, not registered: a compiled source implements them too.
    declared: tuple[str, ...] = ()                   # sorted, none of them in groups
    declared_by: Mapping[str, tuple[str, Optional[str]]] = field(default_factory=dict)  # group -> (source, group it is compiled for)
    inference: tuple[str, ...] = ()                  # kept groups used for no training: no autograd layer, sorted
    # Declared groups a backward-only source calls (nothing trained): their operator handles
    # (ops/<g>_schema.cpp without its schemas) are compiled, so the source links; a call raises
    # "unknown operator", as the operator is not in the build.
    handles: tuple[str, ...] = ()                    # sorted, all of them in declared

    @property
    def generated(self) -> tuple[str, ...]:
        """Every group whose files the build generates: the kept ones and the declared ones, sorted."""
        return tuple(sorted(self.groups + self.declared))

    @property
    def selected_groups(self) -> tuple[str, ...]:
        return tuple(g for g in self.groups if any(r.kind in (ReasonKind.SELECTED, ReasonKind.SELECTED_ALL)
                                                   for r in self.reasons[g]))

    def __contains__(self, name: str) -> bool:
        name = _unqualified(name)
        return name in self.reasons or name in self.group_of or name in self.source_reasons

    def chain(self, group: str) -> list[str]:
        """``group: reason`` for each step from ``group`` back to a root, along first reasons."""
        steps = []
        while group is not None:
            reason = self.reasons[group][0]
            steps.append(f"{group}: {reason.text(group)}")
            group = reason.via
        return steps

    def explain(self, name: str, more: int = 5) -> str:
        """Why an operator (add.out, aten::add.out), a group (add) or a hand-written source is in
        the build: the chain to a root on the first line, then the group's other reasons."""
        name = _unqualified(name)
        if name in self.group_of and name not in self.reasons:
            group = self.group_of[name]
            note = self.operator_notes.get(name) or f"an overload of {group}"
            return self._with_others(f"{name}: {note}; " + "; ".join(self.chain(group)), group, more)
        if name in self.reasons:
            return self._with_others("; ".join(self.chain(name)), name, more)
        if name in self.source_reasons:
            reason = self.source_reasons[name]
            tail = "; " + "; ".join(self.chain(reason.group)) if reason.group else ""
            return f"{name}: compiled: {reason.text()}{tail}"
        declared = self.declared_by.get(self.group_of_model.get(name, name))
        if declared is not None:
            source, via = declared
            why = f"compiled for {via}; " + "; ".join(self.chain(via)) if via else "part of the runtime"
            if self.group_of_model.get(name, name) in self.handles:
                why += " and runs in backward passes only (nothing selected is used for training)"
            return (f"{name}: not in the build: nothing selected needs it; only its declarations are generated, "
                    f"for {source}, which is {why}")
        nearest = close_match(name, list(self.reasons) + list(self.group_of))
        hint = f" (nearest in the build: {nearest})" if nearest else ""
        if name in self.model_names:
            return f"{name}: not in the build: nothing selected needs it{hint}"
        return f"{name}: not in the build, and no operator or group of the yaml{hint}"

    def _with_others(self, first: str, group: str, more: int) -> str:
        others = self.reasons[group][1:]
        lines = [first] + [f"  also: {r.text(group)}" for r in others[:more]]
        if len(others) > more:
            lines.append(f"  ... and {len(others) - more} more reasons")
        return "\n".join(lines)


def _unqualified(name: str) -> str:
    prefix = f"{DEFAULT_NAMESPACE}::"
    return name[len(prefix):] if name.startswith(prefix) else name


def close_selection(selection: Selection, model: Model, generated_includes: Callable[[str], Iterable[Callee]],
                    sources: Union[Mapping[str, str], HandWritten, None] = None,
                    runtime_sources: Collection[str] = ()) -> Closure:
    """The closure of ``selection`` over ``model``: see the module's docstring. ``sources`` maps a
    hand-written C++ file's path to its text (or is already indexed); ``runtime_sources`` names
    the runtime's files among them. ``generated_includes`` is asked of groups used for training;
    its ``inference`` attribute, when it has one (GeneratedCallees), of the others."""
    groups_by_name = {g.name: g for g in model.operator_groups}
    group_of = {f.key: f.root_name for f in model.functions}
    hand = sources if isinstance(sources, HandWritten) else index_sources(sources or {}, groups_by_name, runtime_sources)
    inference_includes = getattr(generated_includes, "inference", generated_includes)
    walk = _Walk(set(groups_by_name), hand)

    if selection.include_all is not None:
        for group in sorted(groups_by_name):
            walk.add(group, Reason(ReasonKind.SELECTED_ALL, location=selection.include_all), training=True)
    for entry in selection.operators:
        for key in entry.keys:
            walk.add(group_of[key], Reason(ReasonKind.SELECTED, operator=key, location=entry.location),
                     training=entry.is_used_for_training)
    # The runtime's own calls serve whatever the program does: trained when anything is.
    runtime_training = selection.include_all is not None or any(e.is_used_for_training for e in selection.operators)
    for path in hand.always_compiled():
        walk.compile(path, SourceReason("runtime" if path in hand.runtime else "support"), runtime_training)

    frontier = walk.take_new()
    while frontier:
        for group in sorted(frontier):
            training = group in walk.training
            for f in groups_by_name[group].functions:
                delegate = f.structured_delegate and model.by_name.get(f.structured_delegate)
                if delegate and delegate.root_name != group:
                    walk.add(delegate.root_name, Reason(ReasonKind.STRUCTURED, via=group, operator=f.key,
                                                        detail=delegate.key), training)
            for item in (generated_includes if training else inference_includes)(group):
                callee, file = (item, None) if isinstance(item, str) else item
                if callee != group:
                    walk.add(callee, Reason(ReasonKind.GENERATED, via=group, source=file or f"code of {group}"), training)
            for path in hand.implementers.get(group, ()):
                walk.compile(path, SourceReason("implements", group), training)
        frontier = walk.take_new()

    closed = sorted(walk.reasons)
    handles = tuple(sorted(g for g in walk.handles if g not in walk.reasons))
    found = {**{g: (walk.handles[g], None) for g in handles}, **walk.declared}
    declared_by = _declared(found, set(closed), generated_includes)
    operators = sorted(f.key for g in closed for f in groups_by_name[g].functions)
    unresolved = tuple((path, header) for path in sorted(walk.compiled) for header in hand.sources[path].unresolved)
    return Closure(
        groups=tuple(closed), operators=tuple(operators),
        reasons={g: tuple(walk.reasons[g]) for g in closed},
        sources=tuple(sorted(walk.compiled)), source_reasons=dict(sorted(walk.compiled.items())),
        selected=selection.keys, operator_notes=_operator_notes(selection, model, set(closed)),
        group_of={key: group_of[key] for key in operators}, unresolved=unresolved,
        model_names=frozenset(group_of) | frozenset(groups_by_name), group_of_model=group_of,
        declared=tuple(sorted(declared_by)), declared_by=declared_by,
        inference=tuple(g for g in closed if g not in walk.training), handles=handles,
    )


def _declared(found: Mapping[str, tuple[str, Optional[str]]], kept: set[str],
              generated_includes: Callable[[str], Iterable[Callee]]) -> dict[str, tuple[str, Optional[str]]]:
    """The groups implemented by compiled sources that nothing kept needs, and the groups their
    generated headers include (a header of theirs must compile too), sorted."""
    declared = {g: why for g, why in found.items() if g not in kept}
    pending = sorted(declared)
    while pending:
        group = pending.pop()
        for item in generated_includes(group):
            callee, file = (item, "") if isinstance(item, str) else item
            if file.endswith(".h") and callee not in kept and callee not in declared:
                declared[callee] = declared[group]
                pending.append(callee)
    return dict(sorted(declared.items()))


class _Walk:
    """The closure as it grows: reasons per group, the groups used for training, compiled sources,
    the groups compiled sources implement beside, groups new (or newly trained) since last taken."""

    def __init__(self, groups: set[str], hand: HandWritten):
        self.groups = groups
        self.hand = hand
        self.reasons: dict[str, list[Reason]] = {}
        self.training: set[str] = set()
        self.compiled: dict[str, SourceReason] = {}
        self.declared: dict[str, tuple[str, Optional[str]]] = {}   # group -> (source, group it is compiled for)
        self.handles: dict[str, str] = {}   # group -> the backward-only source calling it, untrained
        self._trained_sources: set[str] = set()
        self._new: list[str] = []

    def add(self, group: str, reason: Reason, training: bool) -> None:
        if group not in self.groups:
            return
        known = self.reasons.get(group)
        if known is None:
            self.reasons[group] = [reason]
            self._new.append(group)
        elif reason not in known:
            known.append(reason)
        if training and group not in self.training:
            # Trained now: walked again, with its autograd files' callees.
            self.training.add(group)
            if known is not None:
                self._new.append(group)

    def take_new(self) -> list[str]:
        new, self._new = list(dict.fromkeys(self._new)), []
        return new

    def compile(self, path: str, why: SourceReason, training: bool) -> None:
        if path in self.compiled and (not training or path in self._trained_sources):
            return
        why = self.compiled.setdefault(path, why)
        if training:
            self._trained_sources.add(path)
        facts = self.hand.sources[path]
        runtime = path in self.hand.runtime
        call = ReasonKind.RUNTIME_CALL if runtime else ReasonKind.SUPPORT if facts.is_support else ReasonKind.CALLED_BY_SOURCE
        if facts.backward_only and not training:
            # Compiled, but what it calls runs in backward passes only: those groups get their
            # declarations and operator handles (Closure.handles), not their kernels.
            for group in facts.calls:
                self.handles.setdefault(group, path)
        else:
            for group in facts.calls:
                if group != why.group:
                    self.add(group, Reason(call, via=why.group, source=path), training)
        for group in facts.implements:
            if group == why.group:
                continue
            if runtime:
                # Always compiled, and it may call the native kernels whose headers it includes
                # (a backend's autograd kernels call op::native::matmul): their files must compile.
                self.add(group, Reason(ReasonKind.RUNTIME_IMPL, via=why.group, source=path), training)
            else:
                self.declared.setdefault(group, (path, why.group))
        for header in facts.umbrellas:
            for group in sorted(self.groups):
                self.add(group, Reason(ReasonKind.UMBRELLA, via=why.group, source=path, detail=header), training)


def _operator_notes(selection: Selection, model: Model, groups: set[str]) -> dict[str, str]:
    """Why each overload of a closure group is there, beyond its group's reasons: selected itself,
    the out= a selected function delegates to, what autogen made from a selected function, or
    another overload of a selected one."""
    selected = set(selection.keys)
    notes: dict[str, str] = {}
    by_group: dict[str, list] = {}
    for f in model.functions:
        if f.root_name in groups:
            by_group.setdefault(f.root_name, []).append(f)
    for group, functions in sorted(by_group.items()):
        functions.sort(key=lambda f: f.key)
        chosen = [f for f in functions if f.key in selected]
        for f in functions:
            if f.key in selected:
                entry = selection.entry_of(f.key)
                every = f" (every overload of {entry.name})" if len(entry.keys) > 1 else ""
                notes[f.key] = f"selected at {entry.location}{every}"
                continue
            delegating = [s for s in chosen if s.structured_delegate == f.func.name]
            generating = [s for s in chosen if f.func.name in s.autogen]
            if delegating:
                notes[f.key] = f"structured: {delegating[0].key} delegates to {f.key}"
            elif generating:
                notes[f.key] = f"generated by autogen from {generating[0].key}"
            elif chosen:
                notes[f.key] = f"same group as {chosen[0].key}"
    return notes
