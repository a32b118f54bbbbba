"""An external backend's yaml (pytorch/xla's ``xla_native_functions.yaml`` format) as kernel indices.

The file names a dispatch key and the operators the backend implements there (``supported``,
``full_codegen``) or at its autograd key (``autograd``).  A lazy-tensor backend (PyTorch's
``ts_native_functions.yaml`` format) also asks for IR nodes: one per ``full_codegen`` and
``ir_gen`` operator (``ir_gen``: the node only, no kernel) and one per ``non_native`` entry
(see lazy_ir.py).  Each listed operator gets a kernel in the
backend's C++ namespace named after the operator's C++ name (``add``, ``add_``, ``add_out``; plus
``_symint`` when listed under ``symint``), as backend stubs declare them.  Reading never changes
the model: ``BackendYaml.apply_to`` returns a new ``Model`` with the backend's indices added.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from functools import cached_property
from types import MappingProxyType
from typing import Any, Optional, Union

from ..errors import DiagnosticCollector, Location, OpgenError, SchemaError, did_you_mean
from ..yamlio import LocatedList, LocatedMap, load_located, read_located
from .backend import BackendIndex, BackendMetadata
from .dispatch_keys import COMPOSITE_KEYS, DispatchKey
from .grouping import VariantGroup
from .lazy_ir import IrNode, ir_class_name, native_ir_node, read_non_native
from .loader import ERROR_CAP, Model
from .native_function import cpp_name, describe_value
from .operator_set import unknown_operator_hint
from .schema import CPP_KEYWORDS, IDENTIFIER, OperatorName

# Lists whose operators get kernels, and the dispatch key family each one registers to.
KERNEL_LISTS = ("supported", "full_codegen", "autograd")
# Operator lists: the kernel lists, then ir_gen (an IR node without a kernel).
OPERATOR_LISTS = (*KERNEL_LISTS, "ir_gen")
# Type-checked, otherwise ignored.
IGNORED_KEYS = {"extra_headers": str}
KNOWN_KEYS = ("backend", "cpp_namespace", "class_name", *OPERATOR_LISTS, "non_native", "symint", "use_out_as_primary",
              "device_guard", *IGNORED_KEYS)
MAX_NAMESPACE_DEPTH = 2  # backend stubs open at most `namespace a { namespace b {`


@dataclass(frozen=True)
class BackendYaml:
    source: str
    backend_key: DispatchKey
    autograd_key: Optional[DispatchKey]  # None when opgen has no Autograd<backend> key
    cpp_namespace: str
    class_name: str
    backend_index: BackendIndex
    autograd_index: Optional[BackendIndex]
    # Lazy-tensor IR: the full_codegen operators (kernels generated, not hand-written) and every
    # IR node class the yaml asks for (full_codegen and ir_gen in yaml order, then non_native).
    full_codegen: frozenset[OperatorName] = frozenset()
    ir_nodes: tuple[IrNode, ...] = ()

    def ir_node(self, name: OperatorName) -> Optional[IrNode]:
        """The IR node of a native operator, None when it has none."""
        return self._native_ir_nodes.get(name)

    @cached_property
    def _native_ir_nodes(self) -> dict[OperatorName, IrNode]:
        return {node.schema.name: node for node in self.ir_nodes if not node.non_native}

    @property
    def indices(self) -> dict[DispatchKey, BackendIndex]:
        found = (self.backend_index, self.autograd_index)
        return {index.dispatch_key: index for index in found if index is not None}

    def apply_to(self, model: Model) -> Model:
        """A new model with this backend's indices; ``model`` itself stays as it was."""
        taken = [str(key) for key in self.indices if key in model.indices]
        if taken:
            raise OpgenError(f"the model already has kernels for {', '.join(taken)}; an external backend needs "
                             f"dispatch keys of its own", Location(self.source, 0))
        return replace(model, indices={**model.indices, **self.indices})


@dataclass(frozen=True)
class _Listed:
    """One operator of a kernel list, with where it was written."""
    name: OperatorName
    list_key: str
    location: Location


