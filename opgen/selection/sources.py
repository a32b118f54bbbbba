"""Hand-written C++ and the operator groups it needs, from the per-group headers it includes.

A source *implements* the groups whose ``ops/<g>_native.h`` or ``ops/<g>_meta.h`` it includes
(it defines their kernels) and *calls* those whose ``ops/<g>.h``, ``ops/<g>_ops.h`` or
``ops/<g>_methods.h`` it includes; hand-written headers it includes count as its own text, so a
header that includes ``ops/mm.h`` makes every source including it a caller of mm. An umbrella
header (``Functions.h``, ...) names every group.

The paths are the caller's (``csrc/native/matmul.cpp``); an include is resolved beside the file
that includes it, else as the tail of a known path (``native/stubs.h`` -> ``csrc/native/stubs.h``).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Collection, Mapping, Optional

from ..runtime_layers import Compiled, directories
from .includes import OPS_PREFIX, HeaderKind, includes, is_umbrella, ops_header

COMPILED_SUFFIXES = (".cpp", ".cc", ".c", ".cu")
HEADER_SUFFIXES = (".h", ".hpp", ".cuh", ".inc")
# The repository's runtime (its library's layers, and the Python extension: runtime_layers.py): always
# compiled. The kernels of yaml/native_functions.yaml (the kernels' layer): compiled as the groups
# they implement are selected.
RUNTIME_DIRS = directories(Compiled.LIBRARY, Compiled.EXTENSION)
KERNEL_DIRS = directories(Compiled.KERNELS)
# Runtime sources compiled into the Python extension, not the library: the groups they call are
# in every build, but their objects are not the library's (size reports leave them out).
EXTENSION_DIRS = directories(Compiled.EXTENSION)


@dataclass(frozen=True)
class SourceFacts:
    """What one compiled hand-written source needs of the generated code."""

    path: str
    implements: tuple[str, ...]   # groups, sorted
    calls: tuple[str, ...]        # groups, sorted (a composite may call a group it implements too)
    umbrellas: tuple[str, ...]    # umbrella headers it includes, directly or through its headers
    unresolved: tuple[str, ...] = ()  # ops/ headers it includes that are no group's of the model
    backward_only: bool = False   # marked BACKWARD_ONLY: its calls serve backward passes only


    @property
    def is_support(self) -> bool:
        """Implements no group (loops, helpers): compiled in every build that has it."""
        return not self.implements


@dataclass(frozen=True)
class HandWritten:
    """The compiled sources among what the caller passed, and which of them are the runtime."""

    sources: Mapping[str, SourceFacts]       # path -> facts, compiled sources only
    runtime: frozenset[str] = frozenset()
    implementers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # group -> sources, sorted

    def always_compiled(self) -> list[str]:
        """Runtime sources and support code, sorted."""
        return sorted(p for p, facts in self.sources.items() if p in self.runtime or facts.is_support)


# A source's own line marking it as code that runs in backward passes only (the autograd engine,
# gradient accumulation, hooks, formula helpers): it is compiled as any other, but the groups it
# calls are kept only when the selection trains something (closure.py). A selection used for
# inference alone never runs a backward pass; calling backward() in its build raises naming the
# left-out operator, like any operator outside the selection.
BACKWARD_ONLY = re.compile(r"^// opgen: backward only\b", re.MULTILINE)


def index_sources(sources: Mapping[str, str], groups: Collection[str], runtime: Collection[str] = ()) -> HandWritten:
    """The facts of every compiled source in ``sources`` (path -> text; headers are followed, not
    compiled) against the model's ``groups``; ``runtime`` names the sources that are the runtime."""
    groups = frozenset(groups)
    resolver = _Resolver(sources)
    facts = {}
    for path in sorted(sources):
        if path.endswith(COMPILED_SUFFIXES):
            facts[path] = _facts(path, resolver, groups)
    implementers: dict[str, list[str]] = {}
    for path, fact in facts.items():
        for group in fact.implements:
            implementers.setdefault(group, []).append(path)
    return HandWritten(facts, frozenset(p for p in runtime if p in facts),
                       {g: tuple(paths) for g, paths in sorted(implementers.items())})


