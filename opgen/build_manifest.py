"""What a finished build read and wrote, as it stood when the build ended, and the check that
none of it has changed since: the no-op shortcut (opgen/scons/noop.py).

A no-op on PyTorch's yaml spends ~1.3 s reading SConscripts (the model, ~2,800 builder calls) and
walking ~8,700 nodes to find that nothing changed. Whether anything changed can be told from the
files alone: every file in the build's graph (sources, implicit dependencies, targets), the
directories holding them (a file added where a Glob looks), the program and package directories
(a tool or a wheel installed where `auto` looks), and the invocation (arguments, environment,
interpreter, GPUs). If each is as the last successful build left it, that build's result holds.

A file is compared by size and mtime, like make and ninja. A file modified within RACY_NS of
the snapshot could be rewritten again within one timestamp tick with the same size; such files
also keep a digest of their bytes, compared when their stat is unchanged (git's "racily clean"
entries). No SCons here: noop.py collects the paths from SCons' graph.
"""
from __future__ import annotations

import dataclasses
import json
import os
import tempfile
import time
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional

import xxhash

MANIFEST_VERSION = 2
# Variables a shell changes between commands without changing what a build does.
VOLATILE_ENVIRONMENT = ("PWD", "OLDPWD", "SHLVL", "_", "COLUMNS", "LINES")
RACY_NS = 2_000_000_000  # files modified this close to the snapshot keep a digest of their bytes


@dataclass(frozen=True)
class Manifest:
    key: str                          # the invocation's digest (invocation_key)
    files: Mapping[str, str]          # path -> "size:mtime_ns" ("" for a file that did not exist)
    directories: Mapping[str, str]    # path -> "mtime_ns" ("" when missing)
    digests: Mapping[str, str]        # racy files and directories -> digest of their bytes or listing
    lines: tuple[str, ...]            # what a no-op prints (SCons' "is up to date", opgen's reports)
    listings: Mapping[str, str] = dataclasses.field(default_factory=dict)  # directory -> digest of its names
    # The files that reach the graph only through the codegen plan (the operator yaml, tags.yaml,
    # derivatives.yaml): when nothing else changed, the next build may freeze what the plan proves
    # unchanged (opgen/scons/noop.py, frozen_groups).
    codegen_inputs: tuple[str, ...] = ()


def invocation_key(argv: Iterable[str], cwd: str, environ: Mapping[str, str], *extra: str) -> str:
    """The digest of what a build is asked and where: its arguments, directory, environment (less
    VOLATILE_ENVIRONMENT) and ``extra`` (the interpreter, the GPUs present, ...)."""
    hasher = xxhash.xxh3_128()
    for part in (*argv, "\0cwd", cwd, "\0env",
                 *(f"{k}={v}" for k, v in sorted(environ.items()) if k not in VOLATILE_ENVIRONMENT), "\0extra", *extra):
        hasher.update(part.encode("utf-8", "surrogateescape") + b"\0")
    return hasher.hexdigest()


def snapshot(key: str, files: Iterable[str], directories: Iterable[str], lines: Iterable[str],
             codegen_inputs: Iterable[str] = ()) -> Manifest:
    """The files' and directories' states now (paths as given). A directory keeps its listing
    too: an editor that saves by renaming a new file over the old one, or Python writing bytecode
    beside a module, changes the directory's mtime, not the names a build can find there."""
    now = time.time_ns()
    codegen_inputs = tuple(sorted(set(codegen_inputs)))
    file_states, directory_states, digests, listings = {}, {}, {}, {}
    for path in sorted(set(files)):
        stat = _stat(path)
        file_states[path] = _file_state(stat)
        if stat is not None and stat.st_mtime_ns >= now - RACY_NS:
            digests[path] = _file_digest(path)
    for path in sorted(set(directories)):
        stat = _stat(path)
        directory_states[path] = str(stat.st_mtime_ns) if stat is not None else ""
        if stat is not None:
            listings[path] = _listing_digest(path)
            if stat.st_mtime_ns >= now - RACY_NS:
                digests[path] = listings[path]
    return Manifest(key, file_states, directory_states, digests, tuple(lines), listings, codegen_inputs)