def parse_backend_yaml(source: Union[str, os.PathLike], model: Model, display_name: Optional[str] = None) -> BackendYaml:
    """Read and validate a backend yaml against ``model``; raises OpgenError listing every problem.

    ``source`` is yaml text when it is a str with a newline in it, otherwise a path.
    """
    if isinstance(source, str) and "\n" in source:
        name = display_name or "<backend yaml>"
        document = load_located(source, name)
    else:
        name = display_name or os.fspath(source)
        document = read_located(os.fspath(source), name)
    if not isinstance(document, LocatedMap):
        raise OpgenError("a backend yaml is a mapping with at least 'backend:' and 'cpp_namespace:'",
                         Location(name, getattr(document, "line", 1)))
    return _BackendReader(document, model).read()


def backend_summary(backend: BackendYaml) -> str:
    lines = [
        backend.source,
        f"  backend            {backend.backend_key}  (class {backend.cpp_namespace}::{backend.class_name})",
        "  kernels per dispatch key:",
    ]
    for key, index in backend.indices.items():
        symint = sum(meta.supports_symint() for meta in index.index.values())
        note = f"  ({symint} take SymInt)" if symint else ""
        lines.append(f"    {str(key):40s} {len(index.index):5d}{note}")
    if backend.ir_nodes:
        native = sum(not node.non_native for node in backend.ir_nodes)
        lines.append(f"  IR node classes    {len(backend.ir_nodes):5d}  ({native} of operators: {len(backend.full_codegen)} "
                     f"full_codegen, {native - len(backend.full_codegen)} ir_gen; {len(backend.ir_nodes) - native} non_native)")
    return "\n".join(lines) + "\n"


def _is_backend_key(key: DispatchKey) -> bool:
    # Composite, autograd and selection keys are stages of dispatch, not places kernels run.
    return key not in COMPOSITE_KEYS and key is not DispatchKey.BackendSelect and not key.value.startswith("Autograd")


