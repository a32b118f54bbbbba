"""repr()/str() of tensors, in the layout PyTorch users know:

    tensor([[1., 2.],
            [3., 4.]])
    tensor([1, 2], dtype=int32)
    tensor([0.1000, 2.5000], device='xla')
    tensor(..., device='meta', size=(2, 3))
    tensor([1., 2.], requires_grad=True)
    tensor(5., grad_fn=<SumBackward0>)

Values share one width per tensor (right-aligned). Floats print with 4 decimals, as integers
with a trailing '.' when all are whole, or in scientific notation when their magnitudes span
too much. dtype= is shown when the printed values do not already imply it (bool, int64 and
float32 do); then the backward node that made the tensor (grad_fn=), or requires_grad=True
for a leaf that requires grad. Tensors over SUMMARY_THRESHOLD elements show EDGE_ITEMS values at each end of
every dimension with '...' between.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from opdispatch import _C
from opdispatch.creation import move_to

SUMMARY_THRESHOLD = 1000
EDGE_ITEMS = 3
LINE_WIDTH = 80
PRECISION = 4
PREFIX = "tensor("

# Printed values look like these dtypes' (True, 1, 1.), so they need no dtype= suffix.
_IMPLIED_BY_VALUES = {_C.bool, _C.int64, _C.float32}


def _host_values(t: _C.Tensor):
    """The values as a numpy array, or None when they cannot be read (meta tensors, devices
    whose memory the host cannot copy)."""
    if t.device == "meta":
        return None
    try:
        return (t if t.device == "cpu" else move_to(t, "cpu")).numpy()
    except (RuntimeError, TypeError):
        return None


def _edges(n: int, summarise: bool) -> list[int]:
    """Indices shown along a dimension of size n; -1 marks the '...'."""
    if summarise and n > 2 * EDGE_ITEMS:
        return list(range(EDGE_ITEMS)) + [-1] + list(range(n - EDGE_ITEMS, n))
    return list(range(n))


def _shown_values(a: np.ndarray, summarise: bool) -> np.ndarray:
    """The values that will be printed, flattened (the formatter's width depends only on them)."""
    if not summarise:
        return a.reshape(-1)
    for axis in range(a.ndim):
        keep = [i for i in _edges(a.shape[axis], True) if i >= 0]
        a = np.take(a, keep, axis=axis)
    return a.reshape(-1)


def _float_formatter(values: np.ndarray) -> Callable[[float], str]:
    finite = values[np.isfinite(values)].astype(np.float64)
    nonzero = np.abs(finite[finite != 0])
    whole = bool(np.all(finite == np.ceil(finite)))
    largest = float(nonzero.max()) if nonzero.size else 0.0
    smallest = float(nonzero.min()) if nonzero.size else 0.0
    if whole:
        scientific = largest > 1e8
    else:
        scientific = nonzero.size > 0 and (largest / smallest > 1e3 or largest > 1e8 or smallest < 1e-4)

    def fmt(v: float) -> str:
        if not math.isfinite(v):
            return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
        if scientific:
            return f"{v:.{PRECISION}e}"
        return f"{v:.0f}." if whole else f"{v:.{PRECISION}f}"

    return fmt


def _element_formatter(values: np.ndarray) -> Callable[[object], str]:
    """str of one element, padded to the width of the widest value shown."""
    if values.dtype == np.bool_:
        base: Callable = lambda v: "True" if v else "False"
    elif values.dtype.kind == "f":
        base = _float_formatter(values)
    else:
        base = str
    width = max((len(base(v)) for v in values.tolist()), default=0)
    return lambda v: base(v).rjust(width)


def _format_array(a: np.ndarray, fmt, indent: int, summarise: bool) -> str:
    """Nested brackets; `indent` is the column of a's opening bracket."""
    if a.ndim == 0:
        return fmt(a.item())
    if a.ndim == 1:
        items = ["..." if i < 0 else fmt(a[i].item()) for i in _edges(a.shape[0], summarise)]
        width = max((len(s) for s in items), default=0)
        items = [s.rjust(width) for s in items]  # '...' lines up with the values of other rows
        per_line = max(1, (LINE_WIDTH - indent - 1) // (width + 2))  # ", " after each
        lines = [", ".join(items[k:k + per_line]) for k in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = ["..." if i < 0 else _format_array(a[i], fmt, indent + 1, summarise) for i in _edges(a.shape[0], summarise)]
    separator = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(rows) + "]"


def _size(t: _C.Tensor) -> str:
    return "size=" + repr(tuple(t.shape))


def _autograd_suffix(t: _C.Tensor) -> list[str]:
    grad_fn = t.grad_fn
    if grad_fn is not None:
        return [f"grad_fn=<{grad_fn.name().rsplit('::', 1)[-1]}>"]
    return ["requires_grad=True"] if t.requires_grad else []


def tensor_repr(t: _C.Tensor) -> str:
    suffixes = [] if t.device == "cpu" else [f"device='{t.device}'"]
    values = _host_values(t)
    if values is None:
        body = "..."
        suffixes.append(_size(t))
        implied = t.dtype is _C.float32  # no values to tell the dtype by; float32 is the default
    elif values.size == 0:
        body = "[]"
        if values.ndim != 1:
            suffixes.append(_size(t))
        implied = t.dtype is _C.float32
    else:
        summarise = values.size > SUMMARY_THRESHOLD
        fmt = _element_formatter(_shown_values(values, summarise))
        body = _format_array(values, fmt, len(PREFIX), summarise)
        implied = t.dtype in _IMPLIED_BY_VALUES
    if not implied:
        suffixes.append(f"dtype={t.dtype.name}")
    suffixes += _autograd_suffix(t)
    return PREFIX + ", ".join([body] + suffixes) + ")"


def install_printing(tensor_type: type) -> None:
    tensor_type.__repr__ = tensor_repr
    tensor_type.__str__ = tensor_repr
