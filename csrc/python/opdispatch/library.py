"""Registering operators and kernels from Python.

    lib = Library("myops", "DEF")              # one DEF library per namespace
    lib.define("scale(Tensor x, float f=2.0) -> Tensor")
    lib.impl("scale", "CPU", scale_cpu)         # scale_cpu(x, f=2.0) -> Tensor
    lib.fallback("XLA", fn=xla_fallback)        # xla_fallback(op, keyset, *args, **kwargs)
    lib.close()                                 # undoes all of it (garbage collection does too)

Kernels receive the operator's arguments as Python objects (positional arguments
positionally, keyword-only ones by keyword) and return the result(s): one value, a tuple for
several, None for none. A kernel registered with with_keyset=True also receives the
DispatchKeySet first and can continue below its key with
`opdispatch.ops.ns.op.overload.redispatch(keyset.without_highest(), ...)`.
"""
from __future__ import annotations

from typing import Callable, Optional

from opdispatch import _C

KINDS = ("DEF", "IMPL", "FRAGMENT")


class Library:
    """A group of registrations in one namespace, undone together by close()."""

    def __init__(self, ns: str, kind: str, dispatch_key: Optional[str] = None):
        if kind not in KINDS:
            raise ValueError(f"library kind must be one of {', '.join(KINDS)}, not {kind!r}")
        self._lib = _C._Library(ns, kind, dispatch_key)
        self.ns = ns
        self.kind = kind

    def define(self, schema: str, debug: str = "") -> str:
        """Defines an operator from its schema (without the namespace); returns 'ns::name.overload'."""
        self._lib.define(schema, debug)
        return f"{self.ns}::{schema.split('(', 1)[0].strip()}"

    def impl(self, name: str, dispatch_key: str, fn: Optional[Callable] = None, debug: str = "", *,
             with_keyset: bool = False, fallthrough: bool = False) -> None:
        """A kernel for `name` ("op" or "op.overload", or a full schema) at a runtime or alias key.

        fn=None registers the built-in identity test kernel (it returns its first Tensor
        argument); fallthrough=True registers a per-operator fallthrough instead of a kernel.
        """
        self._lib.impl(name, dispatch_key, fn, debug, with_keyset, fallthrough)

    def fallback(self, dispatch_key: str, fallthrough: bool = True, *, fn: Optional[Callable] = None,
                 debug: str = "") -> None:
        """A backend fallback at a runtime key, for every operator without a kernel there.

        fn(op, keyset, *args, **kwargs) makes it a boxed Python fallback; otherwise it is a
        fallthrough (the key is skipped).
        """
        if fn is None and not fallthrough:
            raise TypeError("fallback needs fn=... or fallthrough=True")
        self._lib.fallback(dispatch_key, fn, debug)

    def close(self) -> None:
        """Undoes every registration of this library (safe to call more than once)."""
        self._lib.close()

    @property
    def num_registrations(self) -> int:
        return self._lib.num_registrations

    def __enter__(self) -> "Library":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Library({self.ns!r}, {self.kind!r}, registrations={self.num_registrations})"
