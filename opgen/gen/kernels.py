"""The kernels one operator group registers at one dispatch key, as template data.

Every kernel is a wrapper with the dispatcher signature, named ``wrapper_<Key>_<op>``:
- ``direct``        calls the hand-written native kernel
- ``structured``    runs meta() (and impl() except at Meta) of a structured out= kernel,
                    for its functional, in-place or out= variant
- ``generated_out`` an autogen out= variant: the functional result copied into out
- ``generated_functional``  an autogen functional variant: the in-place/mutable op on clones
- ``backend_select``  a factory function choosing the backend from its device argument
- ``view_copy``     a ``*_copy`` function tagged ``view_copy``: its view, then a copy of it
                    (for backends that cannot alias)
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

from ..api import dispatcher, structured
from ..api.bindings import names, params
from ..model.backend import DEFAULT_KERNEL_NAMESPACE, BackendIndex, BackendMetadata
from ..model.dispatch_keys import STRUCTURED_KEYS, DispatchKey
from ..model.native_function import NativeFunction
from ..model.schema import SchemaKind
from ..model.types import TENSOR, ListType
from .layout import handles_header
from .families import GroupRelations
from .render import render


@dataclass(frozen=True)
class StructuredCall:
    variant: str          # functional | inplace | out
    class_name: str       # the wrapper class deriving from the meta/impl class
    base: str             # native::structured_add_out, or meta::structured_add_Tensor at Meta
    n_outputs: int
    outputs: tuple[str, ...]  # the written arguments (in-place: self; out=: the outs)
    meta_args: str
    impl_args: Optional[str]  # None at Meta: shapes only
    precomputed: bool
    returns: str              # the return statement


@dataclass(frozen=True)
class Wrapper:
    kind: str
    operator: str         # name registered: "add.Tensor"
    name: str             # wrapper_CPU_add_Tensor
    returns: str
    params: str
    body: tuple[str, ...] = ()  # statements of generated bodies
    callee: str = ""            # direct: the native kernel
    args: str = ""              # direct: its arguments
    structured: Optional[StructuredCall] = None
    other_groups: tuple[str, ...] = ()  # groups whose operator handles the body calls


def kernel_namespace(meta: BackendMetadata) -> str:
    """In-tree kernels live in op::native; torchgen's default namespace maps there."""
    return "native" if meta.cpp_namespace == DEFAULT_KERNEL_NAMESPACE else meta.cpp_namespace


def _wrapper_name(key: DispatchKey, f: NativeFunction) -> str:
    return f"wrapper_{key.value}_{f.func.name.unambiguous_name()}"


def _base(kind: str, key: DispatchKey, f: NativeFunction) -> Wrapper:
    b = dispatcher.bindings(f)
    return Wrapper(kind, str(f.func.name), _wrapper_name(key, f), dispatcher.return_type(f), params(b))


def key_kernels(group_rel: GroupRelations, key: DispatchKey, indices: dict[DispatchKey, BackendIndex]) -> list[Wrapper]:
    index = indices.get(key)
    implicit = indices.get(DispatchKey.CompositeImplicitAutograd)
    wrappers = []
    for f in group_rel.group.functions:
        meta = index.get(f.func.name) if index else None
        if key is DispatchKey.BackendSelect:
            if _needs_backend_select(f, implicit):
                wrappers.append(_backend_select(f))
        elif meta is not None and not meta.structured:
            if f.generated:
                wrappers.append(_generated(group_rel, key, f))
            elif is_generated_view_copy(f, key):
                wrappers.append(_view_copy(f))
            else:
                wrappers.append(_direct(key, f, meta))
        else:
            w = _structured(group_rel, key, f, indices)
            if w is not None:
                wrappers.append(w)
    return wrappers


def _direct(key: DispatchKey, f: NativeFunction, meta: BackendMetadata) -> Wrapper:
    return replace(_base("direct", key, f), callee=f"{kernel_namespace(meta)}::{meta.kernel}",
                   args=names(dispatcher.bindings(f)))


