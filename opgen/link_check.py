"""Before linking an external backend: is every kernel its generated registrations call defined
by the backend's own objects?  A missing kernel would otherwise surface as an undefined symbol
when the library is loaded (or a wall of mangled linker errors); this names each one with the
signature it must have.

Works on compiled objects with binutils' ``nm``: the registrations' undefined symbols inside
the backend's kernel scope, against the symbols the backend's objects define.  Both sides are
demangled by the same tool, so the comparison is exact (overloads included).
"""
from __future__ import annotations

import subprocess
from typing import Iterable


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


def defined_symbols(objects: Iterable[str]) -> set[str]:
    names = set()
    for line in _nm(objects, "--defined-only"):
        kind, name = _symbol(line)
        if kind and kind.upper() in ("T", "W"):
            names.add(name)
    return names


def missing_kernels(registration_objects: Iterable[str], backend_objects: Iterable[str], kernel_scope: str) -> dict[str, list[str]]:
    """{expected signature: [registration objects needing it]} of kernels nothing defines."""
    wanted = referenced_kernels(registration_objects, kernel_scope)
    defined = defined_symbols(backend_objects)
    return {name: objs for name, objs in sorted(wanted.items()) if name not in defined}
