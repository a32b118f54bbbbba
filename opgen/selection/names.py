"""Operator names as a selection writes them, resolved against a Model.

A selection names an operator as torchgen does: ``aten::add.Tensor`` or ``add.Tensor`` (aten is
the default namespace), ``mm`` (or torch.ops' ``mm.default``) for an operator without overload name, ``myops::scale`` outside
aten; with ``include_all_overloads`` a base name (``aten::add``) names every overload of it.
What a name resolves to is the model's ``NativeFunction.key`` (``add.Tensor``, ``myops::scale``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Optional

from ..errors import close_match
from ..model.loader import Model
from ..model.native_function import NativeFunction

DEFAULT_NAMESPACE = "aten"
# [ns::]name[.overload]: identifiers, the name may be a dunder (__iadd__)
NAME = re.compile(r"(?:(?P<ns>[A-Za-z_]\w*)::)?(?P<base>[A-Za-z_]\w*)(?:\.(?P<overload>\w+))?")


@dataclass(frozen=True)
class ParsedName:
    namespace: str
    base: str          # the operator name without overload: add_, __iadd__, mm
    overload: str      # "" for none
    qualified: bool    # written with its namespace

    @property
    def key(self) -> str:
        """The NativeFunction.key this name means (add.Tensor, myops::scale)."""
        name = f"{self.base}.{self.overload}" if self.overload else self.base
        return name if self.namespace == DEFAULT_NAMESPACE else f"{self.namespace}::{name}"

    @property
    def base_key(self) -> str:
        """The key of the base name: what include_all_overloads selects every overload of."""
        return self.base if self.namespace == DEFAULT_NAMESPACE else f"{self.namespace}::{self.base}"


def parse_name(text: str) -> Optional[ParsedName]:
    match = NAME.fullmatch(text)
    if match is None:
        return None
    return ParsedName(match["ns"] or DEFAULT_NAMESPACE, match["base"], match["overload"] or "", match["ns"] is not None)


def torchgen_name(key: str) -> str:
    """A function's key as torchgen's selection yaml writes it: aten::add.Tensor, myops::scale."""
    return key if "::" in key else f"{DEFAULT_NAMESPACE}::{key}"


def base_key_of(f: NativeFunction) -> str:
    base = str(f.func.name.name)
    return base if f.namespace == DEFAULT_NAMESPACE else f"{f.namespace}::{base}"


class OperatorNames:
    """The model's operators by key and by base name, with suggestions for names it lacks."""

    def __init__(self, model: Model):
        self.model = model

    @cached_property
    def by_key(self) -> dict[str, NativeFunction]:
        return {f.key: f for f in self.model.functions}

    @cached_property
    def by_base(self) -> dict[str, tuple[NativeFunction, ...]]:
        """Base key (add, add_, myops::scale) -> its overloads, sorted by key."""
        found: dict[str, list[NativeFunction]] = {}
        for f in self.model.functions:
            found.setdefault(base_key_of(f), []).append(f)
        return {base: tuple(sorted(fs, key=lambda f: f.key)) for base, fs in found.items()}

    @cached_property
    def groups(self) -> dict[str, tuple[NativeFunction, ...]]:
        return {g.name: g.functions for g in self.model.operator_groups}

    def function(self, name: ParsedName) -> Optional[NativeFunction]:
        """The function a name means; ``addmm.default`` (torch.ops' name of an operator without
        overload name) means ``addmm`` where no overload is literally named default."""
        found = self.by_key.get(name.key)
        if found is None and name.overload == "default":
            found = self.by_key.get(name.base_key)
        return found

    def overloads(self, name: ParsedName) -> tuple[NativeFunction, ...]:
        """Every overload of the name's base (empty when the base names nothing)."""
        return self.by_base.get(name.base_key, ())

    def suggestion(self, text: str, name: Optional[ParsedName], all_overloads: bool = False) -> str:
        """What to say after "unknown operator 'text'": the nearest name, written as the user
        writes names (with aten:: when they did), or how to name a base's overloads."""
        if name is not None and not name.overload and not all_overloads:
            overloads = self.overloads(name)
            if overloads:
                shown = ", ".join(self._written(f.key, name) for f in overloads[:4]) + (", ..." if len(overloads) > 4 else "")
                return (f"{text} has no overload without a name; name one ({shown}), or select every overload "
                        f"with include_all_overloads: true (torchgen's yaml)")
        if name is not None and not name.qualified:
            others = sorted(key for key in self.by_key if "::" in key and key.split("::", 1)[1] == name.key)
            if others:
                return f"did you mean '{others[0]}'? (names outside aten are written with their namespace)"
        if name is not None and all_overloads and not name.overload:
            choices = {self._written(base, name): base for base in self.by_base}
        else:
            choices = {self._written(key, name): key for key in self.by_key}
        match = close_match(text, choices)
        return f"did you mean '{match}'?" if match is not None else "see `opgen ops` for the operators the yaml defines"

    @staticmethod
    def _written(key: str, name: Optional[ParsedName]) -> str:
        return torchgen_name(key) if name is not None and name.qualified else key
