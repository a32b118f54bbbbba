"""Generate the out= and functional variants that ``autogen:`` asks for.

Grouping needs every family of functions (functional / in-place / mutable /
out=) to be complete.  When a family has an in-place or mutable member but no
out= one, and the yaml lists the out name under ``autogen``, we derive it; a
family that then has an out= but no functional member gets that derived too.
Derived functions are tagged ``generated`` and get a CompositeExplicitAutograd
kernel named after them.
"""
from __future__ import annotations

import string
from dataclasses import replace
from typing import Iterable

from ..errors import OpgenError
from .backend import BackendMetadata
from .dispatch_keys import DispatchKey
from .native_function import DeviceCheck, NativeFunction, cpp_name
from .schema import Annotation, Argument, Arguments, BaseOperatorName, FunctionSchema, OperatorName, Return, SchemaKind
from .types import TENSOR

# Tags a derived function inherits from the function it is derived from.
_INHERITED_TAGS = ("nondeterministic_seeded", "view_copy", "pt2_compliant_tag")


def variant_families(functions: Iterable[NativeFunction]) -> dict[str, dict[SchemaKind, NativeFunction]]:
    """Functions keyed by their shared signature, then by kind (insertion ordered)."""
    families: dict[str, dict[SchemaKind, NativeFunction]] = {}
    for f in functions:
        family = families.setdefault(f.func.family_key(), {})
        kind = f.func.kind()
        if kind in family:
            other = family[kind]
            raise OpgenError(
                f"{f.func.name} and {other.func.name} (line {other.location.line}) are both {kind.value} variants of the "
                "same signature; give one of them different arguments or remove it", f.location)
        family[kind] = f
    return families


def _out_name(overload: str) -> str:
    return f"{overload}_out" if overload else "out"


def _out_arguments_for_returns(func: FunctionSchema) -> tuple[list[Return], list[Argument]]:
    """Turn tensor-like returns into mutable out arguments (fresh alias letters)."""
    used = {x for a in func.arguments.all() if a.annotation for x in a.annotation.alias_set}
    letters = [c for c in string.ascii_lowercase if c not in used]
    plain_tensors = all(r.type == TENSOR for r in func.returns)
    returns: list[Return] = []
    outs: list[Argument] = []
    for i, r in enumerate(func.returns):
        if not r.type.is_tensor_like():
            returns.append(r)
            continue
        annotation = Annotation((letters[i],), True, ())
        out = Argument("out" if len(func.returns) == 1 else f"out{i}", r.type, None, annotation)
        outs.append(out)
        if plain_tensors:
            returns.append(Return(None, out.type, annotation))
    return returns, outs


def out_schema(func: FunctionSchema) -> FunctionSchema:
    kind = func.kind()
    name = func.name.without_inplace()
    name = name.with_overload(_out_name(name.overload_name))
    args = func.arguments
    if kind is SchemaKind.inplace:
        self_arg = args.self_arg
        positional = tuple(replace(a, annotation=None) if a.name == "self" else a for a in args.positional)
        out = Argument("out", self_arg.type, None, self_arg.annotation)
        return FunctionSchema(name, Arguments(positional, args.kwarg_only, (out,)), func.returns)
    returns, outs = _out_arguments_for_returns(func)
    if kind is SchemaKind.mutable:
        return FunctionSchema(name, Arguments(args.positional, args.kwarg_only, tuple(outs)), tuple(returns))
    signature = args.signature()
    return FunctionSchema(name, Arguments(signature.positional, signature.kwarg_only, tuple(outs)), tuple(returns))


def functional_schema(func: FunctionSchema) -> FunctionSchema:
    sig = func.signature(keep_return_names=True)
    base = func.name.name
    # A mutable op's functional twin is named op_functional to keep overloads unambiguous.
    name = BaseOperatorName(base.base, False, base.dunder_method, func.kind() is SchemaKind.mutable)
    return FunctionSchema(OperatorName(name, func.name.overload_name), sig.arguments, sig.returns)


