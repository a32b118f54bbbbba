"""derivatives.yaml (torchgen's format) read against a Model: one ``DerivativeInfo`` per entry and
dispatch section, with the facts torchgen derives (backward node class names, saved inputs and
outputs, differentiable outputs) and the infos it adds without an entry (``*_copy`` views, and
``_foreach_`` functions: foreach_derivatives.py).

Every problem in the file is collected and reported together (up to a cap), at FILE:LINE.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Optional, Sequence

from ..errors import DiagnosticCollector, Location, OpgenError, did_you_mean
from ..fingerprint import digest
from ..yamlio import LocatedMap, iter_entries, read_located
from .derivative_info import DEFAULT, DerivativeInfo, Formula, ForwardFormula
from .dispatch_keys import DispatchKey
from .foreach_derivatives import PREFIX as FOREACH_PREFIX, foreach_infos
from .formulas import (
    camel_case_node_prefix, refused_spellings, saved_names, split_names, unknown_names, used_gradient_indices,
)
from .loader import ERROR_CAP, Model
from .native_function import NativeFunction
from .schema import OperatorName, SchemaKind

_BACKEND_COMPONENTS = ("CPU", "CUDA", "HIP", "XLA", "MTIA", "MPS", "IPU", "XPU", "HPU", "VE", "Lazy", "Meta",
                       "PrivateUse1", "PrivateUse2", "PrivateUse3")
# The keys a dispatch: section may name (torchgen's AUTOGRAD_KEYS), besides Default.
AUTOGRAD_KEYS = ("AutogradNestedTensor",) + tuple("Autograd" + c for c in _BACKEND_COMPONENTS)
ENTRY_KEYS = ("name", "output_differentiability", "dispatch")
# Views whose Autograd kernels PyTorch writes by hand (torchgen's MANUAL_AUTOGRAD_AND_TRACER):
# they need no formula.
MANUAL_AUTOGRAD = ("_fw_primal", "_make_dual", "detach")


@dataclass(frozen=True)
class DerivativeEntry:
    """One derivatives.yaml entry read on its own: its infos (one per dispatch section) and a digest
    of what it read of the model, so a later read of an edited file can take it instead of reading
    its text again (cache/derivatives_entries.py)."""

    spec: str                              # its 'name:': the schema of the function it names
    function: OperatorName                 # the function its infos are for (a second entry for it is an error)
    line: int                              # the line its mapping starts on (its '- ' line, nearly always)
    infos: tuple[DerivativeInfo, ...]
    node_stems: tuple[Optional[str], ...]  # per info: its node's class name before the number (None: no node)
    model_facts: str                       # digest of the functions sharing the named schema's signature

    def at_line(self, line: int) -> "DerivativeEntry":
        """The same entry moved to ``line``: every location in it moved alike."""
        if line == self.line:
            return self
        delta = line - self.line
        return replace(self, line=line, infos=tuple(_moved(info, delta) for info in self.infos))


@dataclass(frozen=True)
class Derivatives:
    source: str
    infos: tuple[DerivativeInfo, ...]  # entries in yaml order (dispatch sections in order), then *_copy infos, then _foreach_ infos
    entries: tuple[DerivativeEntry, ...] = field(default=(), compare=False)  # what each entry gave, in yaml order
    entry_digests: tuple[str, ...] = field(default=(), compare=False)  # each entry's text digest, when the cache knows them

    def nodes(self, dispatch_key: Optional[str] = DEFAULT) -> list[str]:
        return sorted(i.node for i in self.infos if i.node and (dispatch_key is None or i.dispatch_key == dispatch_key))

    def as_json(self) -> list[dict[str, Any]]:
        return [i.as_json() for i in sorted(self.infos, key=lambda i: (i.key, i.dispatch_key))]


def load_derivatives(path: str, model: Model, display_name: Optional[str] = None) -> Derivatives:
    name = display_name or path
    return build_derivatives(read_located(path, name), name, model)


def cpp_argument_names(f: NativeFunction) -> list[str]:
    """The C++ API's argument names (torchgen's non-faithful signature): out= arguments first,
    dtype/layout/device/pin_memory gathered into 'options'."""
    args = f.func.arguments
    kwargs = [a.name for a in args.kwarg_only]
    start = args.tensor_options_start()
    if start is not None:
        kwargs[start:start + 4] = ["options"]
    return [a.name for a in args.out] + [a.name for a in args.positional] + kwargs


def output_names(f: NativeFunction) -> list[str]:
    """What formulas call the outputs: 'result' (in-place: self's), the out= argument, a return's
    name, or result0, result1 ... (torchgen's cpp.return_names)."""
    func = f.func
    names = []
    arg_names = {a.name for a in func.arguments.all()}
    for i, ret in enumerate(func.returns):
        if func.name.name.inplace:
            names.append("result")
        elif func.is_out_fn():
            names.append(func.arguments.out[i].name)
        elif ret.name:
            names.append(f"{ret.name}_return" if ret.name in arg_names else ret.name)
        else:
            names.append("result" if len(func.returns) == 1 else f"result{i}")
    return names


def build_derivatives(document: Any, source: str, model: Model) -> Derivatives:
    errors = DiagnosticCollector(ERROR_CAP)
    return assemble_derivatives(source, model, read_entries(document, source, model, errors), errors)


def read_entries(document: Any, source: str, model: Model, errors: DiagnosticCollector,
                 functions: Optional["ModelFunctions"] = None) -> list[DerivativeEntry]:
    """Each entry of a parsed derivatives.yaml read against ``model``, in order; problems go to
    ``errors`` (a second entry for a function is one, and is not read further)."""
    reader = _Reader(model, source, errors, functions)
    seen: dict[OperatorName, Location] = {}
    entries = []
    for entry in iter_entries(document, source, on_error=errors.extend):
        try:
            read = reader.entry(entry, seen)
        except OpgenError as exc:
            errors.extend(exc, entry.where())
            continue
        if read is not None:
            entries.append(read)
    return entries


def assemble_derivatives(source: str, model: Model, entries: Iterable[DerivativeEntry],
                         errors: Optional[DiagnosticCollector] = None) -> Derivatives:
    """The derivatives of entries read one by one (in yaml order): their nodes numbered across
    the file, then the infos derived without an entry and the checks across entries. ``errors``
    may already hold the entries' own problems."""
    errors = errors if errors is not None else DiagnosticCollector(ERROR_CAP)
    entries = _numbered(entries)
    infos = [info for e in entries for info in e.infos]
    infos.extend(_view_copy_infos([e.infos for e in entries], model, {i.name for i in infos}))
    infos.extend(foreach_infos(model.functions, infos, errors.extend))
    _check_views_have_formulas(model, infos, source, errors)
    errors.sort_by_location()
    errors.raise_if_any()
    return Derivatives(source, tuple(infos), tuple(entries))


def _numbered(entries: Iterable[DerivativeEntry]) -> list[DerivativeEntry]:
    """torchgen names nodes by stem and count in file order (AddBackward0, AddBackward1): an entry
    read alone numbers from 0, so each takes its numbers from the entries before it here."""
    counter: Counter[str] = Counter()
    numbered = []
    for e in entries:
        infos = list(e.infos)
        for i, stem in enumerate(e.node_stems):
            if stem is None:
                continue
            node = f"{stem}{counter[stem]}"
            counter[stem] += 1
            if infos[i].node != node:
                infos[i] = replace(infos[i], node=node)
        numbered.append(e if all(a is b for a, b in zip(infos, e.infos)) else replace(e, infos=tuple(infos)))
    return numbered


def _moved(info: DerivativeInfo, delta: int) -> DerivativeInfo:
    def at(location: Location) -> Location:
        return Location(location.file, location.line + delta)
    return replace(info, location=at(info.location),
                   formulas=tuple(replace(f, location=at(f.location)) for f in info.formulas),
                   forward_formulas=tuple(replace(f, location=at(f.location)) for f in info.forward_formulas))


class ModelFunctions:
    """The model's functions as derivatives.yaml names them: by schema text, and the variants that
    share a signature. Found through names and family keys the model already holds, so only the
    functions asked about are printed (printing all of PyTorch's costs more than reading an entry)."""

    def __init__(self, model: Model):
        self.model = model
        self._by_name: Optional[dict[OperatorName, list[NativeFunction]]] = None  # only when a name repeats
        self._families: Optional[dict[str, list[NativeFunction]]] = None
        self._signatures: dict[int, str] = {}

    def with_schema(self, spec: str) -> Optional[NativeFunction]:
        """The function whose schema is ``spec`` exactly (the last, as a dict by schema keeps it)."""
        try:
            name = OperatorName.parse(spec.split("(", 1)[0])
        except OpgenError:
            return None
        found = None
        for f in self._named(name):
            if str(f.func) == spec:
                found = f
        return found

    def _named(self, name: OperatorName) -> Sequence[NativeFunction]:
        """The functions of that name in any namespace, in model order."""
        if len(self.model.by_name) == len(self.model.functions):  # the usual case: no name repeats
            f = self.model.by_name.get(name)
            return (f,) if f is not None else ()
        if self._by_name is None:
            self._by_name = {}
            for f in self.model.functions:
                self._by_name.setdefault(f.func.name, []).append(f)
        return self._by_name.get(name, ())

    def family(self, f: NativeFunction) -> list[NativeFunction]:
        """The functions whose signature is ``f``'s, in model order (equal signatures have equal
        family keys, so only those are compared)."""
        if self._families is None:
            self._families = {}
            for g in self.model.functions:
                self._families.setdefault(g.func.family_key(), []).append(g)
        signature = self._signature(f)
        return [g for g in self._families[f.func.family_key()] if self._signature(g) == signature]

    def facts(self, spec: str) -> Optional[str]:
        """The digest of what an entry naming ``spec`` reads of the model (DerivativeEntry.model_facts);
        None when no function has that schema."""
        f = self.with_schema(spec)
        return None if f is None else facts_digest(self.family(f))

    def _signature(self, f: NativeFunction) -> str:
        key = id(f)
        if key not in self._signatures:
            self._signatures[key] = str(f.func.signature())
        return self._signatures[key]


def facts_digest(family: Iterable[NativeFunction]) -> str:
    """An entry's infos follow from its text and the functions sharing its schema's signature: which
    one it names, which is canonical, and that one's arguments and returns."""
    return digest(*(f"{f.namespace} {f.func}".encode() for f in family))


class _Reader:
    def __init__(self, model: Model, source: str, errors: DiagnosticCollector, functions: Optional[ModelFunctions] = None):
        self.model = model
        self.source = source
        self.errors = errors
        self.functions = functions or ModelFunctions(model)

    def report(self, where: Location, message: str) -> None:
        self.errors.add(where, message)

    def entry(self, entry: LocatedMap, seen: dict[OperatorName, Location]) -> Optional[DerivativeEntry]:
        spec = entry.get("name")
        if not isinstance(spec, str):
            raise OpgenError("each entry needs 'name: SCHEMA', the schema of a function in the operator yaml", entry.where("name"))
        f = self._function(spec, entry.where("name"))
        if f is None:
            return None
        defn_name = re.match(r"\w+", spec).group(0)
        family = self.functions.family(f)
        canonical = self._canonical(family, defn_name)
        if canonical.func.name in seen:
            self.report(entry.where("name"), f"a second entry for {canonical.func.name} (first at line {seen[canonical.func.name].line}); "
                                             "merge them (use 'dispatch:' for per-key formulas)")
            return None
        seen[canonical.func.name] = entry.where("name")
        for bad in ("grad_input_mask", "result"):
            if bad in cpp_argument_names(canonical):
                self.report(entry.where("name"), f"{canonical.func.name} has an argument named '{bad}', which formulas reserve; rename it in the operator yaml")
        differentiability, conditions = self._output_differentiability(entry, canonical)
        if "dispatch" in entry:
            sections = entry["dispatch"]
            if not isinstance(sections, LocatedMap):
                raise OpgenError("'dispatch' must map Default or an Autograd key to formulas", entry.where("dispatch"))
            for key in entry:
                if key not in ENTRY_KEYS:
                    self.report(entry.where(key), f"'{key}' beside 'dispatch:'; put formulas inside a dispatch section")
        else:
            sections = {DEFAULT: entry}
        infos, stems = [], []
        for key, section in sections.items():
            where = sections.where(key) if isinstance(sections, LocatedMap) else entry.where()
            if key != DEFAULT and key not in AUTOGRAD_KEYS:
                self.report(where, f"unknown dispatch key '{key}' in derivatives; "
                            + did_you_mean(str(key), (DEFAULT, *AUTOGRAD_KEYS), f"use {DEFAULT} or an Autograd key"))
                continue
            if not isinstance(section, LocatedMap):
                self.report(where, f"dispatch section {key} must map argument names to formulas")
                continue
            info, stem = self._info(canonical, defn_name, key, section, where, differentiability, conditions)
            infos.append(info)
            stems.append(stem)
        return DerivativeEntry(spec, canonical.func.name, entry.line, tuple(infos), tuple(stems), facts_digest(family))

    def _function(self, spec: str, where: Location) -> Optional[NativeFunction]:
        f = self.functions.with_schema(spec)
        if f is not None:
            return f
        try:
            wanted = OperatorName.parse(spec.split("(", 1)[0])
        except OpgenError:
            wanted = None
        same_name = self.model.by_name.get(wanted) if wanted is not None else None
        if same_name is not None:
            self.report(where, f"'name:' differs from the schema of {wanted} ({same_name.location}); "
                               f"write it exactly, defaults included: '{same_name.func}'")
        else:
            names = [str(g.func.name) for g in self.model.functions]
            hint = did_you_mean(spec.split("(", 1)[0], names, "'name:' must be the schema of a function in the operator yaml")
            self.report(where, f"no function matches '{spec}'; {hint}")
        return None

    @staticmethod
    def _canonical(family: list[NativeFunction], defn_name: str) -> NativeFunction:
        """torchgen's choice among the variants sharing a signature (``family``): the first that is
        neither out= nor a '_functional' overload and has the entry's base name."""
        for g in family:
            if not g.func.is_out_fn() and "functional" not in g.func.name.overload_name and str(g.func.name.name) == defn_name:
                return g
        return family[0]

    def _output_differentiability(self, entry: LocatedMap, f: NativeFunction):
        raw = entry.get("output_differentiability")
        if raw is None:
            return None, None
        where = entry.where("output_differentiability")
        if not isinstance(raw, list) or not raw or not all(isinstance(x, (bool, str)) for x in raw):
            self.report(where, "output_differentiability must be a list of True/False, one per output")
            return None, None
        if any(isinstance(x, str) for x in raw):
            if len(raw) != 1 or len(f.func.returns) != 1:
                self.report(where, "a condition in output_differentiability is supported for single-output functions only: ['condition']")
                return None, None
            return (True,), (raw[0],)
        if len(raw) != len(f.func.returns):
            self.report(where, f"output_differentiability has {len(raw)} entries but {f.func.name} returns "
                               f"{len(f.func.returns)} outputs; give one True/False per output")
            return None, None
        return tuple(raw), None

    def _info(self, f: NativeFunction, defn_name: str, key: str, section: LocatedMap, where: Location,
              differentiability, conditions) -> tuple[DerivativeInfo, Optional[str]]:
        args = cpp_argument_names(f)
        outputs = output_names(f)
        ret_names = [r.name for r in f.func.returns]
        flags = differentiability or (True,) * len(f.func.returns)
        named_grads = [f"grad_{r.name}" for r, d in zip(f.func.returns, flags) if d and r.name and r.type.is_tensor_like()]
        formulas: list[Formula] = []
        forward: list[ForwardFormula] = []
        non_differentiable: list[str] = []
        first: dict[str, int] = {}
        for raw_key in sorted(section, key=str):
            if key == DEFAULT and raw_key in ENTRY_KEYS:
                continue
            line = section.where(raw_key)
            formula = section[raw_key]
            names = split_names(str(raw_key))
            if not isinstance(formula, str):
                self.report(line, f"the formula for '{raw_key}' must be a string (a C++ expression)")
                continue
            unknown = [n for n in names if n not in args and n not in outputs and n not in ret_names]
            if unknown:
                for n in unknown:
                    hint = did_you_mean(n, args + outputs, f"arguments: {', '.join(args) or 'none'}; outputs: {', '.join(outputs) or 'none'}")
                    self.report(line, f"'{n}' is neither an argument nor an output of {f.func.name}; {hint}")
                continue
            is_forward = names[0] not in args
            if any((n in args) == is_forward for n in names):
                self.report(line, f"'{raw_key}' mixes arguments and outputs; backward formulas name arguments, forward formulas outputs")
                continue
            for n in names:
                if n in first:
                    self.report(line, f"a formula for '{n}' is given twice (first at line {first[n]}); give one per {'output' if is_forward else 'argument'}")
                else:
                    first[n] = line.line
            if is_forward:
                if formula.strip() not in ("auto_element_wise", "auto_linear"):
                    schema_args = [a.name for a in f.func.arguments.all()]
                    self._check_names(formula, line, raw_key, f, [*args, *schema_args, *outputs, *self._index(f)],
                                      [*args, *schema_args], forward=True)
                forward.append(ForwardFormula(names, formula, line))
                continue
            if formula.strip().lower() == "non_differentiable":
                non_differentiable.extend(names)
                continue
            self._check_names(formula, line, raw_key, f, [*args, *outputs, *named_grads, *self._index(f)], [*args, *outputs])
            for message in refused_spellings(formula):
                self.report(line, f"formula for '{raw_key}': {message}")
            for index in used_gradient_indices(formula):
                if index >= len(f.func.returns):
                    self.report(line, f"formula for '{raw_key}' uses grads[{index}], but {f.func.name} returns {len(f.func.returns)} outputs")
            rest, inputs = saved_names(formula, args)
            _, saved_outputs = saved_names(rest, outputs)
            formulas.append(Formula(names, formula, line, inputs, saved_outputs))
        with_formula = {n for d in formulas for n in d.var_names}
        differentiable_inputs = tuple(a for a in args if a in with_formula)
        stem = node = None
        if differentiable_inputs:
            stem = camel_case_node_prefix(defn_name) + ("" if key == DEFAULT else key)
            node = f"{stem}0"  # numbered across the file by assemble_derivatives
        info = DerivativeInfo(
            name=f.func.name, namespace=f.namespace, dispatch_key=key, node=node, formulas=tuple(formulas),
            forward_formulas=tuple(forward), differentiable_inputs=differentiable_inputs,
            non_differentiable=tuple(non_differentiable),
            saved_inputs=_dedup(n for d in formulas for n in d.saved_inputs),
            saved_outputs=_dedup(n for d in formulas for n in d.saved_outputs),
            output_differentiability=differentiability, output_differentiability_conditions=conditions,
            differentiable_outputs=tuple(bool(d) and r.type.is_tensor_like() for r, d in zip(f.func.returns, flags)),
            location=where,
        )
        return info, stem

    @staticmethod
    def _index(f: NativeFunction) -> tuple[str, ...]:
        """_foreach_ formulas are per list element: they may use the index 'i'."""
        return ("i",) if f.func.name.name.base.startswith("_foreach_") else ()

    def _check_names(self, formula: str, line: Location, raw_key: str, f: NativeFunction, known, variables, forward: bool = False) -> None:
        for name in unknown_names(formula, known, variables, forward):
            hint = did_you_mean(name, known, "a formula may use the arguments, the outputs, grad/grads[i] and derived names such as self_sym_sizes")
            self.report(line, f"the formula for '{raw_key}' uses '{name}', which is neither an argument nor an output of {f.func.name}; {hint}")


def _dedup(names) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


def _view_copy_infos(by_entry: list[list[DerivativeInfo]], model: Model, have: set[OperatorName]) -> list[DerivativeInfo]:
    """torchgen's derived infos for {view}_copy functions: the view's formulas under the copy's
    name, nodes named '<view node>_copy' (unless the copy has an entry of its own)."""
    copies = {g.view.func.name: g.view_copy for g in model.view_groups
              if not isinstance(g, NativeFunction) and g.view_copy is not None}
    derived = []
    for infos in by_entry:
        if not infos or any(i.name not in copies for i in infos):
            continue
        copy = copies[infos[0].name]
        if copy.func.name in have:
            continue
        for info in infos:
            derived.append(DerivativeInfo(
                name=copy.func.name, namespace=copy.namespace, dispatch_key=info.dispatch_key,
                node=f"{info.node}_copy" if info.node else None, formulas=info.formulas,
                forward_formulas=info.forward_formulas, differentiable_inputs=info.differentiable_inputs,
                non_differentiable=info.non_differentiable, saved_inputs=info.saved_inputs,
                saved_outputs=info.saved_outputs, output_differentiability=info.output_differentiability,
                output_differentiability_conditions=info.output_differentiability_conditions,
                differentiable_outputs=info.differentiable_outputs, location=info.location, derived_from=info.name,
            ))
    return derived


# Kernels for these layouts alone (sparse, quantized, nested, mkldnn) do not make a view need a formula:
# PyTorch leaves such views (_sparse_broadcast_to) without one.
_LAYOUT_SPECIFIC = ("Sparse", "Quantized", "NestedTensor", "Mkldnn")


def needs_formula(f: NativeFunction, model: Model) -> bool:
    """A view that autograd cannot see through: an out-of-place view of a Tensor input with a
    kernel of its own (a CompositeImplicitAutograd view decomposes into views that have formulas)."""
    if f.func.name.name.inplace or f.func.kind() is not SchemaKind.functional or not f.is_view_op:
        return False  # the cheap tests first: most functions fail them
    if not any(a.type.is_tensor_like() for a in f.func.arguments.all()):
        return False
    if not any(r.type.is_tensor_like() for r in f.func.returns):
        return False
    keys = set(model.kernels_of(f))
    if not keys or DispatchKey.CompositeImplicitAutograd in keys:
        return False
    return any(not key.value.startswith(_LAYOUT_SPECIFIC) for key in keys)


def _check_views_have_formulas(model: Model, infos: list[DerivativeInfo], source: str, errors: DiagnosticCollector) -> None:
    covered = {i.name for i in infos}  # an entry, even one that says non_differentiable
    for f in model.functions:
        if needs_formula(f, model) and f.func.name not in covered and str(f.func.name) not in MANUAL_AUTOGRAD:
            errors.add(f.location, f"view operator {f.func.name} has no backward formula in {source}; autograd needs one "
                                   f"for a view with its own kernel: add '- name: {f.func}' with a formula for its input")


def derivatives_summary(derivatives: Derivatives) -> str:
    infos = derivatives.infos
    keys = Counter(i.dispatch_key for i in infos if i.node)
    derived = Counter(i.name.name.base.startswith(FOREACH_PREFIX) for i in infos if i.derived_from is not None)
    lines = [
        f"{derivatives.source}",
        f"  derivative infos   {len(infos):6d}  ({derived[False]} derived for *_copy views, {derived[True]} for _foreach_ functions)",
        f"  backward nodes     {sum(i.node is not None for i in infos):6d}",
        f"  forward formulas   {sum(bool(i.forward_formulas) for i in infos):6d}  infos with result: formulas",
        f"  no backward node   {sum(i.node is None for i in infos):6d}  (non_differentiable or forward only)",
        "  nodes per dispatch key:",
    ]
    lines.extend(f"    {key:40s} {count:5d}" for key, count in sorted(keys.items(), key=lambda kv: (-kv[1], kv[0])))
    return "\n".join(lines) + "\n"
