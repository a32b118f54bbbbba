"""Loading a compiled operator library (e.g. one built by opgen's OpgenOperatorLibrary).

    lib = opdispatch.load_library("build/libmyops.so")   # its static registrations run
    opdispatch.ops.myops.scale(t, f=3.0)
    lib.close()                                          # unloaded: its operators are gone

A library stays loaded until close() (or a `with` block's end) or the end of the process,
even when the handle is dropped: operators must not vanish because a return value was
ignored. Each load_library call is one dlopen and each close() one dlclose, so a library
loaded twice unloads with the second close().
"""
from __future__ import annotations

import _ctypes
import ctypes
import errno
import importlib
import importlib.util
import os

from opdispatch import _C


class LoadedLibrary:
    """A handle to a library load_library loaded."""

    def __init__(self, path: str, handle: int):
        self.path = path
        self._handle = handle

    @property
    def loaded(self) -> bool:
        return self._handle is not None

    def close(self) -> None:
        """Unloads the library: its static registrations are undone (safe to call more than once)."""
        handle, self._handle = self._handle, None
        if handle is not None:
            _ctypes.dlclose(handle)

    def __enter__(self) -> "LoadedLibrary":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"LoadedLibrary({self.path!r}, {'loaded' if self.loaded else 'closed'})"


def load_library(path) -> LoadedLibrary:
    """Loads a shared library whose static initializers register operators and kernels.

    Raises FileNotFoundError when there is no such file, OSError when the dynamic loader
    refuses it (the loader's message: a missing symbol, a wrong architecture), and
    opdispatch.Error when one of its registrations fails (an operator defined twice, ...);
    in that case nothing of it stays registered.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(errno.ENOENT, "no such operator library", path)
    earlier_errors = len(_C._static_registration_errors())
    try:
        # RTLD_LOCAL: two libraries' own symbols never interpose on each other; both bind to the
        # libopdispatch.so this process already loaded, so they share its dispatcher.
        library = ctypes.CDLL(os.path.abspath(path), mode=os.RTLD_NOW | os.RTLD_LOCAL)
    except OSError as exc:
        raise OSError(f"cannot load operator library {path}: {exc}") from None
    errors = _C._static_registration_errors()[earlier_errors:]
    if errors:
        _ctypes.dlclose(library._handle)  # its other registrations are undone with it
        raise _C.Error(f"loading {path} failed:\n" + "\n".join(errors))
    return LoadedLibrary(path, library._handle)


def optional_extension(name: str):
    """The extension module ``opdispatch.<name>`` (a backend's, e.g. ``_xla``) when this build
    has it, else None. Looked up before it is imported: ``from opdispatch import _xla`` turns a
    missing module into a plain ImportError ("cannot import name"), which cannot be told apart
    from a backend that is built but fails to load; that one still raises here."""
    qualified = f"opdispatch.{name}"
    if importlib.util.find_spec(qualified) is None:
        return None
    return importlib.import_module(qualified)


class BackendExtension:
    """What opdispatch.<name> (a backend's Python module: xla.py, lazy.py) has in common: its
    extension ``opdispatch._<name>`` when this build has it, is_built(), device() and
    reset_metrics(); everything else raises RuntimeError, saying how to build it, without it."""

    def __init__(self, name: str):
        self.name = name
        self.module = optional_extension(f"_{name}")  # None when not built

    def is_built(self) -> bool:
        """Whether this opdispatch has the backend (scons --backend=NAME)."""
        return self.module is not None

    def device(self) -> str:
        """The backend's device name."""
        return self.name

    def require(self):
        """The extension module; RuntimeError when this build does not have it."""
        if self.module is None:
            raise RuntimeError(f"the {self.name} backend is not built into this opdispatch; "
                               f"build it with scons --backend={self.name}")
        return self.module

    def reset_metrics(self) -> None:
        """Sets the backend's counters to zero."""
        self.require().reset_metrics()
