"""One ``native_functions.yaml`` entry -> a frozen, backend-agnostic ``NativeFunction``.

The entry's dispatch table is returned separately as (key, kernel) pairs so the
loader can build ``BackendIndex``es; nothing about backends stays on the function.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from enum import Enum
from typing import Any, Optional

from ..errors import Diagnostic, Location, OpgenError, SchemaError, did_you_mean
from ..yamlio import LocatedMap
from .backend import BackendMetadata
from .dispatch_keys import COMPOSITE_KEYS, IN_TREE_KEYS, STRUCTURED_KEYS, UFUNC_KEYS, DispatchKey
from .schema import CPP_KEYWORDS, IDENTIFIER, Argument, FunctionSchema, OperatorName, SchemaKind

KNOWN_KEYS = (
    "func", "variants", "dispatch", "structured", "structured_delegate", "structured_inherits",
    "precomputed", "device_check", "device_guard", "manual_kernel_registration", "manual_cpp_binding",
    "python_module", "category_override", "tags", "autogen", "cpp_no_default_args",
    "use_const_ref_for_mutable_tensors", "ufunc_inner_loop",
)
UFUNC_LOOP_KEYS = ("CUDAFunctor", "CUDAFunctorOnOther", "CUDAFunctorOnSelf", "CPUScalar", "CPUVector", "ScalarOnly", "Generic")
_UFUNC_LOOP = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*) \(([A-Za-z0-9]+(?:, [A-Za-z0-9]+)*)\)$")
_KERNEL_PATH = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*::){0,2}[A-Za-z_][A-Za-z0-9_]*$")


class DeviceCheck(Enum):
    ExactSame = "ExactSame"
    NoCheck = "NoCheck"


class ViewKind(Enum):
    non_aliasing = "non_aliasing"
    aliasing = "aliasing"
    aliasing_inplace = "aliasing_inplace"


@dataclass(frozen=True)
class Precompute:
    """``precomputed:`` of a structured kernel: replaced arguments, then added ones."""

    replace: tuple[tuple[str, tuple[Argument, ...]], ...]
    add: tuple[Argument, ...]


@dataclass(frozen=True)
class NativeFunction:
    namespace: str
    func: FunctionSchema
    location: Location
    variants: tuple[str, ...]  # sorted subset of ("function", "method")
    structured: bool
    structured_delegate: Optional[OperatorName]
    structured_inherits: Optional[str]
    precomputed: Optional[Precompute]
    device_check: DeviceCheck
    device_guard: bool
    manual_kernel_registration: bool
    manual_cpp_binding: bool
    python_module: Optional[str]
    category_override: Optional[str]
    tags: tuple[str, ...]  # sorted
    autogen: tuple[OperatorName, ...]
    cpp_no_default_args: tuple[str, ...]  # sorted
    use_const_ref_for_mutable_tensors: bool
    ufunc_inner_loop: tuple[tuple[str, str, tuple[str, ...]], ...]  # (ufunc key, loop name, dtypes)

    @property
    def name(self) -> OperatorName:
        return self.func.name

    @cached_property
    def key(self) -> str:
        """How JSON dumps, listings and the autograd model name it: add.Tensor in aten, else
        myops::scale. Remembered: the autograd plan asks it of every function several times."""
        return str(self.func.name) if self.namespace == "aten" else f"{self.namespace}::{self.func.name}"

    @property
    def root_name(self) -> str:
        """The operator group this function belongs to: add_, add.out, __iadd__ -> 'add'."""
        return self.func.name.name.base

    @property
    def generated(self) -> bool:
        return "generated" in self.tags

    @property
    def part_of_structured_group(self) -> bool:
        return self.structured or self.structured_delegate is not None

    @cached_property
    def is_view_op(self) -> bool:
        """Remembered: grouping asks it of every function before the parse cache stores the model,
        so a loaded model knows it (the autograd checks ask it of every function again)."""
        rets = self.func.returns
        aliasing_return = any(r.annotation is not None and not r.annotation.is_write for r in rets)
        inplace_view = "inplace_view" in self.tags and str(self.func.name) not in ("resize_", "resize_as_")
        wildcard = any(a.annotation is not None and "*" in a.annotation.alias_set_after for a in self.func.arguments.all())
        return aliasing_return or inplace_view or wildcard

    @property
    def view_kind(self) -> ViewKind:
        if not self.is_view_op:
            return ViewKind.non_aliasing
        return ViewKind.aliasing_inplace if self.func.name.name.inplace else ViewKind.aliasing


KernelTable = list[tuple[DispatchKey, BackendMetadata]]


class _Entry:
    """Typed access to one yaml mapping; errors point at the offending key.

    Parts of an entry that do not depend on each other are parsed with ``attempt``, so one run
    reports every problem of the entry; ``broken`` names the keys whose values are unknown, so
    that checks which need them stay quiet instead of blaming a default.
    """

    def __init__(self, raw: LocatedMap):
        self.raw = raw
        self.problems: list[Diagnostic] = []
        self.broken: set[str] = set()

    def where(self, key: str | None = None) -> Location:
        return self.raw.where(key)

    def error(self, key: str | None, message: str) -> OpgenError:
        return OpgenError(message, self.where(key))

    def report(self, key: str | None, message: str, where: Optional[Location] = None) -> None:
        self.problems.append(Diagnostic(where or self.where(key), message))

    def attempt(self, key: str, default: Any, parse, *args: Any) -> Any:
        """``parse(*args)``, or ``default`` after recording its error (and ``key`` as broken)."""
        try:
            return parse(*args)
        except OpgenError as exc:
            self.problems.extend(Diagnostic(d.location or self.where(key), d.message) for d in exc.diagnostics)
            self.broken.add(key)
            return default

    def ok(self, *keys: str) -> bool:
        """Whether every one of ``keys`` parsed (or was absent)."""
        return self.broken.isdisjoint(keys)

    def raise_problems(self) -> None:
        if self.problems:
            raise OpgenError(sorted(self.problems, key=lambda d: d.location))

    def get(self, key: str, kind: type | tuple[type, ...], default: Any, what: str) -> Any:
        if key not in self.raw:
            return default
        value = self.raw[key]
        if not isinstance(value, kind):
            raise self.error(key, f"'{key}' must be {what}, got {describe_value(value)}")
        return value


def describe_value(value: Any) -> str:
    """How error messages name a yaml value: "a list", "a mapping", "str 'CPU'"."""
    if isinstance(value, (dict, list)):
        return f"a {'mapping' if isinstance(value, dict) else 'list'}"
    return f"{type(value).__name__} {value!r}"


def cpp_name(func: FunctionSchema) -> str:
    """The C++ function name torchgen's conventions give a schema: add_, add_out ..."""
    return str(func.name.name) + ("_out" if func.is_out_fn() else "")


