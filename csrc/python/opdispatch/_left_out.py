"""Operators a selective build (scons --ops=FILE) left out: opdispatch.<name>, Tensor.<name>,
opdispatch.ops.aten.<name> and the Python operators of those still exist, and calling one
raises opdispatch.Error naming the operator and the selection file. The names come from
_op_table (LEFT_OUT, LEFT_OUT_FUNCTIONS, LEFT_OUT_METHODS), empty in a full build."""
from __future__ import annotations

from opdispatch import _C, _op_table


def error(operator: str) -> Exception:
    return _C.Error(f"{operator} is not in this build: the operator selection {_op_table.SELECTION} "
                    f"(scons --ops) does not include it")


def packet_of(overload: str) -> str:
    """aten::add_.Tensor -> aten::add_"""
    return overload.split(".")[0]


def is_left_out(overload: str) -> bool:
    return packet_of(overload) in _op_table.LEFT_OUT


def function(name: str, operator: str, method: bool = False):
    """A function (a method when ``method``) named ``name`` that raises error(operator)."""
    def left_out(*args, **kwargs):
        raise error(operator)

    left_out.__name__ = name
    left_out.__qualname__ = f"Tensor.{name}" if method else name
    left_out.__doc__ = f"{operator}: left out of this build by the operator selection {_op_table.SELECTION}."
    return left_out


def functions() -> dict[str, object]:
    """opdispatch.<name> of every left-out function."""
    return {name: function(name, f"aten::{name}") for name in _op_table.LEFT_OUT_FUNCTIONS}


def methods() -> dict[str, object]:
    """Tensor.<name> of every left-out method."""
    return {name: function(name, f"aten::{name}", method=True) for name in _op_table.LEFT_OUT_METHODS}


class LeftOutPacket:
    """opdispatch.ops.aten.<op> of an operator the build left out: calling it, or one of its
    overloads (.default, .out, ...), raises opdispatch.Error naming it and the selection."""

    def __init__(self, qualified: str):
        self._qualified = qualified
        self._overloads = _op_table.LEFT_OUT[qualified]

    def __call__(self, *args, **kwargs):
        raise error(self._qualified)

    def __getattr__(self, overload: str):
        if overload.startswith("__"):
            raise AttributeError(overload)
        qualified = self._qualified if overload == "default" else f"{self._qualified}.{overload}"
        if qualified not in self._overloads:
            raise AttributeError(f"{self._qualified} has no overload {overload!r}")
        return function(overload, qualified)

    def overloads(self) -> list[str]:
        return []  # none is registered

    def __repr__(self) -> str:
        return f"<opdispatch operator {self._qualified}: not in this build (operator selection {_op_table.SELECTION})>"