def derive(f: NativeFunction, schema: FunctionSchema) -> tuple[NativeFunction, BackendMetadata]:
    implicit = {"out": schema.is_out_fn(), "inplace": schema.name.name.inplace}
    tags = tuple(sorted({"generated", *(t for t in f.tags if t in _INHERITED_TAGS), *(t for t, on in implicit.items() if on)}))
    # out= kernels carry the overload in their name: randn.names_out and randn.generator_with_names_out differ.
    kernel = schema.name.unambiguous_name() if schema.kind() is SchemaKind.out else cpp_name(schema)
    if f.func.arguments.has_symint_arg():
        kernel += "_symint"
    derived = NativeFunction(
        namespace=f.namespace, func=schema, location=f.location, variants=("function",), structured=False,
        structured_delegate=None, structured_inherits=None, precomputed=None, device_check=DeviceCheck.NoCheck,
        device_guard=False, manual_kernel_registration=False, manual_cpp_binding=False, python_module=None,
        category_override=None, tags=tags, autogen=(), cpp_no_default_args=(),
        use_const_ref_for_mutable_tensors=f.use_const_ref_for_mutable_tensors, ufunc_inner_loop=(),
    )
    return derived, BackendMetadata(kernel, False)


Generated = list[tuple[NativeFunction, DispatchKey, BackendMetadata]]


def expand_autogen(functions: list[NativeFunction], composite_implicit: set[OperatorName]) -> Generated:
    """The functions ``autogen`` asks for; raises OpgenError when a request cannot be met."""
    generated: Generated = []
    defined = {f.func.name: f for f in functions}
    for family in variant_families(functions).values():
        members = list(family.values())
        if all(f.manual_cpp_binding for f in members):
            continue
        if any(f.is_view_op and str(f.func.name.name) != "set_" for f in members):
            continue
        if all(f.func.name in composite_implicit for f in members) and not any("core" in f.tags for f in members):
            continue
        has_out = SchemaKind.out in family
        if has_out and len(family) == 1:
            continue
        base = next(family[k] for k in (SchemaKind.mutable, SchemaKind.inplace, SchemaKind.out, SchemaKind.functional) if k in family)
        can_have_out = base.func.kind() is SchemaKind.inplace or any(r.type.is_tensor_like() for r in base.func.returns)
        wants_out = any("out" in str(name) for name in base.autogen)
        make_out = not has_out and can_have_out and wants_out
        if wants_out and not has_out and not can_have_out:
            raise OpgenError(f"autogen asks for an out= variant of {base.func.name}, but it returns no tensor to turn into an out argument", base.location)
        new = []
        if make_out:
            new.append(derive(base, _named_as_requested(out_schema(base.func), base, want_out=True)))
        if SchemaKind.functional not in family and (has_out or make_out):
            new.append(derive(base, _named_as_requested(functional_schema(base.func), base, want_out=False)))
        for fn, meta in new:
            clash = defined.get(fn.func.name)
            if clash is not None:
                raise OpgenError(
                    f"autogen derives {fn.func.name} from {base.func.name}, but line {clash.location.line} already defines "
                    f"{fn.func.name} with other arguments; list the derived variant under another overload name in "
                    f"autogen (e.g. {fn.func.name.name}.dtype_out)", base.location)
            defined[fn.func.name] = fn
            generated.append((fn, DispatchKey.CompositeExplicitAutograd, meta))
    _check_requests(functions)
    return generated


def _named_as_requested(schema: FunctionSchema, base: NativeFunction, want_out: bool) -> FunctionSchema:
    """The derived schema under the name the yaml's autogen list gives it (PyTorch writes e.g.
    `autogen: mean.dtype_out` because `mean.out` is already taken)."""
    for name in base.autogen:
        if ("out" in name.overload_name) == want_out and name.name.base == schema.name.name.base:
            if name != schema.name:
                return replace(schema, name=replace(schema.name, overload_name=name.overload_name))
            break
    return schema


def _check_requests(functions: list[NativeFunction]) -> None:
    """An autogen name must at least belong to the same operator; anything else is a typo."""
    for f in functions:
        for name in f.autogen:
            if name.name.base != f.root_name:
                raise OpgenError(
                    f"autogen lists {name}, which is not a variant of {f.func.name}; "
                    f"autogen names the derived out= or functional variant (e.g. {_suggest(f)})", f.location)


def _suggest(f: NativeFunction) -> str:
    if f.func.kind() is SchemaKind.out:
        return str(functional_schema(f.func).name)
    name = f.func.name.without_inplace()
    return str(name.with_overload(_out_name(name.overload_name)))