def parse_entry(raw: LocatedMap, valid_tags: frozenset[str]) -> tuple[NativeFunction, KernelTable]:
    """The entry as a function and its kernels; raises OpgenError with every problem found in it."""
    e = _Entry(raw)
    for key in raw:
        if key not in KNOWN_KEYS:
            e.report(key, f"unknown key '{key}'; " + did_you_mean(str(key), KNOWN_KEYS, f"known keys: {', '.join(KNOWN_KEYS)}"))
            e.broken.add(key)
    if "func" not in raw:
        e.report(None, "entry has no 'func:' key; every entry starts with '- func: name(ARGS) -> RETURNS'")
        e.raise_problems()
    namespace, func = e.attempt("func", ("aten", None), _parse_func, e)

    variants = e.attempt("variants", ("function",), _parse_variants, e)
    structured = e.attempt("structured", False, e.get, "structured", bool, False, "True or False")
    delegate = e.attempt("structured_delegate", None, _parse_operator_name, e, "structured_delegate")
    if func is not None:
        e.attempt("structured_delegate", None, _check_structured_or_delegate, e, func, structured, delegate)
    inherits = e.attempt("structured_inherits", None, _parse_inherits, e)
    python_module = e.attempt("python_module", None, e.get, "python_module", str, None, "a module name")
    if python_module is not None and "method" in variants:
        e.report("python_module", "functions in a python_module cannot be methods; drop 'method' from variants")
    category = e.attempt("category_override", None, e.get, "category_override", str, None, "a string")
    device_check = e.attempt("device_check", DeviceCheck.ExactSame, _parse_device_check, e)
    device_guard = e.attempt("device_guard", True, e.get, "device_guard", bool, True, "True or False")
    manual_registration = e.attempt("manual_kernel_registration", False, e.get, "manual_kernel_registration", bool, False, "True or False")
    manual_binding = e.attempt("manual_cpp_binding", False, e.get, "manual_cpp_binding", bool, False, "True or False")
    const_ref = e.attempt("use_const_ref_for_mutable_tensors", False, e.get, "use_const_ref_for_mutable_tensors", bool, False, "True or False")
    if const_ref and func is not None and func.arguments.out:
        e.report("use_const_ref_for_mutable_tensors", "use_const_ref_for_mutable_tensors is not supported on out= functions")
    no_default_args = e.attempt("cpp_no_default_args", [], e.get, "cpp_no_default_args", list, [], "a list of argument names")
    precomputed = None
    if func is not None and e.ok("structured"):
        precomputed = e.attempt("precomputed", None, _parse_precomputed, e, func, structured)
    tags = e.attempt("tags", (), _parse_tags, e, func, namespace, valid_tags)
    autogen = e.attempt("autogen", (), _parse_autogen, e)
    ufunc_loops = e.attempt("ufunc_inner_loop", (), _parse_ufunc, e, structured) if e.ok("structured") else ()
    kernels = _parse_dispatch(e, func, structured, delegate, manual_registration)
    if ufunc_loops and func is not None:
        for key in UFUNC_KEYS:
            if any(k is key for k, _ in kernels):
                e.report("dispatch", f"a ufunc_inner_loop function must not list {key} in dispatch; it is generated")
            kernels.append((key, BackendMetadata(f"ufunc_{func.name.name}_{key}", True)))
    if func is None:
        e.raise_problems()

    f = NativeFunction(
        namespace=namespace, func=func, location=e.where(), variants=variants, structured=structured,
        structured_delegate=delegate, structured_inherits=inherits, precomputed=precomputed,
        device_check=device_check, device_guard=device_guard, manual_kernel_registration=manual_registration,
        manual_cpp_binding=manual_binding, python_module=python_module, category_override=category,
        tags=tags, autogen=autogen, cpp_no_default_args=tuple(sorted(map(str, no_default_args))),
        use_const_ref_for_mutable_tensors=const_ref, ufunc_inner_loop=ufunc_loops,
    )
    # Rules across keys: only where each key they read parsed, so none of them blames a default.
    if e.ok("variants", "structured", "structured_delegate", "device_guard", "cpp_no_default_args",
            "structured_inherits", "device_check", "tags"):
        _check_function(e, f, kernels)
    e.raise_problems()
    return f, kernels


