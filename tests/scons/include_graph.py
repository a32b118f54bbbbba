"""Which objects of a built project depend on which files, read from the sources themselves.

Every translation unit the default build compiles (the generated ones under build/gen/ops, the
hand-written ones under csrc/) is mapped to its object and to the closure of its quoted
includes, resolved the way the build resolves them (-Icsrc -Ibuild/gen).  The edit-matrix tests
ask it which objects an edit must recompile, independently of what SCons decided.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cached_property

from opgen.gen.engine.layout import UNIT_SUFFIX
from opgen.runtime_layers import Compiled, directories

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
SEARCH_PATH = ("csrc", os.path.join("build", "gen"))
# Hand-written translation units of the default build and where their objects go
# (csrc/SConscript: shared objects for the library and the extension, plain ones for the tests).
# The library's hand-written source directories (opgen/runtime_layers.py; native/cpu walked
# under native/).
LIBRARY_SOURCE_DIRS = tuple(d for d in directories(Compiled.LIBRARY, Compiled.KERNELS) if "/" not in d)
HAND_WRITTEN = tuple((directory, ".os") for directory in LIBRARY_SOURCE_DIRS) + (("python", ".os"), ("tests", ".o"))


@dataclass(frozen=True)
class IncludeGraph:
    root: str

    def _read(self, relative: str) -> str:
        with open(os.path.join(self.root, relative), encoding="utf-8") as handle:
            return handle.read()

    def _resolve(self, name: str) -> str | None:
        for directory in SEARCH_PATH:
            candidate = os.path.join(directory, name)
            if os.path.isfile(os.path.join(self.root, candidate)):
                return candidate
        return None

    def includes(self, relative: str) -> list[str]:
        """The project files ``relative`` includes directly (system headers left out)."""
        found = (self._resolve(name) for name in _INCLUDE.findall(self._read(relative)))
        return sorted(path for path in found if path)

    def closure(self, relative: str) -> set[str]:
        seen, stack = set(), [relative]
        while stack:
            for path in self.includes(stack.pop()):
                if path not in seen:
                    seen.add(path)
                    stack.append(path)
        return seen

    @cached_property
    def objects(self) -> dict[str, str]:
        """{source: object} for every translation unit of the default --cuda=off build."""
        result = {}
        gen_ops = os.path.join("build", "gen", "ops")
        for name in sorted(os.listdir(os.path.join(self.root, gen_ops))):
            if name.endswith(UNIT_SUFFIX):  # the one object of each group; it includes the group's sources
                result[os.path.join(gen_ops, name)] = os.path.join("build", "obj", "gen", "ops", name[:-4] + ".os")
        for directory, suffix in HAND_WRITTEN:
            for parent, _, files in os.walk(os.path.join(self.root, "csrc", directory)):
                if os.path.basename(parent) == "cuda":
                    continue  # nvcc objects: not in a --cuda=off build
                for name in sorted(files):
                    if name.endswith(".cpp"):
                        source = os.path.relpath(os.path.join(parent, name), self.root)
                        inside_csrc = os.path.relpath(source, "csrc")
                        result[source] = os.path.join("build", "obj", inside_csrc[:-4] + suffix)
        return result

    def objects_depending_on(self, changed: set[str]) -> set[str]:
        """Objects whose source, or a file it includes, is in ``changed`` (project-relative paths)."""
        return {obj for source, obj in self.objects.items() if source in changed or self.closure(source) & changed}

    def objects_including_by_name(self, headers: set[str]) -> set[str]:
        """Objects whose source itself writes ``#include "<header>"`` for one of ``headers``
        (names as included: "ops/add.h"); a group's unit counts the group's sources it includes
        (a group's Autograd file includes the ops/<g>.h its formulas call)."""
        return {obj for source, obj in self.objects.items() if self._written_includes(source) & headers}

    def _written_includes(self, source: str) -> set[str]:
        names = set(_INCLUDE.findall(self._read(source)))
        if source.endswith(UNIT_SUFFIX):
            for name in list(names):
                resolved = self._resolve(name)
                if name.endswith(".cpp") and resolved:
                    names |= set(_INCLUDE.findall(self._read(resolved)))
        return names
