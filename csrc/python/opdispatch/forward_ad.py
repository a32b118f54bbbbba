"""opdispatch.autograd.forward_ad: forward-mode automatic differentiation, PyTorch's
torch.autograd.forward_ad over csrc/autograd/forward_ad.h.

    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, tangent)   # an alias of primal carrying tangent
        y = f(x)                                     # each operator computes its output's tangent
        y_p, y_t = forward_ad.unpack_dual(y)         # y_t = J(primal) @ tangent

One level at a time (nested levels raise, as in PyTorch today); exiting the level drops every
tangent made in it. Tangents come from derivatives.yaml's forward formulas (`result:`,
auto_element_wise, auto_linear); an operator without one raises "Trying to use forward AD with
<name> that does not support it ...".
"""
from __future__ import annotations

from collections import namedtuple

from opdispatch import _C

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual"]

_current_level = None


def enter_dual_level() -> int:
    """Enters a new forward level and returns its number (0: levels do not nest)."""
    global _current_level
    level = _C._enter_dual_level()
    _current_level = level
    return level


def exit_dual_level(*, level=None) -> None:
    """Exits the current forward level (its tangents are cleared)."""
    global _current_level
    level = _current_level if level is None else level
    if level is None:
        raise _C.Error("Trying to exit a forward AD level that was not the last one that was created. "
                       "This is not supported.")
    _C._exit_dual_level(level)
    _current_level = None


def make_dual(tensor, tangent, *, level=None):
    """An alias of `tensor` (with its autograd history) whose tangent is `tangent` (same size,
    dtype and device), at the current level."""
    if level is None:
        level = _current_level
    if level is None:
        raise _C.Error("To create a dual Tensor, you must be inside a dual level: use "
                       "`with forward_ad.dual_level():` (no level exists, enter_dual_level() first).")
    if not isinstance(tensor, _C.Tensor) or not isinstance(tangent, _C.Tensor):
        raise TypeError("make_dual expects a Tensor primal and a Tensor tangent")
    return _C._make_dual(tensor, tangent)


UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])


def unpack_dual(tensor, *, level=None):
    """(primal, tangent): a view of `tensor` without its tangent, and the tangent (None when it has
    none, or outside a level: then primal is `tensor` itself)."""
    if level is None:
        level = _current_level
    if level is None or not isinstance(tensor, _C.Tensor):
        return UnpackedDualTensor(tensor, None)
    primal, tangent = _C._unpack_dual(tensor)
    return UnpackedDualTensor(primal, tangent)


class dual_level:
    """Context manager of one forward level: `with dual_level(): ...`."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> None:
        exit_dual_level()