def _parse_func(e: _Entry) -> tuple[str, FunctionSchema]:
    func_text = e.get("func", str, None, "a schema string")
    head, paren, rest = func_text.partition("(")  # a '::' inside the arguments (a str default) is no namespace
    namespace, sep, name_text = head.rpartition("::")
    schema_text = name_text + paren + rest
    if sep and not IDENTIFIER.match(namespace):
        raise e.error("func", f"namespace '{namespace}' must be one identifier, e.g. 'myops::relu(...)'")
    try:
        func = FunctionSchema.parse(schema_text)
    except SchemaError as exc:
        raise exc.at(e.where("func")) from None
    return namespace or "aten", func


def _parse_inherits(e: _Entry) -> Optional[str]:
    inherits = e.get("structured_inherits", str, None, "a C++ class name")
    if inherits is not None and not IDENTIFIER.match(inherits):
        raise e.error("structured_inherits", f"'{inherits}' is not a C++ identifier")
    return inherits


def _parse_device_check(e: _Entry) -> DeviceCheck:
    text = e.get("device_check", str, "ExactSame", "ExactSame or NoCheck")
    if text not in DeviceCheck.__members__:
        raise e.error("device_check", f"device_check must be ExactSame or NoCheck, got '{text}'")
    return DeviceCheck[text]


