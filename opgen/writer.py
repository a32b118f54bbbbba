"""The one place generated files are written: UTF-8, '\\n' newlines, only when bytes change."""
from __future__ import annotations

import os
import tempfile


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
        if _write_new(path, data):
            return True
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return True


def _write_new(path: str, data: bytes) -> bool:
    """Creates ``path`` with ``data``; False when it appeared meanwhile (then replace it atomically)."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    try:
        with open(path, "xb") as handle:
            handle.write(data)
    except FileExistsError:
        return False
    return True
