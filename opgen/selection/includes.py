"""``#include`` lines, and what a per-group header's name says: which group, which header.

A group's headers are ``ops/<g>.h`` (its C++ API), ``ops/<g>_ops.h`` (operator handles),
``ops/<g>_native.h`` (kernel declarations), ``ops/<g>_meta.h`` (structured meta classes) and
``ops/<g>_methods.h``; the umbrella headers (layout.UMBRELLAS) name every group.
"""
from __future__ import annotations

import re
from enum import Enum
from typing import Collection, Iterator

from ..gen.engine import layout

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^">\n]+)[">]', re.M)
OPS_PREFIX = layout.OPS_DIR + "/"


class HeaderKind(Enum):
    API = ""             # ops/<g>.h
    HANDLES = "_ops"     # ops/<g>_ops.h
    NATIVE = "_native"   # ops/<g>_native.h
    META = "_meta"       # ops/<g>_meta.h
    METHODS = "_methods"  # ops/<g>_methods.h

    @property
    def calls(self) -> bool:
        """Including it means calling the group's operators (through op:: or its handles)."""
        return self in (HeaderKind.API, HeaderKind.HANDLES, HeaderKind.METHODS)

    @property
    def implements(self) -> bool:
        """Including it means defining the group's kernels (its declarations and meta classes)."""
        return self in (HeaderKind.NATIVE, HeaderKind.META)


def includes(text: str) -> Iterator[str]:
    """The paths a C++ file includes, in order (conditional ones too: the scan is conservative)."""
    return (m.group(1).strip() for m in INCLUDE.finditer(text))


def ops_header(path: str, groups: Collection[str]) -> list[tuple[str, HeaderKind]]:
    """The (group, kind) pairs an include path can mean among ``groups``: one, none for a path
    that is no group's header, or several where names collide (ops/foo_ops.h with groups foo and
    foo_ops: both are taken, so a closure errs on the side of more)."""
    if not path.startswith(OPS_PREFIX) or not path.endswith(".h") or "/" in path[len(OPS_PREFIX):]:
        return []
    stem = path[len(OPS_PREFIX):-2]
    found = []
    for kind in HeaderKind:
        if kind is HeaderKind.API:
            group = stem
        elif stem.endswith(kind.value) and len(stem) > len(kind.value):
            group = stem[:-len(kind.value)]
        else:
            continue
        if group in groups:
            found.append((group, kind))
    return found


def is_umbrella(path: str) -> bool:
    return path in layout.UMBRELLAS