def _check_structured_or_delegate(e: _Entry, func: FunctionSchema, structured: bool, delegate: Optional[OperatorName]) -> None:
    # Checked before the dispatch table: otherwise the conflict surfaces as an unrelated dispatch complaint.
    if structured and delegate is not None:
        raise e.error(None, f"{func.name} is structured and also has structured_delegate: {delegate}; an out= operator "
                            "with structured: True implements the kernel, its functional/in-place variants delegate to it")


def _parse_variants(e: _Entry) -> tuple[str, ...]:
    text = e.get("variants", str, "function", "'function', 'method' or 'function, method'")
    variants = set()
    for v in text.split(", "):
        if v not in ("function", "method"):
            raise e.error("variants", f"unknown variant '{v}'; use 'function', 'method' or 'function, method'")
        variants.add(v)
    return tuple(sorted(variants))


def _parse_operator_name(e: _Entry, key: str) -> Optional[OperatorName]:
    text = e.get(key, str, None, "an operator name such as add.out")
    if text is None:
        return None
    if "::" in text:
        raise e.error(key, f"{key} names an operator of the same namespace; drop the 'ns::' prefix")
    try:
        return OperatorName.parse(text)
    except SchemaError as exc:
        raise exc.at(e.where(key)) from None


def _parse_precomputed(e: _Entry, func: FunctionSchema, structured: bool) -> Optional[Precompute]:
    items = e.get("precomputed", list, None, "a list like ['kernel_size -> int kH, int kW']")
    if items is None:
        return None
    if not structured:
        raise e.error("precomputed", "precomputed requires structured: True")
    arg_names = {a.name for a in func.arguments.all()}
    try:
        add: tuple[Argument, ...] = ()
        if items and " -> " not in str(items[-1]):
            add = tuple(Argument.parse(x.strip()) for x in str(items[-1]).split(","))
            items = items[:-1]
        replace = []
        for item in items:
            if not isinstance(item, str) or " -> " not in item:
                raise SchemaError(f"precomputed entry {item!r} must be 'arg -> type name[, type name]'; additions without '->' go last")
            arg, new_args = item.split(" -> ", 1)
            if arg not in arg_names:
                raise SchemaError(f"precomputed replaces '{arg}', which is not an argument of {func.name}")
            replace.append((arg, tuple(Argument.parse(x.strip()) for x in new_args.split(","))))
    except SchemaError as exc:
        raise exc.at(e.where("precomputed")) from None
    return Precompute(tuple(replace), add)


def _parse_tags(e: _Entry, func: Optional[FunctionSchema], namespace: str, valid_tags: frozenset[str]) -> tuple[str, ...]:
    raw = e.get("tags", (str, list), [], "a tag or a list of tags")
    tags = [raw] if isinstance(raw, str) else list(raw)
    for tag in tags:
        if not isinstance(tag, str) or tag not in valid_tags:
            hint = did_you_mean(tag, valid_tags) if isinstance(tag, str) else ""
            raise e.error("tags", f"unknown tag {tag!r}; {hint + ' ' if hint else ''}tags must be declared in tags.yaml")
    if func is None:
        return tuple(sorted(set(tags)))
    # Tags torchgen attaches implicitly, when tags.yaml declares them.
    implicit = [("pt2_compliant_tag", namespace == "aten"), ("out", func.is_out_fn()), ("inplace", func.name.name.inplace)]
    tags.extend(tag for tag, applies in implicit if applies and tag in valid_tags)
    return tuple(sorted(set(tags)))


