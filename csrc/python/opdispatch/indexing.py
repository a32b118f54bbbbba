"""x[...] with ints, slices, None and Ellipsis (basic indexing: always a view), assignment
through such a view, and iteration over the first dimension.

x[1] is x.select(0, 1), x[:, 1:3] is x.slice(1, 1, 3), x[None] is x.unsqueeze(0). Tensor
(advanced) indices are not supported.
"""
from __future__ import annotations

import operator

from opdispatch import _C
from opdispatch.creation import tensor


def _as_index(item):
    """The int an index item stands for, or None when it is not int-like (bools are not)."""
    if isinstance(item, bool):
        return None
    try:
        return operator.index(item)
    except TypeError:
        return None


def _consumes_dimension(item) -> bool:
    return isinstance(item, slice) or _as_index(item) is not None


def __getitem__(self, index):
    items = index if isinstance(index, tuple) else (index,)
    consumed = sum(1 for item in items if _consumes_dimension(item))
    if consumed > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()} ({consumed} given)")
    if sum(1 for item in items if item is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    result, dim, source_dim = self, 0, 0  # dim: in result; source_dim: in self, for messages
    for item in items:
        if item is None:
            result = result.unsqueeze(dim)
            dim += 1
        elif item is Ellipsis:
            dim += self.dim() - consumed
            source_dim += self.dim() - consumed
        elif isinstance(item, slice):
            step = 1 if item.step is None else operator.index(item.step)
            if step <= 0:
                raise ValueError(f"slice step must be positive, not {step}")
            result = result.slice(dim, item.start, item.stop, step)
            dim += 1
            source_dim += 1
        else:
            i = _as_index(item)
            if i is None:
                raise TypeError(f"Tensor indices must be ints, slices, None or ..., not {type(item).__name__}")
            size = result.shape[dim]
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of range for dimension {source_dim} with size {size}")
            result = result.select(dim, i if i >= 0 else i + size)
            source_dim += 1
    return result


def __setitem__(self, index, value) -> None:
    target = __getitem__(self, index)
    if isinstance(value, _C.Tensor):
        target.copy_(value)
    elif isinstance(value, (bool, int, float)):
        target.fill_(value)
    else:
        target.copy_(tensor(value, dtype=self.dtype))


def __iter__(self):
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (self.select(0, i) for i in range(self.shape[0]))


def install_indexing(tensor_type: type) -> None:
    for function in (__getitem__, __setitem__, __iter__):
        setattr(tensor_type, function.__name__, function)
