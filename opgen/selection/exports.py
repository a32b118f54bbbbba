"""What a selective library does not export: the hand-written kernels of the operator groups it
does not register, as a linker version script.

A shared library's exported symbols are roots of the linker's garbage collection
(--gc-sections, opgen/scons/link.py): a kernel with default visibility stays in the library
though no registration calls it. A family file (csrc/native/unary_ops.cpp: the kernels of many
groups) is compiled whole when one of its groups is selected, so the kernels of the others would
stay. Made local, the kernels nothing in the library calls are dropped; those a registered group
calls stay, local. Nothing outside the library may call a kernel of an operator the build does
not hold (the installed yaml lists only what it holds), so no export anyone needs is lost: the
runtime's API, dispatcher and the registered groups' kernels keep their visibility.

The symbols are the groups' declarations (gen/layers/declarations.py) as ``nm -C`` prints them:
plain kernels by their exact signature, structured kernels by their class (its impl() or meta(),
its vtable and typeinfo, which a constructor nothing calls would otherwise keep). Computing them
renders nothing but builds each left-out group's declarations: 0.2 s for our 90 groups, 2.2 s
for PyTorch's yaml less one group (each time a selective build reads its SConscripts).
"""
from __future__ import annotations

from typing import Collection, Iterable

from ..gen.engine.config import CodegenConfig
from ..gen.group import GroupCodegen
from ..gen.layers.declarations import Declaration, DeclarationKind
from ..model.loader import Model

# The declarations that are kernels: not a view's functional inverse (the runtime's functionalization).
_KERNELS = (DeclarationKind.KERNEL, DeclarationKind.IMPL, DeclarationKind.META)


def unregistered_groups(model: Model, registered: Collection[str]) -> list[str]:
    registered = set(registered)
    return sorted(g.name for g in model.operator_groups if g.name not in registered)


def hidden_patterns(declarations: Iterable[Declaration]) -> list[str]:
    """Version-script patterns (demangled C++) of ``declarations``' kernels, sorted, once each."""
    patterns = set()
    for declaration in declarations:
        if declaration.kind not in _KERNELS:
            continue
        if declaration.kind is DeclarationKind.KERNEL:
            patterns.add(declaration.symbol)
            continue
        scope = f"op::{declaration.scope}"  # a structured class: all of it
        patterns.update((f"{scope}::*", f"vtable for {scope}", f"typeinfo for {scope}", f"typeinfo name for {scope}"))
    return sorted(patterns)


def unregistered_kernels(model: Model, config: CodegenConfig, registered: Collection[str]) -> list[str]:
    """The patterns of every kernel the groups outside ``registered`` declare."""
    groups = {g.name: g for g in model.operator_groups}
    return hidden_patterns(d for name in unregistered_groups(model, registered)
                           for d in GroupCodegen(groups[name], model.indices, config).declarations)


def version_script(patterns: Collection[str]) -> str:
    """An anonymous version script making ``patterns`` local; every other symbol keeps its binding."""
    if not patterns:
        return "{ };\n"
    body = "".join(f"      {_quoted(pattern)};\n" for pattern in patterns)
    return "{\n  local:\n    extern \"C++\" {\n" + body + "    };\n};\n"


def _quoted(pattern: str) -> str:
    """A quoted pattern matches exactly (spaces, commas and '&' need quotes); a glob is left bare."""
    return pattern if "*" in pattern else f'"{pattern}"'
