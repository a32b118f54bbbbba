"""Hashes that key opgen's caches: xxh3_128 over bytes, and over opgen's own sources."""
from __future__ import annotations

import os
from functools import lru_cache

import xxhash

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
PROJECT_ROOT = os.path.dirname(PACKAGE_DIR)


def digest(*chunks: bytes) -> str:
    h = xxhash.xxh3_128()
    for chunk in chunks:
        # Length-prefix each chunk so ("ab", "c") and ("a", "bc") differ.
        h.update(len(chunk).to_bytes(8, "little"))
        h.update(chunk)
    return h.hexdigest()


def file_digest(path: str) -> str:
    with open(path, "rb") as handle:
        return digest(handle.read())


@lru_cache(maxsize=None)
def package_fingerprint(subdir: str = "") -> str:
    """Digest of opgen's Python sources (and templates) below ``subdir``, by relative path."""
    root = os.path.join(PACKAGE_DIR, subdir)
    parts: list[bytes] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith((".py", ".j2")):
                path = os.path.join(dirpath, name)
                parts.append(os.path.relpath(path, PACKAGE_DIR).replace(os.sep, "/").encode())
                with open(path, "rb") as handle:
                    parts.append(handle.read())
    return digest(*parts)


def default_cache_dir() -> str:
    """$OPGEN_CACHE_DIR; else, for opgen installed by pip, the user's cache directory (never
    inside site-packages); else cache/ beside the opgen package (a checkout or a copy of one)."""
    configured = os.environ.get("OPGEN_CACHE_DIR")
    if configured:
        return configured
    if os.path.basename(PROJECT_ROOT) in ("site-packages", "dist-packages"):
        user_cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        return os.path.join(user_cache, "opgen")
    return os.path.join(PROJECT_ROOT, "cache")