def _structured(group_rel: GroupRelations, key: DispatchKey, f: NativeFunction,
                indices: dict[DispatchKey, BackendIndex]) -> Optional[Wrapper]:
    out = group_rel.structured_out(f)
    if out is None:
        return None
    if key is DispatchKey.Meta:
        base = f"meta::{structured.meta_class(group_rel.functional_of(out))}"
    elif key in STRUCTURED_KEYS and key in indices and indices[key].get(out.func.name) is not None:
        meta = indices[key].get(out.func.name)
        base = f"{kernel_namespace(meta)}::{structured.impl_class(meta.kernel)}"
    else:
        return None
    variant = {SchemaKind.functional: "functional", SchemaKind.inplace: "inplace", SchemaKind.out: "out"}.get(f.func.kind())
    if variant is None:
        return None
    n_outputs = len(out.func.arguments.out)
    if variant == "functional":
        outputs: tuple[str, ...] = ()
    elif variant == "inplace":
        outputs = tuple(a.name for a in f.func.arguments.all() if a.is_write)
    else:
        outputs = tuple(a.name for a in f.func.arguments.out)
    meta_args = names(structured.meta_bindings(out))
    impl_args = None
    if key is not DispatchKey.Meta:
        fields = structured.precomputed_names(out)
        inputs = [f"precompute.{b.name}" if b.name in fields else b.name for b in structured.impl_bindings(out)[:-n_outputs or None]]
        impl_args = ", ".join(inputs + [f"kernel.maybe_get_output({i})" for i in range(n_outputs)])
    class_name = f"structured_{f.func.name.unambiguous_name()}_{key.value}_{variant}"
    if variant == "functional":
        moved = [f"std::move(kernel.outputs_[{i}])" for i in range(n_outputs)]
        returns = f"return {moved[0]};" if n_outputs == 1 else f"return std::make_tuple({', '.join(moved)});"
    else:
        returns = _return_outputs(f, list(outputs))
    call = StructuredCall(variant, class_name, base, n_outputs, outputs, meta_args, impl_args, out.precomputed is not None, returns)
    return replace(_base("structured", key, f), structured=call)


def is_generated_view_copy(f: NativeFunction, key: DispatchKey) -> bool:
    """`x_copy` tagged view_copy at CompositeExplicitAutogradNonFunctional: the body is generated
    from the schema alone (the view `x` takes the same arguments), as torchgen does."""
    return (key is DispatchKey.CompositeExplicitAutogradNonFunctional and "view_copy" in f.tags
            and f.func.name.name.base.endswith("_copy") and f.func.kind() is SchemaKind.functional)


def _view_copy(f: NativeFunction) -> Wrapper:
    # The view x_copy copies is x, same overload and arguments: transpose_copy.int -> transpose.int.
    view_group = f.func.name.name.base[:-len("_copy")]
    overload = f.func.name.overload_name
    view_handle = f"{view_group}_{overload}" if overload else view_group
    view = f"ops::{view_handle}::call({names(dispatcher.bindings(f))})"
    body = (f"return ops::clone::call({view}, MemoryFormat::Contiguous);",)
    return replace(_base("view_copy", DispatchKey.CompositeExplicitAutogradNonFunctional, f), body=body,
                   other_groups=(view_group, "clone"))


def _needs_backend_select(f: NativeFunction, implicit: Optional[BackendIndex]) -> bool:
    args = f.func.arguments
    if not args.has_tensor_options or args.has_tensor_arg():
        return False
    return implicit is None or not implicit.has_kernel(f.func.name)


def _backend_select(f: NativeFunction) -> Wrapper:
    handle = dispatcher.handle_name(f)
    call = f"ops::{handle}::redispatch(impl::backend_key_set(device), {names(dispatcher.bindings(f))})"
    return replace(_base("backend_select", DispatchKey.BackendSelect, f), body=(f"return {call};",))


def _generated(group_rel: GroupRelations, key: DispatchKey, f: NativeFunction) -> Wrapper:
    """Bodies for autogen variants, built from the sibling the yaml did write."""
    kind = f.func.kind()
    if kind is SchemaKind.out:
        body = _out_from_functional(group_rel, f)
    else:
        body = _functional_from_mutation(group_rel, f)
    return replace(_base("generated", key, f), body=tuple(body))


def _call(f: NativeFunction, args: list[str]) -> str:
    return f"ops::{dispatcher.handle_name(f)}::call({', '.join(args)})"


# Factory out= variants drop the tensor options; the functional variant gets them from out.
_FROM_OUT = {"dtype": "out.dtype()", "layout": "std::nullopt", "device": "out.device()", "pin_memory": "std::nullopt"}


