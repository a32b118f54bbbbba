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

MEMO_VERSION = 1


class NmError(RuntimeError):
    pass


def nm(objects: Iterable[str], *flags: str) -> list[str]:
    """``nm -C FLAGS OBJECTS``' lines (demangled)."""
    paths = list(objects)
    if not paths:
        return []
    try:
        run = subprocess.run(["nm", "-C", *flags, *paths], capture_output=True, text=True, check=False)
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
# units), or only defined ones (of the kernels' objects, a few).
KINDS = {"undefined": ("-u",), "defined": ("--defined-only",)}


class SymbolMemo:
    """Objects' symbols within ``scopes``, by kind: "undefined" (what an object uses and does not
    define) or "defined" (the functions it defines: nm's T/t, W/w). ``path``: the memo file (None:
    nothing is remembered); ``save`` rewrites it with the objects asked since it was opened."""

    def __init__(self, path: Optional[str], scopes: tuple[str, ...]):
        self.path = path
        self.scopes = scopes
        self._recorded = _read_memo(path, scopes) if path else {}
        self._asked: dict[str, dict[str, dict]] = {kind: {} for kind in KINDS}
        self._changed = False

    def undefined(self, objects: Iterable[str]) -> dict[str, frozenset[str]]:
        return self._symbols("undefined", objects)

    def defined(self, objects: Iterable[str]) -> dict[str, frozenset[str]]:
        return self._symbols("defined", objects)

    def _symbols(self, kind: str, objects: Iterable[str]) -> dict[str, frozenset[str]]:
        paths = list(dict.fromkeys(objects))
        recorded, asked = self._recorded.get(kind, {}), self._asked[kind]
        stale = []
        for path in paths:
            name, stat = self._name(path), _stat(path)
            entry = recorded.get(name)
            if entry is not None and stat is not None and entry["stat"] == stat:
                asked[name] = entry
            else:
                stale.append(path)
        for path, names in _read_objects(stale, self.scopes, kind).items():
            asked[self._name(path)] = {"stat": _stat(path), "names": sorted(names)}
            self._changed = True
        return {path: frozenset(asked[self._name(path)]["names"]) for path in paths}

    def _name(self, path: str) -> str:
        """An object's name in the memo: its path from the memo's directory, so that a copy of
        the build tree (mtimes kept) finds its objects remembered."""
        return os.path.relpath(path, os.path.dirname(self.path)) if self.path else path

    def save(self) -> None:
        if not self.path:
            return
        if self._changed or any(set(self._asked[kind]) != set(self._recorded.get(kind, {})) for kind in KINDS):
            _write_memo(self.path, self.scopes, self._asked)


def _read_objects(paths: list[str], scopes: tuple[str, ...], kind: str) -> dict[str, set[str]]:
    """One nm run over ``paths``; -A puts each line's object first ("path:address T name")."""
    found: dict[str, set[str]] = {path: set() for path in paths}
    current = None
    for line in nm(paths, "-A", *KINDS[kind]):
        if current is None or not line.startswith(current + ":"):
            current = next((path for path in paths if line.startswith(path + ":")), None)
            if current is None:
                continue
        letter, name = symbol_of(line[len(current) + 1:])
        if name.startswith(scopes) and (letter == "U" if kind == "undefined" else letter.upper() in ("T", "W")):
            found[current].add(name)
    return found


def _stat(path: str) -> Optional[str]:
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
