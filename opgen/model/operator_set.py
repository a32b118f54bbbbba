"""What a message says about an operator name that a native_functions.yaml does not define.

A backend yaml is written against one PyTorch version; an operator it names may have been
removed or renamed since (pytorch/xla's older yamls list `kl_div_backward` and `symeig`).  A
misspelt name gets "did you mean"; a name with no close match is said to be absent from that
yaml, naming the PyTorch version where the yaml's location tells it.
"""
from __future__ import annotations

import os
import re
from typing import Iterable, Optional

from ..errors import OPERATOR_NAME_RATIO, close_match, one_edit_apart
from .schema import OperatorName

# A PyTorch checkout keeps the yaml at <root>/aten/src/ATen/native/ and its version in <root>/version.txt.
_CHECKOUT_DEPTH = 4
_VERSION = re.compile(r"^(\d+\.\d+)")
# How ../shared/data keeps PyTorch's yamls: a folder named pytorch-<major>.<minor>.
_VERSIONED_FOLDER = re.compile(r"^pytorch-(\d+\.\d+)$")
_OVERLOADS_SHOWN = 5


def pytorch_version(yaml_path: str) -> Optional[str]:
    """'2.13' for a yaml in a PyTorch checkout or in a pytorch-2.13/ folder; None when unknown."""
    folder = os.path.dirname(os.path.abspath(yaml_path))
    root = folder
    for _ in range(_CHECKOUT_DEPTH):
        root = os.path.dirname(root)
    try:
        with open(os.path.join(root, "version.txt"), encoding="utf-8") as handle:
            match = _VERSION.match(handle.read().strip())
        if match:
            return match.group(1)
    except OSError:
        pass
    match = _VERSIONED_FOLDER.match(os.path.basename(folder))
    return match.group(1) if match else None


def describe_operator_set(yaml_path: str) -> str:
    """The yaml as messages name it: its path, and "(PyTorch 2.13's set)" when the version is known."""
    version = pytorch_version(yaml_path)
    return f"{yaml_path} (PyTorch {version}'s set)" if version else yaml_path


def _words(name: str) -> list[str]:
    return re.split(r"[_.]", name)


def misspelt(text: str, name: str) -> bool:
    """Whether ``text`` reads as ``name`` with typos: one edit in all, or one in each of some of
    its words. A name alike as a whole but for a different word is another operator, renamed or
    removed ('l1_loss_backward' is not 'nll_loss_backward', though difflib rates them 0.91)."""
    if one_edit_apart(text.casefold(), name.casefold()):
        return True
    ours, theirs = _words(text.casefold()), _words(name.casefold())
    return len(ours) == len(theirs) and all(a == b or one_edit_apart(a, b) for a, b in zip(ours, theirs))


def unknown_operator_hint(text: str, known: Iterable[OperatorName], yaml_path: str) -> str:
    """The message for ``text``, which names no operator of the yaml at ``yaml_path``."""
    known = list(known)
    where = f"'{text}' is not an operator of {describe_operator_set(yaml_path)}"
    base = text.partition(".")[0]
    overloads = [str(name) for name in known if str(name.name) == base]
    # The overloads of the same name are the likeliest meaning ('add' for add.Tensor); else any close name.
    match = close_match(text, overloads or [str(name) for name in known], OPERATOR_NAME_RATIO)
    if match is not None and misspelt(text, match):
        return f"{where}; did you mean '{match}'?"
    if overloads:
        shown = ", ".join(overloads[:_OVERLOADS_SHOWN]) + (", ..." if len(overloads) > _OVERLOADS_SHOWN else "")
        return f"{where}; its overloads there: {shown}"
    return f"{where}: renamed or removed?"
