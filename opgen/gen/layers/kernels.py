"""The kernels one operator group registers at one dispatch key, as template data.

Every kernel is a wrapper with the dispatcher signature, named ``wrapper_<Key>_<op>``; its
``WrapperKind`` says what the body does:
- ``direct``          calls a hand-written kernel (a native one, a backend's, or at Functionalize
                      a view's CompositeImplicitAutograd decomposition)
- ``structured``      runs meta() (and impl() except at Meta) of a structured out= kernel,
                      for its functional, in-place or out= variant; at
                      CompositeExplicitAutogradNonFunctional, the "default backend" functional and
                      in-place variants: meta() into a fresh output or self, then the out= variant
                      through the dispatcher (so a backend implementing only out= runs all three)
- ``generated``       a body built from a sibling: an autogen out= variant (the functional result
                      copied into out), an autogen functional variant (the in-place/mutable op on
                      clones); for an external backend (backend.py), out= / in-place wrappers over
                      its functional kernel and a lazy backend's full_codegen kernels
- ``backend_select``  a function with tensor options choosing the backend from its device
                      argument and its tensor arguments
- ``inplace_meta``    at Meta, an in-place operator with no Meta kernel of its own: checks that
                      ``self`` is meta and returns it (shapes do not change in place)
- ``view_copy``       a ``*_copy`` function tagged ``view_copy``: its view, then a copy of it
                      (for backends that cannot alias)
- ``functionalize_view``, ``functionalize_mutation``, ``functionalize_error``: the
                      Functionalize key's kernels (functionalize.py)
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Callable, Optional, Sequence

from ...api import dispatcher, structured
from ...api.bindings import names, params
from ...model.backend import DEFAULT_KERNEL_NAMESPACE, BackendIndex, BackendMetadata
from ...model.dispatch_keys import STRUCTURED_KEYS, DispatchKey
from ...model.grouping import OperatorGroup
from ...model.native_function import NativeFunction
from ...model.schema import SchemaKind
from ...model.types import TENSOR, ListType
from ..engine import layout
from ..engine.layout import handles_header
from .families import GroupRelations
from ..engine.layer import GroupCodegen, Layer  # GroupCodegen: gen/group.py's, named by the engine
from ..engine.render import render


@dataclass(frozen=True)
class StructuredCall:
    variant: SchemaKind   # functional, inplace or out
    class_name: str       # the wrapper class deriving from the meta/impl class
    base: str             # native::structured_add_out, or meta::structured_add_Tensor at Meta
    n_outputs: int
    outputs: tuple[str, ...]  # the written arguments (in-place: self; out=: the outs)
    meta_args: str
    impl_args: Optional[str]  # None at Meta and for the default backend
    out_call: Optional[str]   # the default backend's call of the out= variant
    precomputed: bool
    returns: str              # the return statement

    @property
    def makes_outputs(self) -> bool:
        """The functional variant: the wrapper allocates its outputs."""
        return self.variant is SchemaKind.functional

    @property
    def writes_self(self) -> bool:
        """The in-place variant: outputs are checked against self, not resized."""
        return self.variant is SchemaKind.inplace


class WrapperKind(Enum):
    """What a wrapper's body does (the module docstring describes each)."""
    DIRECT = "direct"
    STRUCTURED = "structured"
    GENERATED = "generated"
    BACKEND_SELECT = "backend_select"
    INPLACE_META = "inplace_meta"
    VIEW_COPY = "view_copy"
    FUNCTIONALIZE_VIEW = "functionalize_view"
    FUNCTIONALIZE_MUTATION = "functionalize_mutation"
    FUNCTIONALIZE_ERROR = "functionalize_error"

    @property
    def is_direct(self) -> bool:
        return self is WrapperKind.DIRECT

    @property
    def is_structured(self) -> bool:
        return self is WrapperKind.STRUCTURED

    @property
    def calls_kernel(self) -> bool:
        """Calls a hand-written kernel or structured class (the group's native header declares it)."""
        return self in (WrapperKind.DIRECT, WrapperKind.STRUCTURED)

    @property
    def derives_from_sibling(self) -> bool:
        """Runs a sibling variant and copies its result (native/sibling_variants.h)."""
        return self is WrapperKind.GENERATED

    @property
    def functionalizes(self) -> bool:
        """A Functionalize kernel (functionalization/functionalization.h)."""
        return self in (WrapperKind.FUNCTIONALIZE_VIEW, WrapperKind.FUNCTIONALIZE_MUTATION,
                        WrapperKind.FUNCTIONALIZE_ERROR)

    @property
    def selects_backend(self) -> bool:
        return self is WrapperKind.BACKEND_SELECT


