"""The symbols of compiled objects within some C++ scopes, read with binutils' ``nm`` and
remembered per object between builds.

The check before an operator library links (link_check.py) needs, for every object, the kernels
it calls and those it defines. Reading all ~1,400 objects of PyTorch's yaml with nm takes ~2.5 s,
and a one-operator edit recompiles one of them: with a memo file, an object whose size and
mtime are those recorded keeps its answer, and nm reads only what was recompiled.

No SCons: the memo file is a path the caller owns (a build directory's), its bytes a cache.
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
from typing import Iterable, Optional

import xxhash

MEMO_VERSION = 2


class NmError(RuntimeError):
    pass


def nm(objects: Iterable[str], *flags: str) -> list[str]:
    """``nm FLAGS OBJECTS``' lines (-C among the flags: demangled)."""
    paths = list(objects)
    if not paths:
        return []
    try:
        run = subprocess.run(["nm", *flags, *paths], capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise NmError("nm (binutils) is not installed; it is needed to check the kernels' definitions") from exc
    if run.returncode != 0:
        raise NmError(f"nm failed: {run.stderr.strip()}")
    return run.stdout.splitlines()


def symbol_of(line: str) -> tuple[str, str]:
    """(type letter, demangled name) of one `nm` line; '' for file headers and blanks."""
    text = line.strip()
    head, _, rest = text.partition(" ")
    if len(head) == 1 and rest:   # "U name": undefined symbols have no address
        return head, rest
    parts = text.split(" ", 2)
    if len(parts) == 3:   # "0000000000000000 T name" (demangled names contain spaces)
        return parts[1], parts[2]
    return "", ""


# What nm is asked for each kind: only undefined symbols (fast: ~0.7 s for PyTorch's ~1,400 group
# units), only defined ones (of the kernels' objects, a few), or the defined ones with their sizes
# (mangled: what the linker folds is what has one name).
KINDS = {"undefined": ("-C", "-u"), "defined": ("-C", "--defined-only"), "sized": ("--defined-only", "-S")}
# nm's letters of what lands in a shared library's allocated sections: text, data, bss, rodata,
# small data; and of what the linker keeps one copy of (weak functions and objects, unique globals:
# the inline functions and templates every object that uses them carries).
_ALLOCATED = frozenset("TtDdBbRrGgSsVvWwu")
_FOLDED = frozenset("VvWwu")


class SymbolMemo:
    """Objects' symbols, by kind: "undefined" (what an object uses and does not define) and
    "defined" (the functions it defines: nm's T/t, W/w), both within ``scopes``; "sized" (its
    allocated bytes: ``[own, [[symbol digest, bytes], ...]]``, its own symbols' bytes and each
    foldable symbol's). ``path``: the memo file (None: nothing is remembered); ``save`` rewrites
    it with the objects asked since it was opened."""

    def __init__(self, path: Optional[str], scopes: tuple[str, ...] = ()):
        self.path = path
        self.scopes = scopes
        self._recorded = _read_memo(path, scopes) if path else {}
        self._asked: dict[str, dict[str, dict]] = {kind: {} for kind in KINDS}
        self._changed = False

    def undefined(self, objects: Iterable[str]) -> dict[str, frozenset[str]]:
        return {path: frozenset(names) for path, names in self._symbols("undefined", objects).items()}

    def defined(self, objects: Iterable[str]) -> dict[str, frozenset[str]]:
        return {path: frozenset(names) for path, names in self._symbols("defined", objects).items()}

    def linked_bytes(self, objects_in_link_order: Iterable[str]) -> dict[str, int]:
        """{object: the bytes it contributes to the allocated sections of a library linked from
        the objects in this order}: its own symbols, and each foldable one it is the first to
        carry (the copy the linker keeps). Sections of no symbol (string literals, unwind
        tables) are left out: a share of the library, not its size."""
        paths = list(dict.fromkeys(objects_in_link_order))
        kept: set[int] = set()
        sizes = {}
        for path, (own, foldable) in self._symbols("sized", paths).items():
            sizes[path] = own + sum(size for digest, size in foldable if digest not in kept)
            kept.update(digest for digest, _ in foldable)
        return sizes

    def _symbols(self, kind: str, objects: Iterable[str]) -> dict[str, object]:
        paths = list(dict.fromkeys(objects))
        recorded, asked = self._recorded.get(kind, {}), self._asked[kind]
        stale = []
        for path in paths:
            name, stat = self._name(path), object_state(path)
            entry = recorded.get(name)
            if entry is not None and stat is not None and entry["stat"] == stat:
                asked[name] = entry
            else:
                stale.append(path)
        read = _read_sizes(stale) if kind == "sized" else _read_objects(stale, self.scopes, kind)
        for path, value in read.items():
            asked[self._name(path)] = {"stat": object_state(path), "names": value}
            self._changed = True
        return {path: asked[self._name(path)]["names"] for path in paths}

    def _name(self, path: str) -> str:
        """An object's name in the memo: its path from the memo's directory, so that a copy of
        the build tree (mtimes kept) finds its objects remembered."""
        return os.path.relpath(path, os.path.dirname(self.path)) if self.path else path

    def save(self) -> None:
        if not self.path:
            return
        asked = [kind for kind in KINDS if self._asked[kind]]
        if self._changed or any(set(self._asked[kind]) != set(self._recorded.get(kind, {})) for kind in asked):
            # The kinds this memo was not asked keep what they had.
            _write_memo(self.path, self.scopes, {kind: self._asked[kind] if kind in asked else self._recorded.get(kind, {})
                                                 for kind in KINDS})


def _lines(paths: list[str], flags: tuple[str, ...]):
    """(object, rest of the line) of one nm run over ``paths``; -A puts each line's object first."""
    if not paths:
        return
    current = None
    for line in nm(paths, "-A", *flags):
        if current is None or not line.startswith(current + ":"):
            current = next((path for path in paths if line.startswith(path + ":")), None)
            if current is None:
                continue
        yield current, line[len(current) + 1:]


def _read_objects(paths: list[str], scopes: tuple[str, ...], kind: str) -> dict[str, list[str]]:
    found: dict[str, set[str]] = {path: set() for path in paths}
    for path, rest in _lines(paths, KINDS[kind]):
        letter, name = symbol_of(rest)
        if name.startswith(scopes) and (letter == "U" if kind == "undefined" else letter.upper() in ("T", "W")):
            found[path].add(name)
    return {path: sorted(names) for path, names in found.items()}


def _read_sizes(paths: list[str]) -> dict[str, list]:
    """[own bytes, [[digest of a foldable symbol, its bytes], ...]] of each object ("addr size T name")."""
    own = {path: 0 for path in paths}
    foldable: dict[str, dict[int, int]] = {path: {} for path in paths}
    for path, rest in _lines(paths, KINDS["sized"]):
        fields = rest.split()
        if len(fields) != 4 or fields[2] not in _ALLOCATED:
            continue  # no size (an alias, a label), or not allocated (debug, absolute)
        size = int(fields[1], 16)
        if fields[2] in _FOLDED:
            foldable[path][xxhash.xxh3_64_intdigest(fields[3].encode())] = size
        else:
            own[path] += size
    return {path: [own[path], sorted(foldable[path].items())] for path in paths}


def object_state(path: str) -> Optional[str]:
    """Size and mtime: a recompiled object has a new mtime (SCons rewrites it whole)."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return f"{stat.st_size}:{stat.st_mtime_ns}"


def _read_memo(path: str, scopes: tuple[str, ...]) -> dict[str, dict]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != MEMO_VERSION or data.get("scopes") != list(scopes):
        return {}
    kinds = data.get("kinds")
    return {kind: kinds[kind] for kind in KINDS if isinstance(kinds, dict) and isinstance(kinds.get(kind), dict)}


def _write_memo(path: str, scopes: tuple[str, ...], kinds: dict[str, dict[str, dict]]) -> None:
    entries = {kind: {p: entry for p, entry in sorted(objects.items()) if entry["stat"] is not None}
               for kind, objects in kinds.items()}
    text = json.dumps({"version": MEMO_VERSION, "scopes": list(scopes), "kinds": entries}, separators=(",", ":"))
    try:
        directory = os.path.dirname(path) or "."
        os.makedirs(directory, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=".symbols-", dir=directory)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)  # a build killed mid-write leaves the old memo, never half of one
    except OSError:
        pass  # a read-only build directory: the next build reads every object again
