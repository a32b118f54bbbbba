"""What each object contributes to a linked library, read from lld's link map (``-Map FILE``).

The map lists every input section the linker kept, in the output section it went to, with its
size: after --gc-sections (opgen/scons/link.py) and the folding of inline functions and
templates, what an object costs the library, exactly. What no object contributes is the
linker's own (``<internal>``: the dynamic symbol and string tables, relocations, the PLT and GOT,
.eh_frame_hdr) and the file's non-allocated parts (the symbol table, section headers, padding).

lld's format (mold writes another; GNU ld and gold another again: those builds measure with nm,
opgen/object_symbols.py)::

             VMA              LMA     Size Align Out     In      Symbol
          11000            11000    3a58f    16 .text
          11000            11000       2b    16         build/obj/core/allocator.os:(.text._ZN2op4failE...)
          11000            11000       2b     1                 op::fail(...)

An archive member reads ``build/obj/gen/libopgen_shard00.a(ops/add_unit.os)``: a thin archive's
member is a path relative to the archive's directory.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional

HEADER = re.compile(r"^\s*VMA\s+LMA\s+Size\s+Align\s+Out\s+In\s+Symbol\s*$")
_LINE = re.compile(r"^\s*([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+(\d+) (.*)$")
_MEMBER = re.compile(r"^(.*)\(([^()]*)\)$")
INTERNAL = "<internal>"


@dataclass(frozen=True)
class LinkMap:
    objects: Mapping[str, int] = field(default_factory=dict)  # object path -> bytes kept in allocated sections
    linker_bytes: int = 0       # allocated bytes of no object: the linker's own sections, alignment padding
    allocated_bytes: int = 0    # every allocated output section's size


def parse(lines: Iterable[str], cwd: str = ".") -> Optional[LinkMap]:
    """The map's figures (None: not lld's format). Paths are made absolute from ``cwd``, where
    the linker ran."""
    lines = iter(lines)
    first = next(lines, "")
    if not HEADER.match(first):
        return None
    objects: dict[str, int] = {}
    allocated = kept = 0
    in_allocated = False
    for line in lines:
        match = _LINE.match(line)
        if match is None:
            continue
        vma, size, rest = int(match.group(1), 16), int(match.group(3), 16), match.group(5)
        if not rest.startswith(" "):        # an output section: allocated when it has an address
            in_allocated = vma != 0
            allocated += size if in_allocated else 0
            continue
        name = rest.strip()
        if not in_allocated or ":(" not in name or rest.startswith(" " * 16):
            continue                         # a symbol line, or a section of no allocated output
        path = name[:name.rindex(":(")]
        if path == INTERNAL:
            continue
        path = _object_path(path, cwd)
        objects[path] = objects.get(path, 0) + size
        kept += size
    return LinkMap(dict(sorted(objects.items())), allocated - kept, allocated)


def read(path: str, cwd: str = ".") -> Optional[LinkMap]:
    """The map at ``path`` (None when absent, unreadable or not lld's)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return parse(handle, cwd)
    except OSError:
        return None


def _object_path(name: str, cwd: str) -> str:
    member = _MEMBER.match(name)
    if member is not None and member.group(1).endswith(".a"):
        archive, inner = member.groups()
        name = inner if os.path.isabs(inner) else os.path.join(os.path.dirname(archive), inner)
    return os.path.normpath(os.path.join(cwd, name))
