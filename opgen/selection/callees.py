"""What a group's generated code calls of other groups, read from the files themselves.

A group's files are rendered by the codegen engine (GroupCodegen, the one ``opgen generate`` and
the SCons tool use) and their ``#include "ops/<g>.h"`` / ``"ops/<g>_ops.h"`` lines scanned: the
composites and view copies opgen writes, Functionalize kernels calling ``<view>_copy``, Autograd
formulas calling other operators. Only the groups asked for are rendered, each once.
"""
from __future__ import annotations

import dataclasses
import threading
from functools import cached_property

from ..gen.engine.config import CodegenConfig
from ..gen.group import GroupCodegen
from ..model.loader import Model
from .includes import includes, ops_header


class GeneratedCallees:
    """``callees(group)`` -> ((callee group, generated file that calls it), ...), sorted; memoized.

    Usable wherever close_selection wants ``generated_includes``."""

    def __init__(self, model: Model, config: CodegenConfig):
        self.model = model
        self.config = config
        self._groups = {g.name: g for g in model.operator_groups}
        self._memo: dict[str, tuple[tuple[str, str], ...]] = {}
        self._lock = threading.Lock()
        self.rendered = 0  # groups rendered so far (for reports and tests)

    @cached_property
    def inference(self) -> "GeneratedCallees":
        """The same, for groups used for no training: rendered without the autograd layer, so an
        autograd formula's callees are not theirs."""
        if not self.config.generates_autograd:
            return self
        everything = frozenset(self._groups)
        return GeneratedCallees(self.model, dataclasses.replace(self.config, inference=everything))

    def __call__(self, group: str) -> tuple[tuple[str, str], ...]:
        with self._lock:
            if group in self._memo:
                return self._memo[group]
        found = self._scan(group)
        with self._lock:
            self._memo[group] = found
        return found

    def _scan(self, group: str) -> tuple[tuple[str, str], ...]:
        operator_group = self._groups.get(group)
        if operator_group is None:
            return ()
        files = GroupCodegen(operator_group, self.model.indices, self.config).render()
        with self._lock:
            self.rendered += 1
        found = set()
        for path, text in files.items():
            for included in includes(text):
                for callee, _kind in ops_header(included, self._groups):
                    if callee != group:  # a header of another group: it must be generated
                        found.add((callee, path))
        return tuple(sorted(found))


def generated_callees(model: Model, config: CodegenConfig) -> GeneratedCallees:
    return GeneratedCallees(model, config)