def _parse_autogen(e: _Entry) -> tuple[OperatorName, ...]:
    text = e.get("autogen", str, "", "a comma-separated list of operator names")
    if not text:
        return ()
    try:
        return tuple(OperatorName.parse(x) for x in text.split(", "))
    except SchemaError as exc:
        raise exc.at(e.where("autogen")) from None


def _parse_ufunc(e: _Entry, structured: bool) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    raw = e.get("ufunc_inner_loop", (str, dict), None, "a loop spec or a mapping of ufunc keys to loop specs")
    if raw is None:
        return ()
    if not structured:
        raise e.error("ufunc_inner_loop", "ufunc_inner_loop requires structured: True")
    pairs = {"Generic": raw} if isinstance(raw, str) else raw
    loops = []
    for key, spec in pairs.items():
        m = _UFUNC_LOOP.match(spec) if isinstance(spec, str) else None
        if key not in UFUNC_LOOP_KEYS or m is None:
            raise e.error("ufunc_inner_loop", f"ufunc_inner_loop entry {key}: {spec!r} must be KEY: 'name (Dtype, ...)' with KEY one of {', '.join(UFUNC_LOOP_KEYS)}")
        loops.append((key, m.group(1), tuple(m.group(2).split(", "))))
    return tuple(sorted(loops))


def _parse_dispatch(e: _Entry, func: Optional[FunctionSchema], structured: bool, delegate: Optional[OperatorName],
                    manual: bool) -> KernelTable:
    """The dispatch table; each row's problems are reported and the row skipped. Without ``func``
    (its schema did not parse) only the rows themselves are checked."""
    raw = e.attempt("dispatch", None, e.get, "dispatch", dict, None, "a mapping of dispatch keys to kernel names")
    # What the table must hold depends on these; when one of them is broken, judge only the rows.
    settled = e.ok("structured", "structured_delegate", "manual_kernel_registration")
    if raw is None:
        if not settled or "dispatch" in e.broken or func is None or structured or delegate is not None:
            return []
        expected = cpp_name(func)
        name = str(func.name.name)
        if name.startswith("new_") or name.endswith("_like") or (func.arguments.has_tensor_options and not func.arguments.has_tensor_arg()):
            e.report(None, f"factory function {func.name} needs a dispatch table (e.g. CompositeExplicitAutograd: {expected}); factories must not decompose implicitly")
            return []
        return [(DispatchKey.CompositeImplicitAutograd, BackendMetadata(expected, False))]
    if manual:
        e.report("dispatch", "manual_kernel_registration and dispatch cannot be combined; with manual registration the dispatch table has no effect")
        return []
    kernels: KernelTable = []
    line = e.where("dispatch")
    redundant_implicit = False
    rows_ok = True
    for keys, kernel in raw.items():
        where = raw.where(keys) if isinstance(raw, LocatedMap) else line
        problems = len(e.problems)
        _check_dispatch_row(e, keys, kernel, where)
        if len(e.problems) > problems:
            rows_ok = False
            continue
        namespace, _, kernel_name = kernel.rpartition("::")
        for key_text in keys.split(","):
            key = DispatchKey.lookup(key_text.strip())
            if key is None or key not in IN_TREE_KEYS:
                known = sorted(k.value for k in IN_TREE_KEYS)
                hint = did_you_mean(key_text.strip(), known, f"known keys: {', '.join(known)}")
                e.report(None, f"unknown dispatch key '{key_text.strip()}' for kernel {kernel}; {hint}", where)
                rows_ok = False
                continue
            if any(k is key for k, _ in kernels):
                e.report(None, f"dispatch key {key} is listed twice", where)
                rows_ok = False
                continue
            kernels.append((key, BackendMetadata(kernel_name, structured and key in STRUCTURED_KEYS,
                                                 f"{namespace or 'at'}::native")))
            redundant_implicit |= func is not None and key is DispatchKey.CompositeImplicitAutograd and kernel == cpp_name(func)
    if rows_ok and settled and func is not None:
        _check_dispatch_table(e, func, kernels, redundant_implicit, delegate)
    return kernels


