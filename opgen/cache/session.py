"""One build's use of the codegen cache, shared by ``opgen generate`` and the SCons tool.

A group whose files must be produced is looked up by its content key: a hit materializes the
stored files without rendering, a miss renders and stores them.  Either way the group's inputs
are recorded (for ``opgen cache explain``), and the build's figures are written once at the end.
Without a cache (disabled) every group renders.  Safe to call from SCons' job threads.
"""
from __future__ import annotations

import os
import sqlite3
import sys
import threading
import time
from typing import Optional

from ..fingerprint import default_cache_dir


def open_codegen_cache(cache_dir: Optional[str] = None):
    """The codegen cache under ``cache_dir`` (default: $OPGEN_CACHE_DIR or <repo>/cache), or None
    when ``cache_dir`` is "" (disabled)."""
    from .store import CodegenCache

    root = default_cache_dir() if cache_dir is None else cache_dir
    if not root:
        return None
    try:
        return CodegenCache(os.path.join(root, "codegen"))
    except (OSError, sqlite3.Error) as exc:  # an unusable cache slows the build down, never stops it
        print(f"[opgen] warning: codegen cache off ({type(exc).__name__}: {exc})", file=sys.stderr)
        return None


class CacheSession:
    def __init__(self, cache, label: str):
        self.cache = cache
        self.label = label
        self.hits: list[str] = []
        self.misses: list[str] = []
        self.seconds = 0.0          # spent producing groups (rendering or materializing)
        self._build_id: Optional[int] = None
        self._lock = threading.Lock()

    @property
    def produced(self) -> list[str]:
        return sorted(self.hits + self.misses)

    def produce(self, name: str, key: str, inputs: dict[str, str], codegen) -> dict[str, str]:
        """{path: text} of one group: from the cache when it has the key, else rendered (and stored)."""
        start = time.perf_counter()
        files = None
        with self._lock:
            files = self._safely(lambda cache: cache.get(key, name))
        hit = files is not None
        if not hit:
            files = codegen.render()
        seconds = time.perf_counter() - start
        with self._lock:
            if not hit:
                self._safely(lambda cache: cache.put(key, name, files, seconds))
            self._safely(lambda cache: cache.record_inputs(name, key, inputs, self._build(cache)))
            (self.hits if hit else self.misses).append(name)
            self.seconds += seconds
        return files

    def _safely(self, operation):
        """Runs a cache operation; a broken cache (full or read-only disk, a damaged index) turns the
        cache off for the rest of this build with one warning, instead of failing the build."""
        if self.cache is None:
            return None
        try:
            return operation(self.cache)
        except (OSError, sqlite3.Error) as exc:
            print(f"[opgen] warning: codegen cache off for this build ({type(exc).__name__}: {exc})", file=sys.stderr)
            self.cache = None
            return None

    def _build(self, cache) -> int:
        if self._build_id is None:
            self._build_id = cache.begin_build(self.label)
        return self._build_id

    def finish(self, groups: int) -> None:
        """Records this build's figures; a build that produced nothing records nothing (no-op speed)."""
        if self._build_id is None:
            return
        with self._lock:
            self._safely(lambda cache: cache.end_build(self._build_id, groups=groups, hits=len(self.hits),
                                                       misses=len(self.misses), regenerated=len(self.produced),
                                                       seconds=self.seconds))