@dataclass(frozen=True)
class HandWritten:
    """Functions a wrapper's body calls that are defined by hand elsewhere, declared in the file
    that calls them: in ``namespace``, under a comment of ``comment``'s lines."""
    namespace: str             # "op::functionalization::inverse"
    comment: tuple[str, ...]
    declarations: tuple[str, ...]
    functions: tuple = ()      # the same as declarations.Declaration objects (missing-kernel checks)


@dataclass(frozen=True)
class Wrapper:
    kind: WrapperKind
    operator: str         # name registered: "add.Tensor"
    name: str             # wrapper_CPU_add_Tensor
    returns: str
    params: str
    body: tuple[str, ...] = ()  # statements of generated bodies
    callee: str = ""            # direct: the native kernel
    args: str = ""              # direct: its arguments
    structured: Optional[StructuredCall] = None
    other_groups: tuple[str, ...] = ()  # groups whose operator handles the body calls
    hand_written: Optional[HandWritten] = None  # functions the body calls that are defined by hand


def kernel_namespace(meta: BackendMetadata) -> str:
    """In-tree kernels live in op::native; torchgen's default namespace maps there."""
    return "native" if meta.cpp_namespace == DEFAULT_KERNEL_NAMESPACE else meta.cpp_namespace


def wrapper(kind: WrapperKind, key: DispatchKey, f: NativeFunction) -> Wrapper:
    """f's wrapper at ``key`` with its name and dispatcher signature, and no body yet."""
    name = f"wrapper_{key.value}_{f.func.name.unambiguous_name()}"
    return Wrapper(kind, str(f.func.name), name, dispatcher.return_type(f), params(dispatcher.bindings(f)))


def key_kernels(group_rel: GroupRelations, key: DispatchKey, indices: dict[DispatchKey, BackendIndex]) -> list[Wrapper]:
    index = indices.get(key)
    wrappers = []
    for f in group_rel.group.functions:
        meta = index.get(f.func.name) if index else None
        if key is DispatchKey.BackendSelect:
            if _needs_backend_select(f):
                wrappers.append(_backend_select(f))
        elif meta is None and key is DispatchKey.Meta and _needs_inplace_meta(group_rel, f, indices):
            wrappers.append(_inplace_meta(f))
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
    return replace(wrapper(WrapperKind.DIRECT, key, f), callee=f"{kernel_namespace(meta)}::{meta.kernel}",
                   args=names(dispatcher.bindings(f)))


def _structured(group_rel: GroupRelations, key: DispatchKey, f: NativeFunction,
                indices: dict[DispatchKey, BackendIndex]) -> Optional[Wrapper]:
    out = group_rel.structured_out(f)
    if out is None:
        return None
    default_backend = key is DispatchKey.CompositeExplicitAutogradNonFunctional
    if key is DispatchKey.Meta or default_backend:
        if default_backend and (f.func.kind() is SchemaKind.out or key in indices and indices[key].has_kernel(out.func.name)):
            return None  # out= is what a backend implements; a default would call itself
        base = f"meta::{structured.meta_class(group_rel.functional_of(out))}"
    elif key in STRUCTURED_KEYS and key in indices and indices[key].get(out.func.name) is not None:
        meta = indices[key].get(out.func.name)
        base = f"{kernel_namespace(meta)}::{structured.impl_class(meta.kernel)}"
    else:
        return None
    variant = f.func.kind()
    if variant not in (SchemaKind.functional, SchemaKind.inplace, SchemaKind.out):
        return None
    n_outputs = len(out.func.arguments.out)
    if variant is SchemaKind.functional:
        outputs: tuple[str, ...] = ()
    elif variant is SchemaKind.inplace:
        outputs = tuple(a.name for a in f.func.arguments.all() if a.is_write)
    else:
        outputs = tuple(a.name for a in f.func.arguments.out)
    meta_args = names(structured.meta_bindings(out))
    impl_args = out_call = None
    if default_backend:
        written = [f"kernel.outputs_[{i}]" for i in range(n_outputs)] if variant is SchemaKind.functional else list(outputs)
        out_names = [a.name for a in out.func.arguments.out]
        args = [written[out_names.index(b.name)] if b.name in out_names else b.name for b in dispatcher.bindings(out)]
        out_call = _call(out, args)
    elif key is not DispatchKey.Meta:
        fields = structured.precomputed_names(out)
        inputs = [f"precompute.{b.name}" if b.name in fields else b.name for b in structured.impl_bindings(out)[:-n_outputs or None]]
        impl_args = ", ".join(inputs + [f"kernel.maybe_get_output({i})" for i in range(n_outputs)])
    class_name = f"structured_{f.func.name.unambiguous_name()}_{key.value}_{variant.name}"
    if variant is SchemaKind.functional:
        moved = [f"std::move(kernel.outputs_[{i}])" for i in range(n_outputs)]
        returns = f"return {moved[0]};" if n_outputs == 1 else f"return std::make_tuple({', '.join(moved)});"
    else:
        returns = _return_outputs(f, list(outputs))
    call = StructuredCall(variant, class_name, base, n_outputs, outputs, meta_args, impl_args, out_call,
                          out.precomputed is not None, returns)
    return replace(wrapper(WrapperKind.STRUCTURED, key, f), structured=call)


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
    if f.func.returns[0].type.is_list_like():  # split_copy, unbind_copy: a contiguous clone of each view
        body: tuple[str, ...] = (
            f"std::vector<TensorBase> views = {view};",
            "std::vector<TensorBase> copies;",
            "copies.reserve(views.size());",
            "for (const TensorBase& v : views) copies.push_back(ops::clone::call(v, MemoryFormat::Contiguous));",
            "return copies;",
        )
    else:
        body = (f"return ops::clone::call({view}, MemoryFormat::Contiguous);",)
    return replace(wrapper(WrapperKind.VIEW_COPY, DispatchKey.CompositeExplicitAutogradNonFunctional, f), body=body,
                   other_groups=(view_group, "clone"))


