"""Which files of an output tree a run wrote: compare (mtime, size) snapshots taken around it."""
from __future__ import annotations

import os

Snapshot = dict[str, tuple[int, int]]  # relative path -> (mtime_ns, size)


def snapshot(root: str) -> Snapshot:
    files = {}
    for directory, _, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            stat = os.stat(path)
            files[os.path.relpath(path, root)] = (stat.st_mtime_ns, stat.st_size)
    return files


def written(before: Snapshot, after: Snapshot) -> list[str]:
    """Files created or rewritten between the snapshots (a rewrite with equal bytes counts too)."""
    return sorted(path for path, stamp in after.items() if before.get(path) != stamp)


def megabytes(snap: Snapshot, paths: list[str]) -> float:
    return sum(snap[path][1] for path in paths) / 1e6
