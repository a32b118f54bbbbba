"""Keeping the codegen cache in shape: size limits and age (gc, LRU eviction) and verify/repair
of entry files against the index."""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Optional

from . import index as idx
from .entry import CorruptEntry, ScannedFile, entry_path, is_corrupt, key_of_path, read_entry, remove_quietly, scan

# Older than any put can take (busy timeout included), so a live build's temp is never taken
# for debris.
STALE_TEMP_SECONDS = 60.0


@dataclass(frozen=True)
class _Orphan:
    """A complete entry file without an index row: what adopting it needs."""
    key: str
    path: str
    group: str
    size: int
    mtime: float
    render_seconds: float


@dataclass(frozen=True)
class _Scan:
    ok: frozenset[str]
    corrupt: tuple[str, ...]
    orphans: tuple[_Orphan, ...]
    stale_temps: tuple[str, ...]
    missing: tuple[str, ...]


class Maintenance:
    """CodegenCache's gc, eviction and verify (needs ``self.root``, ``self.objects_dir``,
    ``self.max_bytes``, ``self._index``, ``self._clock`` and KeyMemos' ``_memos``)."""


    def gc(self, max_bytes: Optional[int] = None, older_than_seconds: Optional[float] = None) -> dict:
        """Drop entries unused for ``older_than_seconds``, then evict least-recently-used ones down
        to ``max_bytes`` (default: this cache's limit); stale temp files go too.

        evicted counts every entry removed, expired those of them removed for their age.
        """
        limit = self.max_bytes if max_bytes is None else max_bytes
        with self._index.write() as db:
            expired = []
            if older_than_seconds is not None:
                expired = idx.entries_unused_since(db, self._clock() - older_than_seconds)
                self._remove_locked(db, expired)
            evicted = self._evict_locked(db, limit)
            entries, size = idx.entry_count(db), idx.total_bytes(db)
        temps = [temp for temp in self._stale_temps() if remove_quietly(temp)]
        memos = [] if older_than_seconds is None else [
            memo for memo in self._memos() if _age(memo) > older_than_seconds and remove_quietly(memo)]
        return {"evicted": len(expired) + len(evicted), "expired": len(expired),
                "bytes_freed": sum(row.size for row in expired + evicted), "temps_removed": len(temps),
                "key_memos_removed": len(memos), "entries": entries, "bytes": size}

    def _evict_locked(self, db, limit: int, keep: Optional[str] = None) -> list[idx.EntryRow]:
        """Remove least-recently-used entries until the total is within ``limit``; the entry just
        written (``keep``) is never its own victim."""
        total = idx.total_bytes(db)
        if total <= limit:
            return []
        victims = []
        for row in idx.entry_rows(db):
            if total <= limit:
                break
            if row.key != keep:
                victims.append(row)
                total -= row.size
        self._remove_locked(db, victims)
        idx.bump(db, "evictions", len(victims))
        return victims

    def _remove_locked(self, db, rows: list[idx.EntryRow]) -> None:
        for row in rows:
            remove_quietly(entry_path(self.objects_dir, row.key))
            idx.delete_entry(db, row.key)


    def verify(self, repair: bool = False) -> dict:
        """Check every entry file against its digest and the index against the files.

        corrupt: entry files failing their digest; orphaned: complete entry files without a row
        and temp files older than a minute; missing: rows without a file (all as paths relative to
        the root). repair deletes corrupt files and stale temps, indexes orphaned entries (they
        are whole) and drops rows without files. Suspects found by the unlocked scan are checked
        again under the write lock, so a concurrent build's work is never reported.
        """
        found = self._scan()
        with self._index.write() as db:
            keys = idx.entry_keys(db)
            corrupt = [path for path in found.corrupt if is_corrupt(path)]
            orphans = [o for o in found.orphans if o.key not in keys and os.path.exists(o.path)]
            temps = [path for path in found.stale_temps if os.path.exists(path)]
            missing = [key for key in found.missing
                       if key in keys and not os.path.exists(entry_path(self.objects_dir, key))]
            if repair:
                self._repair_locked(db, corrupt, orphans, temps, missing)
        return {"ok": len(found.ok), "corrupt": self._relative(corrupt),
                "orphaned": self._relative([o.path for o in orphans] + temps),
                "missing": self._relative([entry_path(self.objects_dir, key) for key in missing])}

    def _scan(self) -> _Scan:
        with self._index.read() as db:
            indexed = idx.entry_keys(db)
        ok, corrupt, orphans, temps, on_disk = set(), [], [], [], set()
        for item in scan(self.objects_dir):
            if item.is_temp:
                if _is_stale(item):
                    temps.append(item.path)
                continue
            key = key_of_path(item.path)
            on_disk.add(key)
            try:
                entry, size = read_entry(item.path)
            except FileNotFoundError:
                on_disk.discard(key)
                continue
            except CorruptEntry:
                corrupt.append(item.path)
                continue
            if key in indexed:
                ok.add(key)
            else:
                orphans.append(_Orphan(key, item.path, entry.group, size, item.mtime, entry.render_seconds))
        return _Scan(frozenset(ok), tuple(corrupt), tuple(orphans), tuple(temps),
                     tuple(sorted(indexed - on_disk)))

    def _repair_locked(self, db, corrupt: list[str], orphans: list[_Orphan], temps: list[str],
                       missing: list[str]) -> None:
        for path in corrupt:
            remove_quietly(path)
            idx.delete_entry(db, key_of_path(path))
        for path in temps:
            remove_quietly(path)
        for o in orphans:
            idx.adopt_entry(db, o.key, o.group, o.size, o.mtime, o.render_seconds)
        for key in missing:
            idx.delete_entry(db, key)

    def _stale_temps(self) -> list[str]:
        return [item.path for item in scan(self.objects_dir) if item.is_temp and _is_stale(item)]

    def _relative(self, paths: list[str]) -> list[str]:
        return sorted(os.path.relpath(path, self.root).replace(os.sep, "/") for path in paths)


def _is_stale(item: ScannedFile) -> bool:
    # File ages are on the wall clock, whatever clock the index uses.
    return item.mtime < time.time() - STALE_TEMP_SECONDS


def _age(path: str) -> float:
    try:
        return time.time() - os.stat(path).st_mtime
    except FileNotFoundError:
        return 0.0
