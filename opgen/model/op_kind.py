"""Op kinds: the interned symbol an IR node carries, ``namespace::name`` (``aten::add``,
``prim::Constant``, ``lazy::cast``), as lazy tensor core's OpKind.

Backend yamls write them as torchgen reads them, C++ expressions naming a symbol: qualified
(``at::prim::Constant``, ``c10::prim::Constant``: the symbol ``prim::Constant`` in at:: / c10::),
plain (``prim::Constant``) or one of lazy tensor core's ``ltc_<name>`` constants, which stand for
``lazy_tensors::<name>`` (torch/csrc/lazy/core/ops/ltc_ops.h).  opgen stores the symbol itself,
so generated code can carry it as a value instead of the expression's text.
"""
from __future__ import annotations

import re
from typing import Optional

_IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*"
_SYMBOL = re.compile(rf"^(?:(?:at|c10)::)?({_IDENTIFIER})::({_IDENTIFIER})$")
_LTC_CONSTANT = re.compile(rf"^ltc_({_IDENTIFIER})$")
LTC_NAMESPACE = "lazy_tensors"


def parse_op_kind(text: str) -> Optional[str]:
    """``namespace::name`` for an op-kind expression of a backend yaml, None when it names none."""
    text = text.strip()
    symbol = _SYMBOL.match(text)
    if symbol:
        return f"{symbol.group(1)}::{symbol.group(2)}"
    constant = _LTC_CONSTANT.match(text)
    if constant:
        return f"{LTC_NAMESPACE}::{constant.group(1)}"
    return None


def split_op_kind(kind: str) -> tuple[str, str]:
    """(namespace, name) of a parsed op kind."""
    namespace, _, name = kind.partition("::")
    return namespace, name