_COMPOSITE_KEYS = (DispatchKey.CompositeImplicitAutograd, DispatchKey.CompositeExplicitAutograd,
                   DispatchKey.CompositeExplicitAutogradNonFunctional)


def _needs_inplace_meta(group_rel: GroupRelations, f: NativeFunction, indices: dict[DispatchKey, BackendIndex]) -> bool:
    """An in-place operator returning self, with no Meta kernel, no structured family to give it
    one and no composite kernel that would already run on meta tensors."""
    if f.func.kind() is not SchemaKind.inplace or len(f.func.returns) != 1 or f.manual_kernel_registration:
        return False
    if group_rel.structured_out(f) is not None:
        return False
    return not any(indices[k].has_kernel(f.func.name) for k in _COMPOSITE_KEYS if k in indices)


def _inplace_meta(f: NativeFunction) -> Wrapper:
    self_name = f.func.arguments.self_arg.name
    body = (f'OP_CHECK({self_name}.is_meta(), "{f.func.name}: cannot write in place into a non-meta tensor '
            f'with meta tensor arguments");', f"return {self_name};")
    return replace(wrapper(WrapperKind.INPLACE_META, DispatchKey.Meta, f), body=body)


def _needs_backend_select(f: NativeFunction) -> bool:
    """Every function taking tensor options, except those deriving them from a tensor
    (``new_*``, ``*_like``): the requested device must be able to pick the backend."""
    name = f.func.name.name.base
    return f.func.arguments.has_tensor_options and not name.startswith("new_") and not name.endswith("_like")


def _backend_select(f: NativeFunction) -> Wrapper:
    """Redispatch to the keys below BackendSelect of the requested device and of the tensor
    arguments (``_to_copy(cuda_tensor, device=cpu)`` sees both CPU and CUDA)."""
    handle = dispatcher.handle_name(f)
    tensors = [a.name for a in f.func.arguments.all() if a.type.is_tensor_like()]
    keys = f"impl::backend_key_set(device, {' | '.join(f'impl::key_set_of({t})' for t in tensors)})" if tensors \
        else "impl::backend_key_set(device)"
    call = f"ops::{handle}::redispatch({keys}, {names(dispatcher.bindings(f))})"
    return replace(wrapper(WrapperKind.BACKEND_SELECT, DispatchKey.BackendSelect, f), body=(f"return {call};",))


def _generated(group_rel: GroupRelations, key: DispatchKey, f: NativeFunction) -> Wrapper:
    """Bodies for autogen variants, built from the sibling the yaml did write."""
    kind = f.func.kind()
    if kind is SchemaKind.out:
        body = out_from_functional(group_rel, f)
    else:
        body = _functional_from_mutation(group_rel, f)
    return replace(wrapper(WrapperKind.GENERATED, key, f), body=tuple(body))


def _call(f: NativeFunction, args: list[str]) -> str:
    return f"ops::{dispatcher.handle_name(f)}::call({', '.join(args)})"


