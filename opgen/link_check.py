"""Before linking an external backend: is every kernel its generated registrations call defined
by the backend's own objects?  Before linking an operator library: which kernels its yaml names
does no source define (``missing_kernels``: to stop the build naming them, or to stub them)?  A
missing kernel would otherwise surface as an undefined symbol when the library is loaded (or a
wall of mangled linker errors); this names each one with the signature it must have.

Works on compiled objects with binutils' ``nm``: the registrations' undefined symbols inside
the backend's kernel scope, against the symbols the backend's objects define.  Both sides are
demangled by the same tool, so the comparison is exact (overloads included).
"""
from __future__ import annotations

import subprocess
from typing import Callable, Iterable, Optional

from .gen.layers.declarations import Declaration
from .gen.layers.missing_kernels import Missing, Unresolved, resolve

# Where the generated code of an operator library looks for hand-written functions.
# Kernels, meta() functions and the views' functional inverses (opgen/gen/layers/declarations.py).
IN_TREE_SCOPES = ("op::native::", "op::meta::", "op::functionalization::inverse::")


class NmError(RuntimeError):
    pass


def _nm(objects: Iterable[str], *flags: str) -> list[str]:
    paths = list(objects)
    if not paths:
        return []
    try:
        run = subprocess.run(["nm", "-C", *flags, *paths], capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise NmError("nm (binutils) is not installed; it is needed to check the backend's kernel definitions") from exc
    if run.returncode != 0:
        raise NmError(f"nm failed: {run.stderr.strip()}")
    return run.stdout.splitlines()


def _symbol(line: str) -> tuple[str, str]:
    """(type letter, demangled name) of one `nm` line; '' for file headers and blanks."""
    text = line.strip()
    head, _, rest = text.partition(" ")
    if len(head) == 1 and rest:   # "U name": undefined symbols have no address
        return head, rest
    parts = text.split(" ", 2)
    if len(parts) == 3:   # "0000000000000000 T name" (demangled names contain spaces)
        return parts[1], parts[2]
    return "", ""


def referenced_kernels(registration_objects: Iterable[str], kernel_scope: str) -> dict[str, list[str]]:
    """{demangled kernel signature: [objects calling it]} of kernels in ``kernel_scope`` (e.g.
    op::xla::XLANativeFunctions) that the registration objects call but do not define."""
    objects = list(registration_objects)
    found: dict[str, list[str]] = {}
    # One nm for all objects; -A prefixes each line with its object, "path: U name".
    for line in _nm(objects, "-u", "-A"):
        obj, _, rest = line.partition(": ")
        kind, name = _symbol(rest)
        if kind == "U" and name.startswith(kernel_scope + "::"):
            found.setdefault(name, []).append(obj)
    return found


def undefined_by_object(objects: Iterable[str], scopes: tuple[str, ...]) -> dict[str, set[str]]:
    """{object: the symbols in ``scopes`` it uses and does not define}, for every object."""
    found: dict[str, set[str]] = {path: set() for path in objects}
    for line in _nm(found, "-u", "-A"):
        obj, _, rest = line.partition(": ")
        kind, name = _symbol(rest)
        if kind == "U" and name.startswith(scopes):
            found[obj].add(name)
    return found


def defined_symbols(objects: Iterable[str], *flags: str) -> set[str]:
    """The functions ``objects`` define (``flags``: -D for a shared library's exported ones)."""
    names = set()
    for line in _nm(objects, "--defined-only", *flags):
        kind, name = _symbol(line)
        if kind and kind.upper() in ("T", "W"):
            names.add(name)
    return names


def missing_kernels(registration_objects: Iterable[str], backend_objects: Iterable[str], kernel_scope: str) -> dict[str, list[str]]:
    """{expected signature: [registration objects needing it]} of kernels nothing defines."""
    wanted = referenced_kernels(registration_objects, kernel_scope)
    defined = defined_symbols(backend_objects)
    return {name: objs for name, objs in sorted(wanted.items()) if name not in defined}


def missing_kernels_of_library(objects_by_group: dict[str, list[str]], defining: Iterable[str],
                               declarations: Callable[[str], list[Declaration]],
                               runtime_library: Optional[str] = None,
                               scopes: tuple[str, ...] = IN_TREE_SCOPES) -> tuple[list[Missing], list[Unresolved]]:
    """The kernels an operator library's yaml names that it does not define: the symbols in
    ``scopes`` (op::native, op::meta, ...; an external backend's namespace) its groups' objects
    use, less those ``defining`` (its kernels' objects) and ``runtime_library`` (the runtime it
    links against, if any) define, as the groups' ``declarations(group)`` (anything with
    ``symbol``, ``qualified`` and ``bindings``). Only the groups with such symbols are asked for
    declarations."""
    group_of = {obj: group for group, objects in objects_by_group.items() for obj in objects}
    undefined: dict[str, set[str]] = {}
    for obj, symbols in undefined_by_object(sorted(group_of), scopes).items():
        undefined.setdefault(group_of[obj], set()).update(symbols)
    defined = defined_symbols(defining)
    candidates = {group: symbols - defined for group, symbols in undefined.items() if symbols - defined}
    if candidates and runtime_library:
        defined = defined_symbols([runtime_library], "-D")
        candidates = {group: symbols - defined for group, symbols in candidates.items() if symbols - defined}
    missing, unresolved = [], []
    for group in sorted(candidates):
        found, unknown = resolve(group, declarations(group), candidates[group])
        missing += found
        unresolved += unknown
    return missing, unresolved
