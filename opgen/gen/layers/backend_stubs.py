"""What an external backend writes by hand, and the stubs of a build that has none of it.

Per operator group, a backend yaml makes its backend write (as gen_backend_stubs and
gen_lazy_tensor expect of pytorch/xla): a kernel per ``supported`` / ``autograd`` operator in
``<cpp_namespace>::<class_name>``, and, for a backend that lowers its own IR, a lowering per IR
node and a shape function per ``full_codegen`` operator that needs one, in ``<cpp_namespace>``.
``hand_written(group)`` lists them with the symbol ``nm -C`` prints for each, so a build can
tell which ones its sources leave undefined.

A build with missing kernels stubbed (``--missing-kernels=stub``) links in
``render_backend_stubs(...)``: one definition per undefined function, raising op::Error with
its key, name and operators. A backend built from its yaml alone has no IR runtime either:
``render_standin_runtime`` is the header that stands in for backends/<key>/ir.h
(csrc/backends/support/standin_ir_runtime.h, brought into the backend's namespace).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ...api import dispatcher
from ...api.bindings import Binding, params
from ...api.symbols import symbol
from ...errors import Location
from ...model.backend_yaml import BackendYaml
from ...model.dispatch_keys import DispatchKey
from ...model.native_function import NativeFunction
from ..engine import layout
from .backend import BackendGroupCodegen
from .lazy import kernel_name, lowers_eagerly, needs_shape_function, qualified, runtime_header
from .missing_kernels import Missing
from ..engine.render import render

STANDIN_RUNTIME = "backends/support/standin_ir_runtime.h"
# The IR runtime's helpers the generated kernels call in the backend's namespace (lazy.py).
RUNTIME_HELPERS = ("common_device", "default_device", "ir_value", "scalar_operand", "symint_operand",
                   "reuse_or_make", "make_tensor")


@dataclass(frozen=True)
class HandWritten:
    """One function a backend's yaml makes it write."""
    what: str                       # "kernel", "lowering", "shape function"
    key: DispatchKey                # where it is called from
    qualified: str                  # torch_xla::XLANativeFunctions::abs, torch_xla::lower_abs
    returns: str
    bindings: tuple[Binding, ...]
    operators: tuple[str, ...]      # aten::abs
    location: Location              # the first operator's yaml entry

    @property
    def symbol(self) -> str:
        return symbol(self.qualified, [b.type for b in self.bindings])

    def describe(self) -> str:
        return f"{self.key} {self.what} {self.qualified} of {', '.join(self.operators)}"


def hand_written(codegen: BackendGroupCodegen) -> list[HandWritten]:
    """The group's hand-written functions, one per symbol, in declaration order."""
    backend = codegen.backend
    found: dict[str, HandWritten] = {}

    def add(item: HandWritten) -> None:
        first = found.setdefault(item.symbol, item)
        if first is not item:
            found[item.symbol] = HandWritten(first.what, first.key, first.qualified, first.returns, first.bindings,
                                             first.operators + item.operators, first.location)

    for key in (backend.backend_key, backend.autograd_key):
        index = backend.indices.get(key) if key is not None else None
        for f in codegen.group.functions:
            if index is None or not index.has_kernel(f.func.name) or codegen.ir.is_full_codegen(f):
                continue
            add(HandWritten("kernel", key, f"{codegen.kernel_scope}::{index.get(f.func.name).kernel}",
                            dispatcher.return_type(f), tuple(dispatcher.bindings(f)), (dispatcher.qualified_name(f),),
                            f.location))
    if not lowers_eagerly(backend):
        for f, node in codegen.ir.nodes:
            name = kernel_name(f, node)
            if f.func.name in backend.full_codegen and needs_shape_function(backend, f):
                add(_ir_function("shape function", backend, f"compute_shape_{name}", "std::vector<::op::lazy::Shape>", f))
            add(_ir_function("lowering", backend, f"lower_{name}", "std::vector<::op::TensorBase>", f))
    return list(found.values())


def _ir_function(what: str, backend: BackendYaml, name: str, returns: str, f: NativeFunction) -> HandWritten:
    return HandWritten(what, backend.backend_key, f"{backend.cpp_namespace}::{name}", returns,
                       tuple(dispatcher.bindings(f)), (dispatcher.qualified_name(f),), f.location)


def render_backend_stubs(backend: BackendYaml, missing: Iterable[Missing]) -> str:
    """The stubs' translation unit (``missing``: link_check's finds, each a HandWritten of its
    group): the headers declaring them (each group's), then one definition per function at global
    scope (it must enclose both op and the backend's namespace), with a trailing return type so
    that the types resolve in the function's scope."""
    ordered = sorted(missing, key=lambda m: (m.group, m.declaration.symbol))
    key = backend.backend_key
    includes = set()
    for m in ordered:
        header = layout.backend_native_header if m.declaration.what == "kernel" else layout.backend_ir_header
        includes.add(header(key, m.group))
    stubs = [{"qualified": m.declaration.qualified, "returns": m.declaration.returns,
              "params": qualified(params(m.declaration.bindings, with_defaults=False)),
              "message": f"{m.declaration.describe()} is not implemented"} for m in ordered]
    return render("backend_stubs.cpp.j2", backend=str(key), stubs=stubs, includes=sorted(includes))


def render_standin_runtime(backend: BackendYaml) -> str:
    """backends/<key>/ir.h of a backend built without its own IR runtime."""
    return render("standin_ir_runtime.h.j2", backend=str(backend.backend_key), header=runtime_header(backend),
                  support=STANDIN_RUNTIME, namespace=backend.cpp_namespace, helpers=RUNTIME_HELPERS)
