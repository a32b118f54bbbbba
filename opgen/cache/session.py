"""One build's use of the codegen cache, shared by ``opgen generate`` and the SCons tool.

A group whose files must be produced is looked up by its content key: a hit materializes the
stored files without rendering, a miss renders and stores them.  The inputs of a key new to its
group are recorded (for ``opgen cache explain``), with the build's figures, once at the end.
Without a cache (disabled) every group renders.  Safe to call from SCons' job threads.
Rendering may have run elsewhere (gen/engine/workers.py: in worker processes): ``produce`` takes
the function that gives a job's ``Rendered`` files; everything the cache records happens here.
"""
from __future__ import annotations

import sqlite3
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Callable, Optional

from ..fingerprint import default_cache_dir
from .remote import RemoteTier
from .entry import Found
from .records import BuildRecord, Production, RemoteFigures
from .store import CodegenCache, codegen_dir


@dataclass(frozen=True)
class Rendered:
    """A job's files as rendered, here or in a worker process, and the seconds rendering took."""
    files: dict[str, str]
    seconds: float


def render_here(job) -> Rendered:
    """Renders the job in this process."""
    return render_codegen(job.codegen)


def render_codegen(codegen) -> Rendered:
    """Renders what a job's codegen renders (a worker has the codegen, not the job)."""
    start = time.perf_counter()
    files = codegen.render()
    return Rendered(files, time.perf_counter() - start)


def open_codegen_cache(cache_dir: Optional[str] = None):
    """The codegen cache under ``cache_dir`` (default: $OPGEN_CACHE_DIR or <repo>/cache), or None
    when ``cache_dir`` is "" (disabled)."""
    root = default_cache_dir() if cache_dir is None else cache_dir
    if not root:
        return None
    try:
        return CodegenCache(codegen_dir(root))
    except (OSError, sqlite3.Error) as exc:  # an unusable cache slows the build down, never stops it
        print(f"[opgen] warning: codegen cache off ({type(exc).__name__}: {exc})", file=sys.stderr)
        return None


class CacheSession:
    """Produces the groups of one build and records the build in the cache when it finishes.

    Lookups touch no index; hits, misses, the build's figures and the inputs of keys new to their
    groups are written in one transaction by ``finish`` (a fresh build directory would otherwise
    pay one transaction per group). A build killed before ``finish`` loses only those
    counts: every entry it stored is already whole and indexed.
    """

    def __init__(self, cache, label: str, remote: Optional[RemoteTier] = None, run: str = ""):
        self.cache = cache
        # The invocation this session is part of: an SCons run codegens several output directories
        # (the core groups, each backend's), and `opgen cache stats` reports them together.
        self.run = run or uuid.uuid4().hex
        self.remote = remote if cache is not None else None  # fetched entries land in the local cache
        self.label = label
        self.out_dir = ""           # set by the plan that uses the session (recorded with the build)
        self.hits: list[str] = []
        self.misses: list[str] = []
        self.seconds = 0.0          # spent producing groups (rendering or materializing)
        self._productions: list[tuple[Production, Callable[[], dict[str, str]]]] = []  # (production, its stored inputs)
        self._fetched_ahead: dict[str, bool] = {}  # job name -> whether will_render's fetch found it
        self._started = self._safely(lambda cache: cache.now())
        self._lock = threading.Lock()

    @property
    def produced(self) -> list[str]:
        return sorted(self.hits + self.misses)

    def holds(self, job) -> bool:
        """Whether the local cache has the job's key (no read: ``produce`` checks the entry)."""
        return bool(self._safely(lambda cache: cache.contains(job.key)))

    def will_render(self, job) -> bool:
        """Whether ``produce`` will render the job: neither the local cache nor the remote tier
        holds its key. An entry the remote tier holds is fetched into the local cache now, and
        ``produce`` counts it as the remote's when it materializes it."""
        if self.holds(job):
            return False
        if self.remote is None:
            return True
        found = self._fetch(job)
        with self._lock:
            self._fetched_ahead[job.name] = found is not None
        return found is None

    def produce(self, job, render: Callable[..., Rendered] = render_here) -> dict[str, str]:
        """{path: text} of one GroupJob: from the local cache, else from the remote tier, else
        ``render(job)``'s (stored in both)."""
        start = time.perf_counter()
        found = self._safely(lambda cache: cache.lookup(job.key, job.name))
        with self._lock:
            fetched_ahead = self._fetched_ahead.pop(job.name, None)
        fetched = found is not None and bool(fetched_ahead)
        if found is None and self.remote is not None and fetched_ahead is None:
            found = self._fetch(job)
            fetched = found is not None
        if found is not None:
            files = dict(found.files)
            seconds = time.perf_counter() - start
        else:
            looked_up = time.perf_counter() - start
            rendered = render(job)
            files, seconds = rendered.files, looked_up + rendered.seconds  # not the wait for a worker
            data = self._safely(lambda cache: cache.put(job.key, job.name, files, seconds))
            if data is not None and self.remote is not None:
                self.remote.store(job.key, data)
        with self._lock:
            self._productions.append((Production(job.name, job.key, found, remote=fetched), job.stored_inputs))
            (self.hits if found is not None else self.misses).append(job.name)
            self.seconds += seconds
        return files

    def _fetch(self, job) -> Optional[Found]:
        data = self.remote.fetch(job.key)
        if data is None:
            return None
        found = self._safely(lambda cache: cache.put_fetched(job.key, job.name, data))
        if found is None:  # wrong bytes (or no local cache to check them into): render instead
            self.remote.reject()
        return found

    def _safely(self, operation):
        """Runs a cache operation; a broken cache (full or read-only disk, a damaged index) turns the
        cache off for the rest of this build with one warning, instead of failing the build."""
        cache = self.cache
        if cache is None:
            return None
        try:
            return operation(cache)
        except (OSError, sqlite3.Error) as exc:
            if self.cache is not None:
                print(f"[opgen] warning: codegen cache off for this build ({type(exc).__name__}: {exc})",
                      file=sys.stderr)
            self.cache = None
            return None

    def finish(self, groups: int) -> None:
        """Records this build. One that produced nothing records nothing (no-op speed: no write),
        unless another output directory of the same run was recorded already: then the run's
        report names this directory as up to date too."""
        with self._lock:
            productions, self._productions = self._productions, []
        if not productions:
            if self._safely(lambda cache: cache.last_run_id()) == self.run:
                self._safely(lambda cache: cache.record_build(BuildRecord(
                    self.label, self._started or 0.0, groups, 0.0, (), (), RemoteFigures(), self.out_dir, self.run)))
            return
        newest = self._safely(lambda cache: cache.newest_input_keys()) or {}
        # Only a key the group has not recorded last needs its inputs (the costly part) computed.
        inputs = tuple((p.group, p.key, stored()) for p, stored in productions if newest.get(p.group) != p.key)
        remote = self.remote.figures() if self.remote is not None else RemoteFigures()
        record = BuildRecord(self.label, self._started or 0.0, groups, self.seconds,
                             tuple(p for p, _ in productions), inputs, remote, self.out_dir, self.run)
        self._safely(lambda cache: cache.record_build(record))

    def cache_line(self) -> str:
        """"H hits, M rendered" (+ what the remote tier gave), or "off"."""
        if self.cache is None:
            return "off"
        line = f"{len(self.hits)} hits, {len(self.misses)} rendered"
        if self.remote is not None:
            figures = self.remote.figures()
            line += (f" (remote{' read-only' if self.remote.read_only else ''}: {figures.hits} hits, "
                     f"{figures.misses} misses, {figures.errors} errors, {figures.rejected} rejected)")
        return line