# Factory out= variants drop the tensor options; the functional variant gets them from out.
_FROM_OUT = {"dtype": "{out}.dtype()", "layout": "std::nullopt", "device": "{out}.device()", "pin_memory": "std::nullopt"}


def option_from_out(option: str, out: str = "out") -> Optional[str]:
    """The expression a factory's tensor option ``option`` takes from the out= tensor ``out``
    (None: not a tensor option)."""
    expression = _FROM_OUT.get(option)
    return expression.format(out=out) if expression is not None else None


def out_from_functional(group_rel: GroupRelations, f: NativeFunction, callee: Optional[str] = None) -> list[str]:
    """out= as functional + copy; ``callee`` calls a backend's kernel instead of redispatching."""
    functional = group_rel.sibling(f, SchemaKind.functional)
    outs = f.func.arguments.out
    if functional is None:
        return [f'OP_CHECK(false, "{f.func.name}: no functional variant to build this out= variant from");']
    own = {a.name for a in f.func.arguments.all()}
    args = [b.name if b.name in own else option_from_out(b.name) for b in dispatcher.bindings(functional)]
    if None in args:
        return [f'OP_CHECK(false, "{f.func.name}: its functional variant takes arguments this out= variant lacks");']
    call = f"{callee}({', '.join(args)})" if callee else _call(functional, args)
    # Not `result`: an out= argument may be called that (_linalg_det.result).
    lines = [f"auto functional_result = {call};"]
    several = len(functional.func.returns) > 1
    for i, a in enumerate(outs):
        value = f"std::get<{i}>(functional_result)" if several else "functional_result"
        if isinstance(a.type, ListType):  # one copy per element (the _fused_adam family returns lists)
            lines.append(f"for (size_t i = 0; i < {a.name}.size(); ++i) "
                         f"impl::copy_to_out(const_cast<TensorBase&>({a.name}[i]), {value}[i]);")
        else:
            lines.append(f"impl::copy_to_out({a.name}, {value});")
    lines.append(_return_outputs(f, [a.name for a in outs]))
    return lines


def _functional_from_mutation(group_rel: GroupRelations, f: NativeFunction) -> list[str]:
    """The mutation run on clones of the arguments it writes; the functional variant returns
    its results in the order of ``signature().returns``: the mutation's returns (a return
    aliasing a written argument gives that argument's clone), then the clones of the written
    arguments no return aliases (``_amp_update_scale``: self and growth_tracker)."""
    mutation = group_rel.sibling(f, SchemaKind.inplace) or group_rel.sibling(f, SchemaKind.mutable)
    if mutation is None:
        return [f'OP_CHECK(false, "{f.func.name}: no in-place or mutable variant to build this functional variant from");']
    written = [a for a in mutation.func.arguments.all() if a.is_write]
    other = next((a for a in written if a.type not in (TENSOR, ListType(TENSOR, None))), None)
    if other is not None:  # Tensor(a!)?: nothing clones an absent tensor yet
        return [f'OP_CHECK(false, "{f.func.name}: functional variants of operators writing a {other.type} argument are not generated");']
    slots = mutation.func.written_results()
    if len(f.func.returns) != len(mutation.func.signature().returns) or any(a.name not in slots for a in written):
        return [f'OP_CHECK(false, "{f.func.name}: its results do not line up with the arguments {mutation.func.name} writes");']
    lines = []
    for a in written:
        if a.type == TENSOR:
            lines.append(f"TensorBase {a.name}_result = impl::clone_for_functional({a.name});")
        else:  # Tensor[]: one clone per element
            lines += [f"std::vector<TensorBase> {a.name}_result;",
                      f"{a.name}_result.reserve({a.name}.size());",
                      f"for (const TensorBase& t : {a.name}) {a.name}_result.push_back(impl::clone_for_functional(t));"]
    args = [f"{b.name}_result" if b.name in slots else b.name for b in dispatcher.bindings(mutation)]
    # What each of the functional variant's results is: a clone, or one of the mutation's own
    # (non-aliasing) results.
    by_slot = {slot: f"{name}_result" for name, slot in slots.items()}
    fresh = [i for i, r in enumerate(mutation.func.returns) if not r.is_write]
    if fresh:
        lines.append(f"auto result = {_call(mutation, args)};")
        several = len(mutation.func.returns) > 1
        by_slot.update({i: f"std::get<{i}>(result)" if several else "result" for i in fresh})
    else:
        lines.append(f"{_call(mutation, args)};")
    results = [by_slot[i] for i in range(len(f.func.returns))]
    lines.append(f"return {results[0]};" if len(results) == 1 else f"return std::make_tuple({', '.join(results)});")
    return lines


