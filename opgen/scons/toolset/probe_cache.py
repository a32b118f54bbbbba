"""What a program printed, remembered across builds in a small JSON file.

A build asks nvcc which architectures it compiles and nvidia-smi which GPUs are present; the
answers cost more than a no-op build can pay each time. An answer is kept
under a key naming the program's real path, size and mtime (a reinstalled program is asked
again) and its arguments, plus whatever else the caller says the answer depends on.

Not a tool, and no SCons: the nvcc tool uses it.
"""
import functools
import json
import os
import subprocess
import tempfile
from typing import Optional

KEEP = 32  # entries: a few programs, a few versions of each


def _stat(path: str) -> str:
    real = os.path.realpath(path)
    try:
        stat = os.stat(real)
    except OSError:
        return f"{real}@missing"
    return f"{real}@{stat.st_mtime_ns}:{stat.st_size}"


def program_key(path: str, *args: str, also=()) -> str:
    """The key of running ``path args``: its stat, so a changed binary is asked again, and that
    of the files ``also`` names (what a wrapper script runs: `exec /usr/local/cuda-13.0/bin/nvcc`)."""
    return " ".join([_stat(path), *args] + [f"also {_stat(other)}" for other in also])


@functools.lru_cache(maxsize=None)
def _loaded(cache_path: str) -> dict:
    """The file's entries, read once per process (the dict is updated as answers are added)."""
    try:
        with open(cache_path, encoding="utf-8") as handle:
            entries = json.load(handle)
        return entries if isinstance(entries, dict) else {}
    except (OSError, ValueError):
        return {}


def _store(cache_path: str, entries: dict) -> None:
    """Atomically (builds in other checkouts may share the file's directory; a torn write is lost, not read)."""
    kept = dict(list(entries.items())[-KEEP:])
    try:
        directory = os.path.dirname(cache_path) or "."
        os.makedirs(directory, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=".probes-", dir=directory)
        os.fchmod(fd, 0o644)  # mkstemp's 0600 would hide it from the checkout's other users
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(kept, handle, indent=1, sort_keys=True)
        os.replace(temporary, cache_path)
    except OSError:
        pass  # a read-only tree: the answer is only remembered for this run


def run(cache_path: Optional[str], command: list, key: str, timeout: float = 30) -> Optional[str]:
    """``command``'s stdout, or None when it failed; from the cache when ``key`` is in it."""
    entries = _loaded(cache_path) if cache_path else {}
    if key in entries:
        return entries[key]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        answer = result.stdout if result.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        answer = None
    if cache_path:
        entries[key] = answer
        _store(cache_path, entries)
    return answer
