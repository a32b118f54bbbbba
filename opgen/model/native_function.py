"""One ``native_functions.yaml`` entry -> a frozen, backend-agnostic ``NativeFunction``.

The entry's dispatch table is returned separately as (key, kernel) pairs so the
loader can build ``BackendIndex``es; nothing about backends stays on the function.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Any, Optional

from ..errors import Location, OpgenError, SchemaError
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

    @property
    def is_view_op(self) -> bool:
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
    """Typed access to one yaml mapping; errors point at the offending key."""

    def __init__(self, raw: LocatedMap):
        self.raw = raw

    def where(self, key: str | None = None) -> Location:
        return self.raw.where(key)

    def error(self, key: str | None, message: str) -> OpgenError:
        return OpgenError(message, self.where(key))

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
    e = _Entry(raw)
    unknown = [k for k in raw if k not in KNOWN_KEYS]
    if unknown:
        raise e.error(unknown[0], f"unknown key '{unknown[0]}'; known keys: {', '.join(KNOWN_KEYS)}")
    if "func" not in raw:
        raise e.error(None, "entry has no 'func:' key; every entry starts with '- func: name(ARGS) -> RETURNS'")
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
    namespace = namespace or "aten"

    variants = _parse_variants(e)
    structured = e.get("structured", bool, False, "True or False")
    delegate = _parse_operator_name(e, "structured_delegate")
    _check_structured_or_delegate(e, func, structured, delegate)
    inherits = e.get("structured_inherits", str, None, "a C++ class name")
    if inherits is not None and not IDENTIFIER.match(inherits):
        raise e.error("structured_inherits", f"'{inherits}' is not a C++ identifier")
    python_module = e.get("python_module", str, None, "a module name")
    if python_module is not None and "method" in variants:
        raise e.error("python_module", "functions in a python_module cannot be methods; drop 'method' from variants")
    category = e.get("category_override", str, None, "a string")
    device_check_text = e.get("device_check", str, "ExactSame", "ExactSame or NoCheck")
    if device_check_text not in DeviceCheck.__members__:
        raise e.error("device_check", f"device_check must be ExactSame or NoCheck, got '{device_check_text}'")
    device_check = DeviceCheck[device_check_text]
    device_guard = e.get("device_guard", bool, True, "True or False")
    manual_registration = e.get("manual_kernel_registration", bool, False, "True or False")
    manual_binding = e.get("manual_cpp_binding", bool, False, "True or False")
    const_ref = e.get("use_const_ref_for_mutable_tensors", bool, False, "True or False")
    if const_ref and func.arguments.out:
        raise e.error("use_const_ref_for_mutable_tensors", "use_const_ref_for_mutable_tensors is not supported on out= functions")
    no_default_args = e.get("cpp_no_default_args", list, [], "a list of argument names")
    precomputed = _parse_precomputed(e, func, structured)
    tags = _parse_tags(e, func, namespace, valid_tags)
    autogen = _parse_autogen(e)
    ufunc_loops = _parse_ufunc(e, structured)
    kernels = _parse_dispatch(e, func, structured, delegate, manual_registration)
    if ufunc_loops:
        for key in UFUNC_KEYS:
            if any(k is key for k, _ in kernels):
                raise e.error("dispatch", f"a ufunc_inner_loop function must not list {key} in dispatch; it is generated")
            kernels.append((key, BackendMetadata(f"ufunc_{func.name.name}_{key}", True)))

    f = NativeFunction(
        namespace=namespace, func=func, location=e.where(), variants=variants, structured=structured,
        structured_delegate=delegate, structured_inherits=inherits, precomputed=precomputed,
        device_check=device_check, device_guard=device_guard, manual_kernel_registration=manual_registration,
        manual_cpp_binding=manual_binding, python_module=python_module, category_override=category,
        tags=tags, autogen=autogen, cpp_no_default_args=tuple(sorted(map(str, no_default_args))),
        use_const_ref_for_mutable_tensors=const_ref, ufunc_inner_loop=ufunc_loops,
    )
    _check_function(e, f, kernels)
    return f, kernels


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


def _parse_tags(e: _Entry, func: FunctionSchema, namespace: str, valid_tags: frozenset[str]) -> tuple[str, ...]:
    raw = e.get("tags", (str, list), [], "a tag or a list of tags")
    tags = [raw] if isinstance(raw, str) else list(raw)
    for tag in tags:
        if not isinstance(tag, str) or tag not in valid_tags:
            raise e.error("tags", f"unknown tag {tag!r}; tags must be declared in tags.yaml")
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


def _parse_dispatch(e: _Entry, func: FunctionSchema, structured: bool, delegate: Optional[OperatorName], manual: bool) -> KernelTable:
    raw = e.get("dispatch", dict, None, "a mapping of dispatch keys to kernel names")
    expected = cpp_name(func)
    if raw is None:
        if structured or delegate is not None:
            return []
        name = str(func.name.name)
        if name.startswith("new_") or name.endswith("_like") or (func.arguments.has_tensor_options and not func.arguments.has_tensor_arg()):
            raise e.error(None, f"factory function {func.name} needs a dispatch table (e.g. CompositeExplicitAutograd: {expected}); factories must not decompose implicitly")
        return [(DispatchKey.CompositeImplicitAutograd, BackendMetadata(expected, False))]
    if manual:
        raise e.error("dispatch", "manual_kernel_registration and dispatch cannot be combined; with manual registration the dispatch table has no effect")
    kernels: KernelTable = []
    line = e.where("dispatch")
    redundant_implicit = False
    for keys, kernel in raw.items():
        where = raw.where(keys) if isinstance(raw, LocatedMap) else line
        if not isinstance(keys, str) or not isinstance(kernel, str):
            raise OpgenError(f"dispatch entries must be 'Key1, Key2: kernel_name', got {keys!r}: {kernel!r}", where)
        if not _KERNEL_PATH.match(kernel):
            raise OpgenError(f"kernel name '{kernel}' is not a C++ identifier (optionally 'ns::' qualified, at most 2 levels)", where)
        namespace, _, kernel_name = kernel.rpartition("::")
        if kernel_name in CPP_KEYWORDS:
            raise OpgenError(f"kernel name '{kernel_name}' is a C++ keyword; choose another name", where)
        for key_text in keys.split(","):
            key = DispatchKey.lookup(key_text.strip())
            if key is None or key not in IN_TREE_KEYS:
                known = ", ".join(sorted(k.value for k in IN_TREE_KEYS))
                raise OpgenError(f"unknown dispatch key '{key_text.strip()}' for kernel {kernel}; known keys: {known}", where)
            if any(k is key for k, _ in kernels):
                raise OpgenError(f"dispatch key {key} is listed twice", where)
            kernels.append((key, BackendMetadata(kernel_name, structured and key in STRUCTURED_KEYS,
                                                 f"{namespace or 'at'}::native")))
            redundant_implicit |= key is DispatchKey.CompositeImplicitAutograd and kernel == expected
    if len(kernels) == 1 and redundant_implicit:
        raise e.error("dispatch", "unnecessary dispatch table: CompositeImplicitAutograd is the default for this kernel name; delete the dispatch table")
    if (len(kernels) == 1 and kernels[0][0] is DispatchKey.CompositeImplicitAutograd and delegate is None
            and not kernels[0][1].supports_symint()):
        raise e.error("dispatch", f"a lone CompositeImplicitAutograd kernel must be named {expected} (then delete the dispatch table), got {kernels[0][1].kernel}")
    composites = {k for k, _ in kernels if k in COMPOSITE_KEYS}
    allowed_pair = len(composites) == 2 and DispatchKey.CompositeImplicitAutogradNestedTensor in composites \
        and DispatchKey.CompositeExplicitAutogradNonFunctional not in composites
    if len(composites) > 1 and not allowed_pair:
        raise e.error("dispatch", "give at most one of CompositeExplicitAutograd, CompositeExplicitAutogradNonFunctional and CompositeImplicitAutograd; each subsumes the others")
    if delegate is not None:
        for key, _ in kernels:
            if key in STRUCTURED_KEYS:
                raise e.error("dispatch", f"a structured_delegate function must not list {key} in dispatch; its kernel comes from the delegate")
    return kernels


def _check_function(e: _Entry, f: NativeFunction, kernels: KernelTable) -> None:
    func = f.func
    kind = func.kind()
    if func.arguments.out and f.variants != ("function",):
        raise e.error("variants", "functions with out arguments must have 'variants: function' only")
    if f.structured:
        if kind is not SchemaKind.out:
            raise e.error("structured", "put 'structured: True' on the out= variant; the others use structured_delegate")
        if not f.device_guard:
            raise e.error("device_guard", "device_guard: False is not supported by structured kernels")
    if f.structured_delegate is not None:
        if kind is SchemaKind.out:
            raise e.error("structured_delegate", "out= functions cannot have structured_delegate; did you mean 'structured: True'?")
        if not f.device_guard:
            raise e.error("device_guard", "device_guard: False is not supported by structured kernels")
    defaulted = {a.name for a in func.arguments.all() if a.default is not None}
    invalid = sorted(set(f.cpp_no_default_args) - defaulted)
    if invalid:
        raise e.error("cpp_no_default_args", f"cpp_no_default_args names arguments without defaults: {', '.join(invalid)}")
    if f.structured_inherits is not None and not f.structured:
        raise e.error("structured_inherits", "structured_inherits requires structured: True")
    if str(func.name).startswith("_foreach") and f.device_check is not DeviceCheck.NoCheck:
        raise e.error("device_check", "_foreach functions must use 'device_check: NoCheck'")
    name = str(func.name)
    dropout = ("dropout" in name or any("dropout" in a.name for a in func.arguments.all())) \
        and "backward" not in name and str(func.name.name) != "_cudnn_init_dropout_state"
    if ("rand" in name or dropout or func.arguments.has_generator_arg()) and "nondeterministic_seeded" not in f.tags:
        raise e.error("tags", f"{name} looks random; add 'tags: nondeterministic_seeded'")
