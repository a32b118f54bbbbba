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

import os
import pickle
import tempfile
from typing import Callable, Iterable, Optional

from .gen.layers.declarations import Declaration
from .gen.layers.missing_kernels import Missing, Unresolved, resolve
from .object_symbols import NmError, SymbolMemo, nm, symbol_of  # noqa: F401  (NmError: callers catch it from here)

# Where the generated code of an operator library looks for hand-written functions.
# Kernels, meta() functions and the views' functional inverses (opgen/gen/layers/declarations.py).
IN_TREE_SCOPES = ("op::native::", "op::meta::", "op::functionalization::inverse::")


def referenced_kernels(registration_objects: Iterable[str], kernel_scope: str) -> dict[str, list[str]]:
    """{demangled kernel signature: [objects calling it]} of kernels in ``kernel_scope`` (e.g.
    op::xla::XLANativeFunctions) that the registration objects call but do not define."""
    objects = list(registration_objects)
    found: dict[str, list[str]] = {}
    # One nm for all objects; -A prefixes each line with its object, "path: U name".
    for line in nm(objects, "-C", "-u", "-A"):
        obj, _, rest = line.partition(": ")
        kind, name = symbol_of(rest)
        if kind == "U" and name.startswith(kernel_scope + "::"):
            found.setdefault(name, []).append(obj)
    return found


def undefined_by_object(objects: Iterable[str], scopes: tuple[str, ...]) -> dict[str, set[str]]:
    """{object: the symbols in ``scopes`` it uses and does not define}, for every object."""
    found: dict[str, set[str]] = {path: set() for path in objects}
    for line in nm(found, "-C", "-u", "-A"):
        obj, _, rest = line.partition(": ")
        kind, name = symbol_of(rest)
        if kind == "U" and name.startswith(scopes):
            found[obj].add(name)
    return found


def defined_symbols(objects: Iterable[str], *flags: str) -> set[str]:
    """The functions ``objects`` define (``flags``: -D for a shared library's exported ones)."""
    names = set()
    for line in nm(objects, "-C", "--defined-only", *flags):
        kind, name = symbol_of(line)
        if kind and kind.upper() in ("T", "W"):
            names.add(name)
    return names


def missing_kernels(registration_objects: Iterable[str], backend_objects: Iterable[str], kernel_scope: str) -> dict[str, list[str]]:
    """{expected signature: [registration objects needing it]} of kernels nothing defines."""
    wanted = referenced_kernels(registration_objects, kernel_scope)
    defined = defined_symbols(backend_objects)
    return {name: objs for name, objs in sorted(wanted.items()) if name not in defined}


class Resolutions:
    """Each group's resolution (link_check's Missing and Unresolved) remembered between builds in
    ``path`` (None: not at all), under the group's ``identity`` (what its declarations follow
    from: its content key and the yaml lines of its functions) and its candidate symbols. Resolving
    asks for the group's declarations, ~2 ms a group: 2.6 s of an edit's check on PyTorch's yaml,
    where one group changed."""

    VERSION = 1

    def __init__(self, path: Optional[str], identity: Callable[[str], str]):
        self.path = path
        self.identity = identity
        self._recorded = self._read() if path else {}
        self._used: dict[str, tuple] = {}

    def resolve(self, group: str, declarations: Callable[[str], list[Declaration]],
                symbols: set[str]) -> tuple[list[Missing], list[Unresolved]]:
        key = (self.identity(group), tuple(sorted(symbols)))
        entry = self._recorded.get(group)
        if entry is None or entry[0] != key:
            entry = (key, resolve(group, declarations(group), symbols))
        self._used[group] = entry
        return entry[1]

    def save(self) -> None:
        if not self.path or self._used == self._recorded:
            return
        try:
            fd, temporary = tempfile.mkstemp(prefix=".resolutions-", dir=os.path.dirname(self.path) or ".")
            with os.fdopen(fd, "wb") as handle:
                pickle.dump((self.VERSION, self._used), handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temporary, self.path)
        except OSError:
            pass  # an unwritable build directory: the next check resolves every group again

    def _read(self) -> dict[str, tuple]:
        try:
            with open(self.path, "rb") as handle:
                version, entries = pickle.load(handle)
        except (OSError, ValueError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, TypeError):
            return {}
        return entries if version == self.VERSION and isinstance(entries, dict) else {}


def missing_kernels_of_library(objects_by_group: dict[str, list[str]], defining: Iterable[str],
                               declarations: Callable[[str], list[Declaration]],
                               runtime_library: Optional[str] = None,
                               scopes: tuple[str, ...] = IN_TREE_SCOPES,
                               memo: Optional[str] = None,
                               resolutions: Optional[Resolutions] = None) -> tuple[list[Missing], list[Unresolved]]:
    """The kernels an operator library's yaml names that it does not define: the symbols in
    ``scopes`` (op::native, op::meta, ...; an external backend's namespace) its groups' objects
    use, less those ``defining`` (its kernels' objects) and ``runtime_library`` (the runtime it
    links against, if any) define, as the groups' ``declarations(group)`` (anything with
    ``symbol``, ``qualified`` and ``bindings``). Only the groups with such symbols are asked for
    declarations. ``memo``: a file remembering each object's symbols (object_symbols.py), so a
    build that recompiled a few objects reads only those; ``resolutions``: the groups'
    resolutions remembered likewise."""
    group_of = {obj: group for group, objects in objects_by_group.items() for obj in objects}
    symbols = SymbolMemo(memo, scopes)
    undefined: dict[str, set[str]] = {}
    for obj, names in symbols.undefined(sorted(group_of)).items():
        undefined.setdefault(group_of[obj], set()).update(names)
    defined = {name for names in symbols.defined(defining).values() for name in names}
    symbols.save()
    candidates = {group: names - defined for group, names in undefined.items() if names - defined}
    if candidates and runtime_library:
        defined = defined_symbols([runtime_library], "-D")
        candidates = {group: names - defined for group, names in candidates.items() if names - defined}
    resolutions = resolutions or Resolutions(None, str)
    missing, unresolved = [], []
    for group in sorted(candidates):
        found, unknown = resolutions.resolve(group, declarations, candidates[group])
        missing += found
        unresolved += unknown
    resolutions.save()
    return missing, unresolved
