"""The one place opgen writes files: generated files (UTF-8, '\\n' newlines, only when their bytes
change) and, through atomic_write / write_temp, the caches' entries, memos and parsed models."""
from __future__ import annotations

import os
import tempfile
import threading


def write_if_changed(path: str, text: str) -> bool:
    """Write ``text`` to ``path`` atomically unless it already holds exactly those bytes.

    Returns True when the file was written.  Unchanged files keep their mtime, so
    neither SCons' timestamp checks nor ccache see a change.
    """
    data = text.encode("utf-8")
    try:
        with open(path, "rb") as handle:
            if handle.read() == data:
                return False
    except FileNotFoundError:
        # A new file needs no temp + rename (half the cost in a fresh tree): nothing reads it
        # yet, and a write cut short leaves bytes that differ, so the next build rewrites it.
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        if _create(path, data):
            return True
    atomic_write(path, data)
    return True


def write_temp(path: str, data: bytes, prefix: str = ".tmp-") -> str:
    """Writes ``data`` to a new temp file beside ``path`` and returns its name, for the caller to
    rename into place (os.replace); a failed write leaves no temp behind. No fsync: every reader
    of opgen's files checks them (a digest, a key, a parse) and treats a torn file as absent."""
    directory = os.path.dirname(path) or "."
    try:
        fd, temp = tempfile.mkstemp(dir=directory, prefix=prefix)
    except FileNotFoundError:  # makedirs only then: a cold cache stores thousands of entries in 256 directories
        os.makedirs(directory, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=directory, prefix=prefix)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(temp, 0o644)
    except BaseException:
        os.unlink(temp)
        raise
    return temp


def atomic_write(path: str, data: bytes) -> None:
    """Replaces ``path`` with ``data`` at once: readers see the old bytes or the new, never part."""
    temp = write_temp(path, data)
    try:
        os.replace(temp, path)
    except BaseException:
        os.unlink(temp)
        raise


class TreeWriter:
    """write_if_changed for many files under one root, listing each directory once: a file the
    listing lacks is created directly, skipping the failed read and the makedirs that
    write_if_changed pays per file (where a fresh tree of many files spends most of its time).
    Safe to share between threads; the listing must not go stale through other writers."""

    def __init__(self, root: str):
        self.root = root
        self._listings: dict[str, set[str]] = {}
        self._lock = threading.Lock()

    def write(self, relative: str, text: str) -> bool:
        """Writes ``text`` to root/relative unless it holds those bytes; True when written."""
        path = os.path.join(self.root, relative)
        directory, name = os.path.split(path)
        with self._lock:
            names = self._listings.get(directory)
            if names is None:
                names = self._listings[directory] = _listing(directory)
            new = name not in names
            names.add(name)
        if new and _create(path, text.encode("utf-8")):
            return True
        return write_if_changed(path, text)


def _listing(directory: str) -> set[str]:
    try:
        return set(os.listdir(directory))
    except FileNotFoundError:
        os.makedirs(directory, exist_ok=True)
        return set()


def _create(path: str, data: bytes) -> bool:
    """Creates ``path`` with ``data``; False when it exists after all."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    return True