def _check_dispatch_row(e: _Entry, keys: Any, kernel: Any, where: Location) -> None:
    if not isinstance(keys, str) or not isinstance(kernel, str):
        e.report(None, f"dispatch entries must be 'Key1, Key2: kernel_name', got {keys!r}: {kernel!r}", where)
        return
    if not _KERNEL_PATH.match(kernel):
        e.report(None, f"kernel name '{kernel}' is not a C++ identifier (optionally 'ns::' qualified, at most 2 levels)", where)
        return
    kernel_name = kernel.rpartition("::")[2]
    if kernel_name in CPP_KEYWORDS:
        e.report(None, f"kernel name '{kernel_name}' is a C++ keyword; choose another name", where)


def _check_dispatch_table(e: _Entry, func: FunctionSchema, kernels: KernelTable, redundant_implicit: bool,
                          delegate: Optional[OperatorName]) -> None:
    """Rules about the table as a whole, once every row is valid."""
    expected = cpp_name(func)
    if len(kernels) == 1 and redundant_implicit:
        e.report("dispatch", "unnecessary dispatch table: CompositeImplicitAutograd is the default for this kernel name; delete the dispatch table")
    elif (len(kernels) == 1 and kernels[0][0] is DispatchKey.CompositeImplicitAutograd and delegate is None
            and not kernels[0][1].supports_symint()):
        e.report("dispatch", f"a lone CompositeImplicitAutograd kernel must be named {expected} (then delete the dispatch table), got {kernels[0][1].kernel}")
    composites = {k for k, _ in kernels if k in COMPOSITE_KEYS}
    allowed_pair = len(composites) == 2 and DispatchKey.CompositeImplicitAutogradNestedTensor in composites \
        and DispatchKey.CompositeExplicitAutogradNonFunctional not in composites
    if len(composites) > 1 and not allowed_pair:
        e.report("dispatch", "give at most one of CompositeExplicitAutograd, CompositeExplicitAutogradNonFunctional and CompositeImplicitAutograd; each subsumes the others")
    if delegate is not None:
        for key, _ in kernels:
            if key in STRUCTURED_KEYS:
                e.report("dispatch", f"a structured_delegate function must not list {key} in dispatch; its kernel comes from the delegate")
                break


def _check_function(e: _Entry, f: NativeFunction, kernels: KernelTable) -> None:
    func = f.func
    kind = func.kind()
    if func.arguments.out and f.variants != ("function",):
        e.report("variants", "functions with out arguments must have 'variants: function' only")
    if f.structured:
        if kind is not SchemaKind.out:
            e.report("structured", "put 'structured: True' on the out= variant; the others use structured_delegate")
        if not f.device_guard:
            e.report("device_guard", "device_guard: False is not supported by structured kernels")
    if f.structured_delegate is not None:
        if kind is SchemaKind.out:
            e.report("structured_delegate", "out= functions cannot have structured_delegate; did you mean 'structured: True'?")
        if not f.device_guard:
            e.report("device_guard", "device_guard: False is not supported by structured kernels")
    defaulted = {a.name for a in func.arguments.all() if a.default is not None}
    invalid = sorted(set(f.cpp_no_default_args) - defaulted)
    if invalid:
        e.report("cpp_no_default_args", f"cpp_no_default_args names arguments without defaults: {', '.join(invalid)}")
    if f.structured_inherits is not None and not f.structured:
        e.report("structured_inherits", "structured_inherits requires structured: True")
    if str(func.name).startswith("_foreach") and f.device_check is not DeviceCheck.NoCheck:
        e.report("device_check", "_foreach functions must use 'device_check: NoCheck'")
    name = str(func.name)
    dropout = ("dropout" in name or any("dropout" in a.name for a in func.arguments.all())) \
        and "backward" not in name and str(func.name.name) != "_cudnn_init_dropout_state"
    if ("rand" in name or dropout or func.arguments.has_generator_arg()) and "nondeterministic_seeded" not in f.tags:
        e.report("tags", f"{name} looks random; add 'tags: nondeterministic_seeded'")
