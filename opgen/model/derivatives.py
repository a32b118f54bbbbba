"""derivatives.yaml (torchgen's format) read against a Model: one ``DerivativeInfo`` per entry and
dispatch section, with the facts torchgen derives (backward node class names, saved inputs and
outputs, differentiable outputs) and the infos it adds without an entry (``*_copy`` views, and
``_foreach_`` functions: foreach_derivatives.py).

Every problem in the file is collected and reported together (up to a cap), at FILE:LINE.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Optional

from ..errors import DiagnosticCollector, Location, OpgenError, did_you_mean
from ..yamlio import LocatedMap, iter_entries, read_located
from .derivative_info import DEFAULT, DerivativeInfo, Formula, ForwardFormula
from .dispatch_keys import DispatchKey
from .foreach_derivatives import PREFIX as FOREACH_PREFIX, foreach_infos
from .formulas import (
    camel_case_node_prefix, refused_spellings, saved_names, split_names, unknown_names, used_gradient_indices,
)
from .loader import ERROR_CAP, Model
from .native_function import NativeFunction
from .schema import FunctionSchema, OperatorName, SchemaKind

_BACKEND_COMPONENTS = ("CPU", "CUDA", "HIP", "XLA", "MTIA", "MPS", "IPU", "XPU", "HPU", "VE", "Lazy", "Meta",
                       "PrivateUse1", "PrivateUse2", "PrivateUse3")
# The keys a dispatch: section may name (torchgen's AUTOGRAD_KEYS), besides Default.
AUTOGRAD_KEYS = ("AutogradNestedTensor",) + tuple("Autograd" + c for c in _BACKEND_COMPONENTS)
ENTRY_KEYS = ("name", "output_differentiability", "dispatch")
# Views whose Autograd kernels PyTorch writes by hand (torchgen's MANUAL_AUTOGRAD_AND_TRACER):
# they need no formula.
MANUAL_AUTOGRAD = ("_fw_primal", "_make_dual", "detach")


@dataclass(frozen=True)
class Derivatives:
    source: str
    infos: tuple[DerivativeInfo, ...]  # entries in yaml order (dispatch sections in order), then *_copy infos, then _foreach_ infos

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
    reader = _Reader(model, source, errors)
    for entry in iter_entries(document, source, on_error=errors.extend):
        try:
            reader.entry(entry)
        except OpgenError as exc:
            errors.extend(exc, entry.where())
    infos = list(reader.infos)
    infos.extend(_view_copy_infos(reader.by_entry, model, {i.name for i in infos}))
    infos.extend(foreach_infos(model.functions, infos, errors.extend))
    _check_views_have_formulas(model, infos, source, errors)
    errors.sort_by_location()
    errors.raise_if_any()
    return Derivatives(source, tuple(infos))


class _Reader:
    def __init__(self, model: Model, source: str, errors: DiagnosticCollector):
        self.model = model
        self.source = source
        self.errors = errors
        self.by_schema = {str(f.func): f for f in model.functions}
        self.by_signature: dict[str, list[NativeFunction]] = {}
        for f in model.functions:
            self.by_signature.setdefault(str(f.func.signature()), []).append(f)
        self.counter: Counter[str] = Counter()
        self.infos: list[DerivativeInfo] = []
        self.by_entry: list[list[DerivativeInfo]] = []
        self.seen: dict[OperatorName, Location] = {}

    def report(self, where: Location, message: str) -> None:
        self.errors.add(where, message)

    def entry(self, entry: LocatedMap) -> None:
        spec = entry.get("name")
        if not isinstance(spec, str):
            raise OpgenError("each entry needs 'name: SCHEMA', the schema of a function in the operator yaml", entry.where("name"))
        f = self._function(spec, entry.where("name"))
        if f is None:
            return
        defn_name = re.match(r"\w+", spec).group(0)
        canonical = self._canonical(f, defn_name)
        if canonical.func.name in self.seen:
            self.report(entry.where("name"), f"a second entry for {canonical.func.name} (first at line {self.seen[canonical.func.name].line}); "
                                             "merge them (use 'dispatch:' for per-key formulas)")
            return
        self.seen[canonical.func.name] = entry.where("name")
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
        infos = []
        for key, section in sections.items():
            where = sections.where(key) if isinstance(sections, LocatedMap) else entry.where()
            if key != DEFAULT and key not in AUTOGRAD_KEYS:
                self.report(where, f"unknown dispatch key '{key}' in derivatives; "
                            + did_you_mean(str(key), (DEFAULT, *AUTOGRAD_KEYS), f"use {DEFAULT} or an Autograd key"))
                continue
            if not isinstance(section, LocatedMap):
                self.report(where, f"dispatch section {key} must map argument names to formulas")
                continue
            info = self._info(canonical, defn_name, key, section, where, differentiability, conditions)
            infos.append(info)
        self.infos.extend(infos)
        self.by_entry.append(infos)

    def _function(self, spec: str, where: Location) -> Optional[NativeFunction]:
        f = self.by_schema.get(spec)
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

    def _canonical(self, f: NativeFunction, defn_name: str) -> NativeFunction:
        """torchgen's choice among the variants sharing ``f``'s signature: the first that is
        neither out= nor a '_functional' overload and has the entry's base name."""
        family = self.by_signature[str(f.func.signature())]
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
              differentiability, conditions) -> DerivativeInfo:
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
        node = None
        if differentiable_inputs:
            prefix = camel_case_node_prefix(defn_name) + ("" if key == DEFAULT else key)
            node = f"{prefix}{self.counter[prefix]}"
            self.counter[prefix] += 1
        return DerivativeInfo(
            name=f.func.name, namespace=f.namespace, dispatch_key=key, node=node, formulas=tuple(formulas),
            forward_formulas=tuple(forward), differentiable_inputs=differentiable_inputs,
            non_differentiable=tuple(non_differentiable),
            saved_inputs=_dedup(n for d in formulas for n in d.saved_inputs),
            saved_outputs=_dedup(n for d in formulas for n in d.saved_outputs),
            output_differentiability=differentiability, output_differentiability_conditions=conditions,
            differentiable_outputs=tuple(bool(d) and r.type.is_tensor_like() for r, d in zip(f.func.returns, flags)),
            location=where,
        )

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
    if not f.is_view_op or f.func.name.name.inplace or f.func.kind() is not SchemaKind.functional:
        return False
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
        if f.func.name not in covered and str(f.func.name) not in MANUAL_AUTOGRAD and needs_formula(f, model):
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