def _return_outputs(f: NativeFunction, outs: list[str]) -> str:
    if not f.func.returns:
        return "return;"
    if len(f.func.returns) == 1:
        return f"return {outs[0]};"
    return f"return std::forward_as_tuple({', '.join(outs)});"


def registration_source(group_rel: GroupRelations, key: str, wrappers: list[Wrapper],
                        includes: set[str], definitions: Sequence[str] = ()) -> str:
    """The translation unit defining and registering one group's wrappers at one key; ``includes``
    are the headers the wrappers' callees need (the handles their bodies call are added here);
    ``definitions``: kernels the wrappers call that generated code defines (a backend's
    full_codegen kernels), before the wrappers at global scope: a qualified definition must
    stand in a namespace enclosing its declaration's, and only the global one encloses both
    op and a backend's (torch_xla, torch::lazy)."""
    includes = includes | {"dispatch/registration.h"}
    includes.update(handles_header(other) for w in wrappers for other in w.other_groups)
    return render("kernel_registration.cpp.j2", group=group_rel.group.name, key=key,
                  hand_written=_hand_written_blocks(wrappers),
                  system_includes=["array"] if any(w.kind.is_structured for w in wrappers) else [],
                  includes=sorted(includes), wrappers=wrappers, namespaces=by_namespace(group_rel.group, wrappers),
                  definitions=list(definitions))


def by_namespace(group: OperatorGroup, wrappers) -> list[dict]:
    """The OP_LIBRARY_IMPL blocks of a registration file: ``[{"name": ns, "wrappers": [...]}]``
    sorted by namespace, each wrapper (anything with ``.operator``, "add.Tensor") under its
    function's."""
    functions = {str(f.func.name): f for f in group.functions}
    blocks: dict[str, list] = {}
    for w in wrappers:
        blocks.setdefault(functions[w.operator].namespace, []).append(w)
    return [{"name": ns, "wrappers": ws} for ns, ws in sorted(blocks.items())]


def _hand_written_blocks(wrappers: list[Wrapper]) -> list[dict]:
    """One block per namespace and comment, in the wrappers' order, each declaration once."""
    blocks: dict[tuple[str, tuple[str, ...]], dict[str, None]] = {}
    for w in wrappers:
        if w.hand_written is not None:
            declared = blocks.setdefault((w.hand_written.namespace, w.hand_written.comment), {})
            declared.update(dict.fromkeys(w.hand_written.declarations))
    return [{"namespace": namespace, "comment": list(comment), "declarations": list(declared)}
            for (namespace, comment), declared in blocks.items()]


# ----- the kernels layer: ops/<g>_<Key>.cpp at every key of the build no other layer names -----

def wrapper_source(codegen: "GroupCodegen", key: DispatchKey) -> str:
    """The registration source of the group's wrappers at ``key`` (any layer whose kernels are
    ``Wrapper``s), including what the wrappers' kinds call."""
    wrappers = codegen.kernels[key]
    includes = {layout.handles_header(codegen.name)}
    if any(w.kind.calls_kernel for w in wrappers):
        includes.add(layout.native_header(codegen.name))
    if any(w.kind.is_structured for w in wrappers):
        includes.add("core/structured_out.h")
    if any(w.kind.derives_from_sibling for w in wrappers):
        includes.add("native/sibling_variants.h")
    if any(w.kind.functionalizes for w in wrappers):
        includes.add("functionalization/functionalization.h")
    if any(w.kind.selects_backend for w in wrappers):
        includes.add("dispatch/backend_select.h")
    return registration_source(codegen.relations, key.value, wrappers, includes)


def wrapper_layer(name: str, keys: Optional[tuple[DispatchKey, ...]],
                  wrappers: Callable[[GroupRelations, DispatchKey, dict[DispatchKey, BackendIndex]], list[Wrapper]]) -> Layer:
    """A layer registering ``Wrapper``s at ``keys``: one ``ops/<g>_<Key>.cpp`` per key where the
    group has any."""
    def files(codegen: "GroupCodegen") -> list[str]:
        return [layout.key_source(codegen.name, key) for key in codegen.keys_of(keys) if key in codegen.kernels]

    def render_sources(codegen: "GroupCodegen") -> dict[str, str]:
        return {layout.key_source(codegen.name, key): wrapper_source(codegen, key)
                for key in codegen.keys_of(keys) if key in codegen.kernels}
    return Layer(name, files, render_sources, keys=keys, wrappers=wrappers)


KERNELS = wrapper_layer("kernels", None, key_kernels)
