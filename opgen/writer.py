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
        pass
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
