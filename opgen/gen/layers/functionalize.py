"""The kernels one operator group registers at the Functionalize key (ops/<g>_Functionalize.cpp).

Which functions get one, and what it does (the runtime is
csrc/functionalization/functionalization.h):
- ``functionalize_view``: an aliasing view (``Tensor(a) self -> Tensor(a)``) without a
  CompositeImplicitAutograd kernel: the synced input's ``<view>_copy`` below the key, returned
  as a wrapper over the input's storage with a view step (forward: the ``_copy`` call again;
  its sizes and strides are the eager view's, from the view itself on meta tensors;
  reverse: the hand-written inverse ``functionalization::inverse::<view>``,
  csrc/functionalization/functional_inverses.cpp);
- ``functionalize_mutation``: in-place, out= and mutable functions with a functional sibling:
  the functional variant below the key on synced inputs, then each written argument's new value
  committed to its storage, so every alias sees it;
- ``direct``: a view with a CompositeImplicitAutograd kernel: the decomposition runs at the key
  (its pieces reach their own Functionalize kernels);
- in-place views (``transpose_``): the out-of-place view's ``_copy`` and inverse, the step
  appended to the input's own chain and its metadata changed in place;
- ``functionalize_error``: a mutation or view opgen cannot functionalize (no functional
  sibling, a view returning a list or taking several tensors, ...): raises an error naming it;
- nothing for functional non-aliasing functions: the runtime's boxed fallback unwraps, calls
  below and wraps. Nor for operators whose Functionalize kernel the runtime writes by hand
  (HAND_WRITTEN).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Optional

from ...api import dispatcher
from ...api.bindings import names
from ...model.backend import BackendIndex
from ...model.dispatch_keys import DispatchKey
from ...model.native_function import NativeFunction
from ...model.schema import SchemaKind
from .declarations import INVERSE_SCOPE, Use, inverse_declaration
from .families import GroupRelations
from .kernels import HandWritten, Wrapper, WrapperKind, kernel_namespace, option_from_out, wrapper, wrapper_layer
from ..engine.render import cpp_string

KEY = DispatchKey.Functionalize
# Operators that get no generated Functionalize kernel because the runtime treats them by hand:
# lift and lift_fresh make functional tensors (csrc/functionalization/functionalization.cpp);
# resize_ and _propagate_xla_data are left to the boxed fallback (which rejects resize_ by name),
# as PyTorch writes their functionalization by hand too.
HAND_WRITTEN = frozenset({"lift", "lift_fresh", "resize_", "_propagate_xla_data"})
# Where the view kernels' inverses are defined by hand; each file declares those it calls.
INVERSE_NAMESPACE = f"op::{INVERSE_SCOPE}"
INVERSE_COMMENT = ("Inverses of the views below: write a view's new value back into its base (hand-written,",
                   "csrc/functionalization/functional_inverses.cpp).")
_MUTATING = (SchemaKind.inplace, SchemaKind.out, SchemaKind.mutable)


def _error(f: NativeFunction, reason: str) -> Wrapper:
    message = cpp_string(f"{f.func.name}: cannot be functionalized: {reason}")
    return replace(wrapper(WrapperKind.FUNCTIONALIZE_ERROR, KEY, f), body=(f'::op::fail("{message}");',))


def is_cia(f: NativeFunction, indices: dict[DispatchKey, BackendIndex]) -> bool:
    index = indices.get(DispatchKey.CompositeImplicitAutograd)
    return index is not None and index.has_kernel(f.func.name)


def functionalize_kernels(rel: GroupRelations, indices: dict[DispatchKey, BackendIndex]) -> list[Wrapper]:
    wrappers = []
    for f in rel.group.functions:
        w = _kernel(rel, f, indices)
        if w is not None:
            wrappers.append(w)
    return wrappers


def reason_skipped(f: NativeFunction, indices: dict[DispatchKey, BackendIndex]) -> Optional[str]:
    """Why f gets no Functionalize kernel (None when it gets one): for reports."""
    if str(f.func.name) in HAND_WRITTEN:
        return "hand-written in the runtime"
    if f.is_view_op:
        return None
    if is_cia(f, indices):
        return "CompositeImplicitAutograd: decomposes above the key"
    if f.func.kind() in _MUTATING:
        return None
    return "functional: the boxed fallback"


def _kernel(rel: GroupRelations, f: NativeFunction, indices: dict[DispatchKey, BackendIndex]) -> Optional[Wrapper]:
    if f.manual_kernel_registration or reason_skipped(f, indices) is not None:
        return None
    if f.is_view_op:
        if is_cia(f, indices):
            meta = indices[DispatchKey.CompositeImplicitAutograd].get(f.func.name)
            return replace(wrapper(WrapperKind.DIRECT, KEY, f), callee=f"{kernel_namespace(meta)}::{meta.kernel}",
                           args=names(dispatcher.bindings(f)))
        return _view(rel, f)
    return _mutation(rel, f)


def _unwrapped(f: NativeFunction) -> tuple[list[str], dict[str, str]]:
    """Statements unwrapping f's tensor arguments, and each argument's unwrapped name."""
    lines, renamed = [], {}
    for a in f.func.arguments.all():
        if a.type.is_tensor_like():
            lines.append(f"auto {a.name}_ = functionalization::unwrap({a.name});")
            renamed[a.name] = f"{a.name}_"
        else:
            renamed[a.name] = a.name
    return lines, renamed


def _view(rel: GroupRelations, f: NativeFunction) -> Wrapper:
    inplace = f.func.kind() is SchemaKind.inplace
    # The out-of-place view whose *_copy and inverse an in-place view (transpose_) uses.
    view = f if not inplace else next((g for g in rel.group.functions if not g.func.name.name.inplace and g.is_view_op
                                       and g.func.view_signature() == f.func.view_signature()), None)
    if view is None or f.func.kind() not in (SchemaKind.functional, SchemaKind.inplace):
        return _error(f, "in-place views without an out-of-place view of the same signature are not functionalized")
    if len(f.func.returns) != 1 or f.func.returns[0].type.is_list_like() or not f.func.arguments.self_arg:
        return _error(f, "only views returning one tensor of self are functionalized")
    if any(a.type.is_tensor_like() for a in f.func.arguments.all() if a is not f.func.arguments.self_arg):
        return _error(f, "views with more than one tensor argument are not functionalized")
    name = view.func.name
    copy_handle = f"{name.name.base}_copy" + (f"_{name.overload_name}" if name.overload_name else "")
    self_name = f.func.arguments.self_arg.name
    others = [a.name for a in f.func.arguments.all() if a.name != self_name]
    lines = []
    if inplace:  # a plain tensor (functionalization on for the thread): the in-place view itself
        lines += [f"if (!functionalization::is_functional({self_name})) {{", "  functionalization::BelowGuard below;",
                  f"  return functionalization::call<ops::{dispatcher.handle_name(f)}>({names(dispatcher.bindings(f))});",
                  "}"]
    lines += ["functionalization::BelowGuard below;", f"auto {self_name}_ = functionalization::unwrap({self_name});"]
    lines += [f"auto {o}_ = functionalization::owned({o});" for o in others]
    captured = ", ".join(f"{o}_" for o in others)
    args = "".join(f", {o}_" for o in others)
    call = f"functionalization::call<ops::{copy_handle}>"
    lines += [
        f"TensorBase value = {call}({self_name}_{args});",
        f'ViewMeta meta{{"{dispatcher.qualified_name(view)}",',
        f"    [{captured}](const TensorBase& base) {{ return {call}(base{args}); }},",
        f"    [{captured}](const TensorBase& base, const TensorBase& mutated_view) {{",
        f"      return functionalization::inverse::{name.unambiguous_name()}(base, mutated_view{args});",
        "    }};",
        "// The eager view's sizes, strides and offset, from the view kernel on the input's metadata.",
        f"TensorBase layout = functionalization::layout_of({self_name});",
    ]
    if inplace:
        lines += [f"ops::{dispatcher.handle_name(f)}::call(layout{args});",
                  f"functionalization::replace_view({self_name}, std::move(value), std::move(meta), layout);",
                  f"return {self_name};"]
    else:
        lines += [f"layout = ops::{dispatcher.handle_name(f)}::call(layout{args});",
                  f"return functionalization::make_view({self_name}, std::move(value), std::move(meta), layout);"]
    inverse = inverse_declaration(view, self_name, Use(KEY, dispatcher.qualified_name(f), f.location))
    return replace(wrapper(WrapperKind.FUNCTIONALIZE_VIEW, KEY, f), body=tuple(lines),
                   hand_written=HandWritten(INVERSE_NAMESPACE, INVERSE_COMMENT,
                                            (f"{inverse.returns} {inverse.name}({inverse.params});",), (inverse,)),
                   other_groups=(f"{name.name.base}_copy",))


def _mutation(rel: GroupRelations, f: NativeFunction) -> Wrapper:
    functional = rel.sibling(f, SchemaKind.functional)
    if functional is None:
        return _error(f, "it mutates its arguments and has no functional variant")
    written = [a for a in f.func.arguments.all() if a.is_write]
    lines, renamed = _unwrapped(f)
    out_names = {a.name for a in f.func.arguments.out}
    args = []
    for b in dispatcher.bindings(functional):
        if b.name in renamed:
            args.append(renamed[b.name])
        elif option_from_out(b.name) is not None and len(out_names) == 1:
            args.append(option_from_out(b.name, renamed[next(iter(out_names))]))
        else:
            return _error(f, f"its functional variant {functional.func.name} takes '{b.name}', which it lacks")
    n_ret = len(functional.func.returns)
    # Where each written argument's new value is among the functional variant's results: the
    # result of the return aliasing it, else one of the results after f's returns
    # (FunctionSchema.written_results).
    slots = f.func.written_results()
    if n_ret != len(f.func.signature().returns) or any(a.name not in slots for a in written):
        return _error(f, f"the results of {functional.func.name} do not line up with its mutated arguments")
    handle = dispatcher.handle_name(functional)
    own = names(dispatcher.bindings(f))
    # The functional variant's results; not a name an argument (_linalg_det.result) or an
    # unwrapped argument (result_) already has.
    taken = {b.name for b in dispatcher.bindings(f)} | set(renamed.values())
    result = next(n for n in ("result", "functional_result", "functional_result_") if n not in taken)
    # No functional argument (a plain tensor captured by a functionalized function): the
    # mutation itself runs below.
    lines = [f"if (!functionalization::any_functional({own})) {{",
             "  functionalization::BelowGuard below;",
             f"  return functionalization::call<ops::{dispatcher.handle_name(f)}>({own});",
             "}",
             "functionalization::BelowGuard below;"] + lines
    lines.append(f"auto {result} = functionalization::call<ops::{handle}>({', '.join(args)});")
    op = dispatcher.qualified_name(f)
    for a in written:
        # out= may resize its out arguments; other written arguments (the running stats of
        # _batch_norm_with_update.out) are updated in place.
        resizable = "true" if a in f.func.arguments.out else "false"
        value = result if n_ret == 1 else f"std::get<{slots[a.name]}>({result})"
        if a.type.is_list_like():
            lines.append(f"for (size_t i = 0; i < {a.name}.size(); ++i) "
                         f'functionalization::commit("{op}", {a.name}[i], {value}[i], {resizable});')
        elif a.type.is_nullable():  # Tensor(a!)?
            lines.append(f'if ({a.name}.has_value()) functionalization::commit("{op}", *{a.name}, {value}, {resizable});')
        else:
            lines.append(f'functionalization::commit("{op}", {a.name}, {value}, {resizable});')
    # f's own returns: the written arguments they alias (returns alias all or none), or the
    # functional variant's first results, wrapped.
    aliased = [next(a.name for a in written if a.annotation == r.annotation) for r in f.func.returns if r.is_write]
    if not f.func.returns:
        lines.append("return;")
    elif aliased:
        lines.append(f"return {aliased[0]};" if len(aliased) == 1 else f"return std::forward_as_tuple({', '.join(aliased)});")
    else:
        got = [f"functionalization::wrap(std::get<{i}>({result}))" if n_ret > 1 else f"functionalization::wrap({result})"
               for i in range(len(f.func.returns))]
        lines.append(f"return {got[0]};" if len(got) == 1 else f"return std::make_tuple({', '.join(got)});")
    return replace(wrapper(WrapperKind.FUNCTIONALIZE_MUTATION, KEY, f), body=tuple(lines))


def _functionalize_kernels(rel: GroupRelations, key: DispatchKey, indices: dict[DispatchKey, BackendIndex]) -> list[Wrapper]:
    return functionalize_kernels(rel, indices)


# The Functionalize layer: ops/<g>_Functionalize.cpp.
FUNCTIONALIZE = wrapper_layer("functionalize", (KEY,), _functionalize_kernels)