def _facts(path: str, resolver: "_Resolver", groups: frozenset[str]) -> SourceFacts:
    implements, calls, umbrellas, unresolved = set(), set(), set(), set()
    seen, pending = {path}, [path]
    while pending:
        current = pending.pop()
        for included in includes(resolver.text(current)):
            local = resolver.resolve(included, current)
            if local is not None:
                if local not in seen:
                    seen.add(local)
                    pending.append(local)
                continue
            if is_umbrella(included):
                umbrellas.add(included)
            named = ops_header(included, groups)
            for group, kind in named:
                (implements if kind.implements else calls).add(group)
            if not named and included.startswith(OPS_PREFIX):
                unresolved.add(included)
    return SourceFacts(path, tuple(sorted(implements)), tuple(sorted(calls)), tuple(sorted(umbrellas)),
                       tuple(sorted(unresolved)), backward_only=bool(BACKWARD_ONLY.search(resolver.text(path))))


class _Resolver:
    def __init__(self, sources: Mapping[str, str]):
        self.sources = sources
        self.by_tail: dict[str, list[str]] = {}
        for path in sorted(sources):
            parts = path.split("/")
            for i in range(len(parts)):
                self.by_tail.setdefault("/".join(parts[i:]), []).append(path)

    def text(self, path: str) -> str:
        return self.sources[path]

    def resolve(self, included: str, from_path: str) -> Optional[str]:
        beside = os.path.normpath(os.path.join(os.path.dirname(from_path), included)).replace(os.sep, "/")
        if beside in self.sources:
            return beside
        candidates = self.by_tail.get(included)
        if not candidates:
            return None
        # the candidate nearest the including file (most leading directories in common)
        return min(candidates, key=lambda c: (-len(os.path.commonprefix([c, from_path])), c))


def read_csrc(csrc_dir: str, kernels: bool = True, backends: Collection[str] = ()) -> tuple[dict[str, str], frozenset[str]]:
    """(sources, runtime) of a checkout's csrc/ as the library compiles it: the runtime's sources
    (RUNTIME_DIRS), the kernels' (KERNEL_DIRS) when ``kernels``, those of the external
    ``backends`` built with it (backends/<name> and its python/: always compiled, as the runtime's
    are), and every header under it to follow includes through. Paths are ``<csrc's
    name>/<relative path>`` (csrc/native/mm.cpp)."""
    root = os.path.basename(os.path.normpath(csrc_dir))
    backend_dirs = tuple(d for name in sorted(backends) for d in (f"backends/{name}", f"backends/{name}/python"))
    compiled_dirs = RUNTIME_DIRS + backend_dirs + (KERNEL_DIRS if kernels else ())
    sources: dict[str, str] = {}
    runtime = set()
    for directory, dirnames, filenames in os.walk(csrc_dir):
        dirnames.sort()
        relative_dir = os.path.relpath(directory, csrc_dir).replace(os.sep, "/")
        for name in sorted(filenames):
            compiled = name.endswith(COMPILED_SUFFIXES) and relative_dir in compiled_dirs
            if not compiled and not name.endswith(HEADER_SUFFIXES):
                continue
            path = f"{root}/{name}" if relative_dir == "." else f"{root}/{relative_dir}/{name}"
            with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as handle:
                sources[path] = handle.read()
            if compiled and relative_dir in RUNTIME_DIRS + backend_dirs:
                runtime.add(path)
    return sources, frozenset(runtime)


def in_library(path: str) -> bool:
    """Whether a source of read_csrc's (``csrc/native/add.cpp``) is compiled into the library,
    rather than into the Python extension (``csrc/python/module.cpp``)."""
    parts = path.split("/")
    return not (len(parts) > 2 and parts[1] in EXTENSION_DIRS)


def read_sources(root: str, paths: Collection[str]) -> dict[str, str]:
    """{path: text} of the compiled sources ``paths`` (relative to ``root``) and of every header
    they include with quotes that exists beside the including file or under ``root``, followed
    transitively: what index_sources needs of a project that is not laid out like csrc/. Paths
    are '/'-separated, relative to ``root``."""
    texts: dict[str, str] = {}
    pending = [os.path.normpath(p).replace(os.sep, "/") for p in sorted(paths)]
    while pending:
        path = pending.pop()
        if path in texts:
            continue
        try:
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as handle:
                texts[path] = handle.read()
        except OSError:
            continue  # a source SCons builds (it does not exist yet): nothing to follow
        for included in _QUOTED.findall(texts[path]):
            for candidate in (os.path.join(os.path.dirname(path), included), included):
                candidate = os.path.normpath(candidate).replace(os.sep, "/")
                if candidate not in texts and os.path.isfile(os.path.join(root, candidate)):
                    pending.append(candidate)
                    break
    return texts


_QUOTED = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.M)


__all__ = ["BACKWARD_ONLY", "HandWritten", "HeaderKind", "SourceFacts", "in_library", "index_sources", "read_csrc", "read_sources",
           "EXTENSION_DIRS", "KERNEL_DIRS", "RUNTIME_DIRS"]