class _BackendReader:
    """Checks one backend yaml, collecting every problem before anything is built."""

    def __init__(self, document: LocatedMap, model: Model):
        self.doc = document
        self.model = model
        self.errors = DiagnosticCollector(ERROR_CAP)

    def read(self) -> BackendYaml:
        self._check_keys()
        backend_name = self._required_string("backend", "the dispatch key it registers to, e.g. 'backend: XLA'")
        backend_key = self._backend_key(backend_name)
        namespace = self._namespace()
        class_name = self._class_name(backend_name)
        use_out_as_primary = self._flag("use_out_as_primary")
        device_guard = self._flag("device_guard")
        listed = self._kernel_lists()
        ir_gen = self._ir_gen(listed)
        symint = self._symint(listed)
        autograd_key = self._autograd_key(backend_name, backend_key, listed)
        self._check_variant_groups(listed)
        non_native = read_non_native(self.doc, self.errors)
        ir_listed = [e for e in listed.values() if e.list_key == "full_codegen"] + list(ir_gen.values())
        self._check_ir_class_names(ir_listed, non_native)
        self.errors.sort_by_location()
        self.errors.raise_if_any()

        def index(key: DispatchKey, list_keys: tuple[str, ...]) -> BackendIndex:
            table = {}
            for name, entry in listed.items():
                if entry.list_key in list_keys:
                    kernel = cpp_name(self.model.by_name[name].func) + ("_symint" if name in symint else "")
                    table[name] = BackendMetadata(kernel, structured=False, cpp_namespace=namespace)
            return BackendIndex(key, use_out_as_primary, True, device_guard, MappingProxyType(table))

        return BackendYaml(
            self.doc.file, backend_key, autograd_key, namespace, class_name,
            index(backend_key, ("supported", "full_codegen")),
            index(autograd_key, ("autograd",)) if autograd_key is not None else None,
            frozenset(name for name, entry in listed.items() if entry.list_key == "full_codegen"),
            self._ir_nodes(ir_listed, non_native, symint),
        )

    def _check_ir_class_names(self, ir_listed: list["_Listed"], non_native: list[IrNode]) -> None:
        native = {ir_class_name(entry.name): entry for entry in ir_listed}
        for node in non_native:
            entry = native.get(node.class_name)
            if entry is not None:
                self.errors.add(Location(self.doc.file, node.line),
                                f"non_native {node.schema.name} would be IR node class {node.class_name}, the class of "
                                f"{entry.name} (under '{entry.list_key}' at line {entry.location.line}); rename one")

    def _ir_nodes(self, ir_listed: list["_Listed"], non_native: list[IrNode],
                  symint: frozenset[OperatorName]) -> tuple[IrNode, ...]:
        native = [native_ir_node(self.model.by_name[e.name].func, e.list_key, e.location.line, e.name in symint)
                  for e in ir_listed]
        return tuple(native + non_native)

    # --- scalar settings --------------------------------------------------------------------

    def _check_keys(self) -> None:
        for key in self.doc:
            if key not in KNOWN_KEYS:
                hint = did_you_mean(str(key), KNOWN_KEYS)
                hint = f"{hint} " if hint else ""
                self.errors.add(self.doc.where(key), f"unknown key '{key}'; {hint}known keys: {', '.join(KNOWN_KEYS)}")
        for key, kind in IGNORED_KEYS.items():
            value = self.doc.get(key)
            if value is not None and not isinstance(value, kind):
                self.errors.add(self.doc.where(key), f"'{key}' must be a {kind.__name__}, got {describe_value(value)}")

    def _required_string(self, key: str, what: str) -> Optional[str]:
        if key not in self.doc:
            self.errors.add(self.doc.where(), f"missing '{key}:'; give {what}")
            return None
        value = self.doc[key]
        if not isinstance(value, str):
            self.errors.add(self.doc.where(key), f"'{key}' must be a string, got {describe_value(value)}")
            return None
        if not value.strip():
            self.errors.add(self.doc.where(key), f"'{key}' is empty; give {what}")
            return None
        return value

    def _backend_key(self, backend_name: Optional[str]) -> Optional[DispatchKey]:
        if backend_name is None:
            return None
        key = DispatchKey.lookup(backend_name)
        if key is None or not _is_backend_key(key):
            choices = sorted(k.value for k in DispatchKey if _is_backend_key(k))
            hint = did_you_mean(backend_name, choices, f"use one of {', '.join(choices)}")
            self.errors.add(self.doc.where("backend"), f"backend '{backend_name}' is not a backend dispatch key; {hint}")
            return None
        if key in self.model.indices:
            self.errors.add(self.doc.where("backend"), f"{self.model.source} already has kernels for {key}; "
                                                       f"an external backend needs a dispatch key of its own (e.g. XLA)")
        return key

    def _namespace(self) -> Optional[str]:
        namespace = self._required_string("cpp_namespace", "the C++ namespace of its kernels, e.g. 'cpp_namespace: torch_xla'")
        if namespace is None:
            return None
        parts = namespace.split("::")
        bad = [p for p in parts if not IDENTIFIER.match(p) or p in CPP_KEYWORDS]
        if bad:
            self.errors.add(self.doc.where("cpp_namespace"),
                            f"cpp_namespace '{namespace}' is not a C++ namespace ('{bad[0]}' is no identifier); write e.g. 'torch_xla'")
        elif len(parts) > MAX_NAMESPACE_DEPTH:
            self.errors.add(self.doc.where("cpp_namespace"),
                            f"cpp_namespace '{namespace}' is {len(parts)} levels deep; use at most {MAX_NAMESPACE_DEPTH}, "
                            f"e.g. '{'::'.join(parts[:MAX_NAMESPACE_DEPTH])}'")
        return namespace

    def _class_name(self, backend_name: Optional[str]) -> str:
        default = f"{backend_name}NativeFunctions"
        value = self.doc.get("class_name")
        if value is None:
            return default
        if not isinstance(value, str) or not IDENTIFIER.match(value) or value in CPP_KEYWORDS:
            self.errors.add(self.doc.where("class_name"),
                            f"'class_name' must be a C++ class name, got {describe_value(value)}; omit it for {default}")
            return default
        return value

    def _flag(self, key: str) -> bool:
        value = self.doc.get(key, False)
        if not isinstance(value, bool):
            self.errors.add(self.doc.where(key), f"'{key}' must be True or False, got {describe_value(value)}")
            return False
        return value

    # --- operator lists ---------------------------------------------------------------------

    def _operators(self, key: str) -> list[tuple[OperatorName, Location]]:
        """The valid, known operators of one list; problems go to the collector."""
        items = self.doc.get(key)
        if items is None:  # `supported:` with nothing under it is an empty list
            return []
        if not isinstance(items, LocatedList):
            self.errors.add(self.doc.where(key), f"'{key}' must be a list of operator names, got {describe_value(items)}")
            return []
        found = []
        for text, line in zip(items, items.item_lines):
            location = Location(self.doc.file, line)
            name = self._operator(text, key, location)
            if name is not None:
                found.append((name, location))
        return found

    def _operator(self, text: Any, key: str, location: Location) -> Optional[OperatorName]:
        if not isinstance(text, str):
            self.errors.add(location, f"'{key}' lists {describe_value(text)}; write operator names such as add.Tensor")
            return None
        try:
            name = OperatorName.parse(text)
        except SchemaError as exc:
            self.errors.add(location, f"'{text}' is not an operator name ({exc.diagnostics[0].message}); "
                                      f"write it as native_functions.yaml does, e.g. add.Tensor")
            return None
        if name not in self.model.by_name:
            self.errors.add(location, unknown_operator_hint(text, self.model.by_name, self.model.source))
            return None
        return name

    def _kernel_lists(self) -> dict[OperatorName, _Listed]:
        listed: dict[OperatorName, _Listed] = {}
        for key in KERNEL_LISTS:
            for name, location in self._operators(key):
                first = listed.get(name)
                if first is not None:
                    # Name the entry written first as "first", whichever list was read first.
                    earlier, later = sorted((first, _Listed(name, key, location)), key=lambda e: e.location.line)
                    self.errors.add(later.location, f"{name} is listed twice (first under '{earlier.list_key}' at line "
                                                    f"{earlier.location.line}); remove one")
                    continue
                listed[name] = _Listed(name, key, location)
        return listed

    def _ir_gen(self, listed: dict[OperatorName, _Listed]) -> dict[OperatorName, _Listed]:
        """ir_gen: operators that get an IR node but whose kernel is hand-written (or absent)."""
        found: dict[OperatorName, _Listed] = {}
        for name, location in self._operators("ir_gen"):
            first = found.get(name) or listed.get(name)
            if first is not None and first.list_key in ("ir_gen", "full_codegen"):
                self.errors.add(location, f"{name} is listed twice (first under '{first.list_key}' at line "
                                          f"{first.location.line}); full_codegen already generates its IR node, remove one")
                continue
            found[name] = _Listed(name, "ir_gen", location)
        return found

    def _symint(self, listed: dict[OperatorName, _Listed]) -> frozenset[OperatorName]:
        seen: dict[OperatorName, Location] = {}
        for name, location in self._operators("symint"):
            if name in seen:
                self.errors.add(location, f"{name} is listed twice under 'symint' (first at line {seen[name].line}); remove one")
            elif name not in listed:
                self.errors.add(location, f"'symint' lists {name}, which has no kernel here; add it to "
                                          f"'supported', 'full_codegen' or 'autograd', or remove it")
            seen.setdefault(name, location)
        return frozenset(seen)

    def _autograd_key(self, backend_name: Optional[str], backend_key: Optional[DispatchKey],
                      listed: dict[OperatorName, _Listed]) -> Optional[DispatchKey]:
        if backend_key is None:
            return None
        key = DispatchKey.lookup(f"Autograd{backend_name}")
        if key is None and any(entry.list_key == "autograd" for entry in listed.values()):
            self.errors.add(self.doc.where("autograd"), f"'autograd' registers to Autograd{backend_name}, a dispatch key "
                                                        f"opgen does not know; move these operators to 'supported'")
        return key

    def _check_variant_groups(self, listed: dict[OperatorName, _Listed]) -> None:
        # One variant group shares one registration path; half of it behind autograd would dispatch unevenly.
        for group in self.model.variant_groups:
            if not isinstance(group, VariantGroup):
                continue
            entries = [listed[f.func.name] for f in group.functions() if f.func.name in listed]
            forward = [e for e in entries if e.list_key in ("supported", "full_codegen")]
            backward = [e for e in entries if e.list_key == "autograd"]
            if forward and backward:
                first = min(forward, key=lambda e: e.location.line)
                for entry in backward:
                    self.errors.add(entry.location, f"{entry.name} is under 'autograd' but its variant {first.name} is under "
                                                    f"'{first.list_key}' (line {first.location.line}); list every variant "
                                                    f"of one group under the same key")
