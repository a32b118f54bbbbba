"""What a selection file asks for: operators, each with where it was written."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..errors import Location


@dataclass(frozen=True)
class SelectedOperator:
    """One entry of a selection: a name as written and the model's functions it names."""

    name: str                      # as written: aten::add.Tensor, add.Tensor, aten::add (all overloads)
    keys: tuple[str, ...]          # NativeFunction.key of each function it names, sorted
    location: Location
    is_root: bool = True
    is_used_for_training: bool = True
    include_all_overloads: bool = False
    debug_info: tuple[str, ...] = ()


@dataclass(frozen=True)
class Selection:
    """A validated selection file (torchgen's selection yaml or a plain list)."""

    source: str                                   # the file, as messages call it
    format: str                                   # "torchgen-yaml" or "list"
    operators: tuple[SelectedOperator, ...]       # file order
    include_all: Optional[Location] = None        # include_all_operators: true (where it says so)
    warnings: tuple[str, ...] = ()                # "FILE:LINE: warning: ..." lines for the caller to print

    @property
    def keys(self) -> tuple[str, ...]:
        """Every function the selection names, sorted."""
        return tuple(sorted({key for op in self.operators for key in op.keys}))

    def entry_of(self, key: str) -> Optional[SelectedOperator]:
        """The first entry naming ``key`` (an entry for the function itself before a base name's)."""
        naming = [op for op in self.operators if key in op.keys]
        naming.sort(key=lambda op: (len(op.keys) > 1, op.location))
        return naming[0] if naming else None
