"""CodegenCache: each operator group's generated files, stored by the group's content key.

Layout under the root (<cache dir>/codegen):

    objects/<key[:2]>/<key>.entry   one file per entry, digest-checked on every read (entry.py)
    index.sqlite                    sizes, times, hits, builds, group inputs, counters (index.py)
    keys/<memo>.json                every group's content key for one model + config + opgen
                                    version, so an unchanged model skips computing 150k inputs
                                    (memos.py)

This module keeps the entries themselves; records.py the builds and stats, maintenance.py gc,
eviction and verify. An entry file and its index row change together only while the index's
write lock is held (the rename of a new entry, the unlink of an evicted or corrupt one), so two
builds sharing a cache never make them disagree; only a crash can, and verify(repair=True)
mends that.
"""
from __future__ import annotations

import os
import time
from fnmatch import fnmatchcase
from typing import Callable, Optional, Sequence

from ..fingerprint import default_cache_dir
from . import index as idx
from .entry import CorruptEntry, Entry, Found, check_key, decode, encode, entry_path, is_corrupt, read_entry, remove_quietly, write_temp
from .maintenance import Maintenance
from .memos import KeyMemos
from .records import BuildRecords

DEFAULT_MAX_BYTES = 1 << 30
CODEGEN_DIR = "codegen"


def codegen_dir(cache_dir: Optional[str] = None) -> str:
    """Where the codegen cache lives under a cache directory (default: $OPGEN_CACHE_DIR or <repo>/cache)."""
    return os.path.join(default_cache_dir() if cache_dir is None else cache_dir, CODEGEN_DIR)


class CodegenCache(KeyMemos, BuildRecords, Maintenance):
    def __init__(self, root: str, max_bytes: int = DEFAULT_MAX_BYTES, *,
                 clock: Callable[[], float] = time.time):
        if max_bytes < 0:
            raise ValueError("max_bytes must not be negative")
        self.root = root
        self.max_bytes = max_bytes
        self.objects_dir = os.path.join(root, "objects")
        self._index = idx.CacheIndex(os.path.join(root, "index.sqlite"))
        self._clock = clock  # index times; tests pass a fake one to order entries

    def close(self) -> None:
        self._index.close()

    def __enter__(self) -> "CodegenCache":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- entries ---------------------------------------------------------------------------

    def get(self, key: str, group: str) -> Optional[dict[str, str]]:
        """The entry's {relative path: text}, or None on a miss (absent, corrupt, another group's);
        the hit or miss is counted at once (a build batches that through lookup/record_build)."""
        found = self.lookup(key, group)
        with self._index.write() as db:
            if found is None:
                self._count_misses_locked(db, [key])
            else:
                self._count_hits_locked(db, [found])
        return None if found is None else dict(found.files)

    def contains(self, key: str) -> bool:
        """Whether an entry of ``key`` is stored, without reading it (lookup still checks it)."""
        return os.path.exists(entry_path(self.objects_dir, key))

    def lookup(self, key: str, group: str) -> Optional[Found]:
        """The entry of ``key`` if it is whole and ``group``'s, without counting anything; a corrupt
        entry is deleted (and counted) at once so that the next put replaces it."""
        path = entry_path(self.objects_dir, key)
        try:
            entry, size = read_entry(path)
        except FileNotFoundError:
            return None
        except CorruptEntry:
            self._discard_corrupt(key, path)
            return None
        if entry.group != group:  # a caller's mix-up of keys, not damage: leave the entry alone
            return None
        return Found(entry, size)

    def put(self, key: str, group: str, files: dict[str, str], render_seconds: float) -> bytes:
        """Store ``files`` under ``key``, then evict least-recently-used entries down to max_bytes;
        returns the entry's bytes (what a remote tier stores)."""
        data = encode(Entry(check_key(key), group, dict(files), float(render_seconds)))
        self._store(key, group, data, float(render_seconds))
        return data

    def put_fetched(self, key: str, group: str, data: bytes) -> Optional[Found]:
        """Store an entry fetched from a remote tier, if its bytes are a whole entry of ``key`` and
        ``group`` (digest, key and group checked); None when they are not, storing nothing."""
        try:
            entry = decode(data)
        except CorruptEntry:
            return None
        if entry.key != check_key(key) or entry.group != group:
            return None
        self._store(key, group, data, entry.render_seconds)
        return Found(entry, len(data))

    def _store(self, key: str, group: str, data: bytes, render_seconds: float) -> None:
        """The bytes go to a temp file first, outside the lock; the lock covers only the rename and
        the index update. Concurrent stores of one key both complete; the last rename wins."""
        path = entry_path(self.objects_dir, key)
        temp: Optional[str] = write_temp(path, data)
        try:
            with self._index.write() as db:
                os.replace(temp, path)
                temp = None
                idx.upsert_entry(db, key, group, len(data), self._clock(), render_seconds)
                self._evict_locked(db, self.max_bytes, keep=key)
        finally:
            if temp is not None:  # the lock was never had: drop the unused bytes
                remove_quietly(temp)

    def peek(self, key: str) -> Optional[dict[str, str]]:
        """The entry's files without touching hits, times or counters (for inspection); None when
        absent or corrupt (left for get or verify to deal with)."""
        try:
            return dict(read_entry(entry_path(self.objects_dir, key))[0].files)
        except (FileNotFoundError, CorruptEntry):
            return None

    def entries(self, pattern: str = "*") -> list[dict]:
        """group, key, size, created, last_used, hits (and render_seconds) of entries whose
        group matches the shell-style ``pattern``, by group then key."""
        with self._index.read() as db:
            rows = idx.entry_rows(db)
        chosen = (row for row in rows if fnmatchcase(row.group, pattern))
        return [row.as_dict() for row in sorted(chosen, key=lambda row: (row.group, row.key))]

    def _count_hits_locked(self, db, hits: Sequence[Found]) -> None:
        now = self._clock()
        for found in hits:
            # A complete file without a row (its writer was killed before commit) is adopted; one
            # evicted since it was read is not brought back as a row without a file.
            entry = found.entry
            if os.path.exists(entry_path(self.objects_dir, entry.key)):
                idx.adopt_entry(db, entry.key, entry.group, found.size, now, entry.render_seconds)
            idx.record_hit(db, entry.key, now)
        idx.bump(db, "hits", len(hits))
        idx.bump(db, "seconds_saved", sum(found.entry.render_seconds for found in hits))

    def _count_misses_locked(self, db, keys: Sequence[str]) -> None:
        idx.bump(db, "misses", len(keys))
        for key in keys:
            if not os.path.exists(entry_path(self.objects_dir, key)):  # a row whose file is gone is no entry
                idx.delete_entry(db, key)

    def _discard_corrupt(self, key: str, path: str) -> None:
        with self._index.write() as db:
            idx.bump(db, "corrupt_reads")
            # Read again under the lock: another build may have replaced it with a good entry.
            if is_corrupt(path):
                remove_quietly(path)
                idx.delete_entry(db, key)

    def now(self) -> float:
        """The time on the clock the index uses (BuildRecord.started)."""
        return self._clock()
