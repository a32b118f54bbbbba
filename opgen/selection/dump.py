"""``write_selection``: operators recorded from a program, as torchgen's selection yaml.

Deterministic: operators sorted by name, one entry each (a root when any record of it was),
``is_used_for_training`` as the caller says (true unless an inference program) and
``include_all_overloads: false`` throughout, no timestamps
or host names, so the same program recorded twice gives the same bytes.
"""
from __future__ import annotations

from typing import Iterable

from ..writer import write_if_changed
from .names import torchgen_name

HEADER = "# Operators selected for an opdispatch build (torchgen's selection yaml; `opgen select FILE` shows the closure).\n"


def selection_yaml(operators: Iterable[tuple[str, bool]], training: bool = True) -> str:
    """The text of the selection of ``operators``: (key, is_root) pairs, keys as
    NativeFunction.key writes them (add.Tensor, myops::scale) or qualified (aten::add.Tensor)."""
    roots: dict[str, bool] = {}
    for key, is_root in operators:
        name = torchgen_name(key)
        roots[name] = roots.get(name, False) or bool(is_root)
    if not roots:
        return HEADER + "operators: {}\n"
    lines = [HEADER, "operators:\n"]
    for name in sorted(roots):
        lines.append(f"  {name}:\n"
                     f"    is_root_operator: {'true' if roots[name] else 'false'}\n"
                     f"    is_used_for_training: {'true' if training else 'false'}\n"
                     f"    include_all_overloads: false\n")
    return "".join(lines)


def write_selection(path: str, operators: Iterable[tuple[str, bool]], training: bool = True) -> bool:
    """Writes the selection of ``operators`` to ``path`` (only when its bytes change); True when written."""
    return write_if_changed(path, selection_yaml(operators, training))
