"""Functionalization from Python: run a function so that the layer below the Functionalize key
sees only functional, non-aliasing operators.

    import opdispatch as od
    def f(x):
        y = x.view(4)       # a view ...
        y.add_(1)           # ... mutated: x changes too
        return x * 2
    od.functionalize(f)(od.ones([2, 2]))          # same result as f, and the input is mutated once
    outputs, calls = od.functionalization.trace(f, od.ones([2, 2]))
    calls   # ['aten::view_copy.default', 'aten::add.Tensor', 'aten::view_copy.default', 'aten::mul.Tensor']

A functional tensor wraps a plain one; its aliases share one functional storage and see each
other's mutations (csrc/functionalization/functionalization.h). is_functional / to_functional /
from_functional convert by hand.
"""
from __future__ import annotations

import functools

from opdispatch import _C

__all__ = ["functionalize", "trace", "is_functional", "to_functional", "from_functional"]


def is_functional(t) -> bool:
    """Whether t is a functional tensor wrapper."""
    return isinstance(t, _C.Tensor) and _C._is_functional(t)


def to_functional(t: _C.Tensor) -> _C.Tensor:
    """A functional tensor over t's value (a new functional storage; t itself is not changed)."""
    _check_tensor("to_functional", t)
    return _C._to_functional(t)


def from_functional(t: _C.Tensor) -> _C.Tensor:
    """The current value of functional tensor t, as a plain tensor."""
    _check_tensor("from_functional", t)
    return _C._from_functional(t)


def _check_tensor(name: str, t) -> None:
    if not isinstance(t, _C.Tensor):
        raise TypeError(f"{name}: expected an opdispatch.Tensor, got {type(t).__name__}")


def _map(value, fn):
    if isinstance(value, _C.Tensor):
        return fn(value)
    if isinstance(value, (list, tuple)):
        mapped = [_map(v, fn) for v in value]
        return type(value)(mapped) if isinstance(value, list) else tuple(mapped)
    if isinstance(value, dict):
        return {k: _map(v, fn) for k, v in value.items()}
    return value


def _run(fn, args, kwargs):
    """fn on functional copies of the tensor arguments; results unwrapped; mutated inputs
    written back into the caller's tensors (once each)."""
    originals: list[tuple[_C.Tensor, _C.Tensor]] = []

    def wrap(t):
        if _C._is_functional(t):
            w = t
        else:
            w = _C._to_functional(t)
            if t.requires_grad:  # autograd runs above the layer: fn may differentiate w.r.t. its inputs
                w.requires_grad_(True)  # (torch's _mirror_autograd_meta_to: the wrapper is a leaf)
        originals.append((t, w))
        return w

    wrapped_args = _map(list(args), wrap)
    wrapped_kwargs = _map(dict(kwargs), wrap)
    with _C._FunctionalizeMode():
        result = fn(*wrapped_args, **wrapped_kwargs)
    result = _map(result, lambda t: _C._from_functional(t) if _C._is_functional(t) else t)
    for original, w in originals:
        if original is w:
            continue
        value = _C._from_functional(w)
        if not value.is_alias_of(original):  # the input was mutated: its value is a new tensor
            _copy_back(original, value)
    return result


def _copy_back(original: _C.Tensor, value: _C.Tensor) -> None:
    from opdispatch import ops  # noqa: PLC0415 - ops imports the package
    if list(original.shape) != list(value.shape):
        raise _C.Error(f"functionalize: an input of shape {tuple(original.shape)} was resized to "
                       f"{tuple(value.shape)} inside the function; resizing inputs is not supported")
    ops.aten.copy_.default(original, value)


def functionalize(fn):
    """A function that runs fn functionalized: its tensor arguments become functional tensors,
    every view and mutation inside becomes a functional operator, results come back as plain
    tensors and each mutated input is updated in the caller's tensor at the end."""
    if not callable(fn):
        raise TypeError(f"functionalize: expected a callable, got {type(fn).__name__}")

    @functools.wraps(fn)
    def run(*args, **kwargs):
        return _run(fn, args, kwargs)

    return run


def trace(fn, *args, **kwargs):
    """(outputs, calls): fn run as functionalize(fn) would, and the operator calls the
    Functionalize layer issued to the layer below, in order, as "aten::name.overload" strings."""
    if not callable(fn):
        raise TypeError(f"functionalization.trace: expected a callable, got {type(fn).__name__}")
    _C._start_trace()
    try:
        outputs = _run(fn, args, kwargs)
    finally:
        calls = _C._stop_trace()
    return outputs, calls
