"""Grad mode: whether operators record history for backward. Thread-local and on by default,
like PyTorch's:

    with opdispatch.no_grad():          # results made here do not require grad
        y = x * 2
    @opdispatch.no_grad()               # the same for every call of f (also @opdispatch.no_grad)
    def f(x): ...
    with opdispatch.enable_grad(): ...  # records again inside no_grad
    opdispatch.set_grad_enabled(False)  # sets it now; `with set_grad_enabled(mode):` restores it after

Each context manager restores the mode it found on exit, so they nest.
"""
from __future__ import annotations

import functools
import inspect

from opdispatch import _C

is_grad_enabled = _C.is_grad_enabled


class _GradModeContext:
    """Sets grad mode to `_mode` on enter and restores the previous mode on exit; as a decorator,
    around each call of the function (a generator function: around each step of the generator)."""

    _mode: bool

    def __enter__(self) -> None:
        self._previous = _C.is_grad_enabled()
        _C._set_grad_enabled(self._mode)

    def __exit__(self, *exc_info) -> None:
        _C._set_grad_enabled(self._previous)

    def clone(self):
        return self.__class__()

    def __call__(self, function):
        if inspect.isclass(function):
            raise TypeError(f"{type(self).__name__} decorates functions, not classes")
        if inspect.isgeneratorfunction(function):
            return self._wrap_generator(function)

        @functools.wraps(function)
        def decorated(*args, **kwargs):
            with self.clone():
                return function(*args, **kwargs)

        return decorated

    def _wrap_generator(self, function):
        @functools.wraps(function)
        def decorated(*args, **kwargs):
            generator = function(*args, **kwargs)
            try:
                with self.clone():
                    response = generator.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            generator.close()
                        raise
                    except BaseException as error:  # noqa: BLE001 - forwarded into the generator
                        with self.clone():
                            response = generator.throw(error)
                    else:
                        with self.clone():
                            response = generator.send(request)
            except StopIteration as stop:
                return stop.value

        return decorated


class _NoParameterContext(_GradModeContext):
    """Also usable as a bare decorator: @no_grad as well as @no_grad()."""

    def __new__(cls, function=None):
        if function is None:
            return super().__new__(cls)
        return cls()(function)


class no_grad(_NoParameterContext):  # noqa: N801 - PyTorch's name
    """Operators called in this context record no history: their results do not require grad,
    even when their inputs do. Thread-local; usable as a decorator."""

    _mode = False


class enable_grad(_NoParameterContext):  # noqa: N801 - PyTorch's name
    """Operators record history again (inside no_grad). Thread-local; usable as a decorator."""

    _mode = True


class set_grad_enabled(_GradModeContext):  # noqa: N801 - PyTorch's name
    """set_grad_enabled(mode): sets grad mode at once; as a context manager, restores the mode
    it found when the block ends; as a decorator, sets `mode` around each call."""

    def __init__(self, mode: bool) -> None:
        self._mode = bool(mode)
        self._previous = _C.is_grad_enabled()
        _C._set_grad_enabled(self._mode)

    def __enter__(self) -> None:
        pass  # set in __init__ already

    def __call__(self, function):
        _C._set_grad_enabled(self._previous)  # as a decorator, it sets the mode only during calls
        return super().__call__(function)

    def clone(self):
        return _EnterSets(self._mode)


class _EnterSets(_GradModeContext):
    """set_grad_enabled's mode, set on enter (what a decorated function's calls use)."""

    def __init__(self, mode: bool) -> None:
        self._mode = mode

    def clone(self):
        return _EnterSets(self._mode)