def _out_from_functional(group_rel: GroupRelations, f: NativeFunction, callee: Optional[str] = None) -> list[str]:
    """out= as functional + copy; ``callee`` calls a backend's kernel instead of redispatching."""
    functional = group_rel.sibling(f, SchemaKind.functional)
    outs = f.func.arguments.out
    if functional is None:
        return [f'OP_CHECK(false, "{f.func.name}: no functional variant to build this out= variant from");']
    own = {a.name for a in f.func.arguments.all()}
    args = [b.name if b.name in own else _FROM_OUT.get(b.name) for b in dispatcher.bindings(functional)]
    if None in args:
        return [f'OP_CHECK(false, "{f.func.name}: its functional variant takes arguments this out= variant lacks");']
    call = f"{callee}({', '.join(args)})" if callee else _call(functional, args)
    lines = [f"auto result = {call};"]
    if len(outs) == 1 and isinstance(outs[0].type, ListType):
        name = outs[0].name
        lines.append(f"for (size_t i = 0; i < {name}.size(); ++i) impl::copy_to_out(const_cast<TensorBase&>({name}[i]), result[i]);")
    elif len(outs) == 1:
        lines.append(f"impl::copy_to_out({outs[0].name}, {'std::get<0>(result)' if len(functional.func.returns) > 1 else 'result'});")
    else:
        lines.extend(f"impl::copy_to_out({a.name}, std::get<{i}>(result));" for i, a in enumerate(outs))
    lines.append(_return_outputs(f, [a.name for a in outs]))
    return lines


def _functional_from_mutation(group_rel: GroupRelations, f: NativeFunction) -> list[str]:
    mutation = group_rel.sibling(f, SchemaKind.inplace) or group_rel.sibling(f, SchemaKind.mutable)
    if mutation is None:
        return [f'OP_CHECK(false, "{f.func.name}: no in-place or mutable variant to build this functional variant from");']
    written = [a.name for a in mutation.func.arguments.all() if a.is_write]
    if any(a.type != TENSOR for a in mutation.func.arguments.all() if a.is_write):
        return [f'OP_CHECK(false, "{f.func.name}: functional variants of list-mutating operators are not generated");']
    lines = [f"TensorBase {name}_result = impl::clone_for_functional({name});" for name in written]
    args = [f"{b.name}_result" if b.name in written else b.name for b in dispatcher.bindings(mutation)]
    if mutation.func.kind() is SchemaKind.inplace:
        lines.append(f"{_call(mutation, args)};")
        lines.append(f"return {written[0]}_result;")
        return lines
    clones = ", ".join(f"{name}_result" for name in written)
    if not mutation.func.returns:
        lines.append(f"{_call(mutation, args)};")
        lines.append(f"return std::make_tuple({clones});" if len(written) > 1 or f.func.returns[1:] else f"return {clones};")
    else:
        lines.append(f"auto result = {_call(mutation, args)};")
        head = "result" if len(mutation.func.returns) > 1 else "std::make_tuple(result)"
        lines.append(f"return std::tuple_cat({head}, std::make_tuple({clones}));")
    return lines


def _return_outputs(f: NativeFunction, outs: list[str]) -> str:
    if not f.func.returns:
        return "return;"
    if len(f.func.returns) == 1:
        return f"return {outs[0]};"
    return f"return std::forward_as_tuple({', '.join(outs)});"


def registration_source(group_rel: GroupRelations, key: str, runtime_key: str, wrappers: list[Wrapper],
                        includes: set[str]) -> str:
    """The translation unit defining and registering one group's wrappers at one key; ``includes``
    are the headers the wrappers' callees need (the handles their bodies call are added here)."""
    includes = includes | {"dispatch/registration.h"}
    includes.update(handles_header(other) for w in wrappers for other in w.other_groups)
    functions = {str(f.func.name): f for f in group_rel.group.functions}
    by_ns: dict[str, list[Wrapper]] = {}
    for w in wrappers:
        by_ns.setdefault(functions[w.operator].namespace, []).append(w)
    return render("kernel_registration.cpp.j2", group=group_rel.group.name, key=key, runtime_key=runtime_key,
                  system_includes=["array"] if any(w.kind == "structured" for w in wrappers) else [],
                  includes=sorted(includes), wrappers=wrappers,
                  namespaces=[{"name": ns, "wrappers": ws} for ns, ws in sorted(by_ns.items())])