def unchanged(manifest: Manifest, key: str) -> bool:
    """Whether ``key`` is the manifest's and every file and directory is as recorded."""
    return changed_files(manifest, key) == frozenset()


def changed_files(manifest: Manifest, key: str) -> Optional[frozenset]:
    """The recorded files that changed since the manifest was written, or None when the
    invocation differs or a directory holds other names than it did (a file added where a Glob,
    `auto` or an import looks: anything may then differ). A directory whose mtime changed is as
    it was when its recorded listing is."""
    if manifest.key != key:
        return None
    for path, state in manifest.directories.items():
        stat = _stat(path)
        if (str(stat.st_mtime_ns) if stat is not None else "") == state:
            if path not in manifest.digests or _listing_digest(path) == manifest.digests[path]:
                continue
        elif stat is not None and state and _listing_digest(path) == manifest.listings.get(path):
            continue
        return None
    changed = []
    for path, state in manifest.files.items():
        if _file_state(_stat(path)) != state:
            changed.append(path)
        elif path in manifest.digests and _file_digest(path) != manifest.digests[path]:
            changed.append(path)
    return frozenset(changed)


def read_manifest(path: str) -> Optional[Manifest]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        if data.get("version") != MANIFEST_VERSION:
            return None
        return Manifest(data["key"], data["files"], data["directories"], data["digests"], tuple(data["lines"]),
                        data["listings"], tuple(data["codegen_inputs"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def write_manifest(path: str, manifest: Manifest) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=".manifest-", dir=directory)
    os.fchmod(fd, 0o644)  # mkstemp's 0600 would hide it from the checkout's other users
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(_json(manifest))
    os.replace(temporary, path)  # whole or not at all: a half-written manifest would be unreadable, never wrong
    if directory in manifest.directories:
        # Its own directory changed as it was written: recorded again, the file rewritten in place
        # (which changes no directory). Torn, it reads as no manifest.
        stat = os.stat(directory)
        directories = {**manifest.directories, directory: str(stat.st_mtime_ns)}
        listing = _listing_digest(directory)
        digests = {**manifest.digests, directory: listing} if directory in manifest.digests else manifest.digests
        listings = {**manifest.listings, directory: listing}
        with open(path, "r+", encoding="utf-8") as handle:
            handle.write(_json(dataclasses.replace(manifest, directories=directories, digests=digests, listings=listings)))
            handle.truncate()


def _json(manifest: Manifest) -> str:
    return json.dumps({"version": MANIFEST_VERSION, "key": manifest.key, "files": dict(manifest.files),
                       "directories": dict(manifest.directories), "digests": dict(manifest.digests),
                       "lines": list(manifest.lines), "listings": dict(manifest.listings),
                       "codegen_inputs": list(manifest.codegen_inputs)},
                      separators=(",", ":"))


def remove_manifest(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _stat(path: str):
    try:
        return os.stat(path)
    except OSError:
        return None


def _file_state(stat) -> str:
    return f"{stat.st_size}:{stat.st_mtime_ns}" if stat is not None else ""


def _file_digest(path: str) -> str:
    hasher = xxhash.xxh3_128()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                hasher.update(block)
    except OSError:
        return ""
    return hasher.hexdigest()


def _listing_digest(path: str) -> str:
    """The digest of the names in a directory, but Python's bytecode cache (a directory no
    build looks into, made by the first import from a built tree)."""
    try:
        names = sorted(name for name in os.listdir(path) if name != "__pycache__")
    except OSError:
        return ""
    return xxhash.xxh3_128("\0".join(names).encode("utf-8", "surrogateescape")).hexdigest()
