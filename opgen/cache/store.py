"""CodegenCache: each operator group's generated files, stored by the group's content key.

Layout under the root (<cache dir>/codegen):

    objects/<key[:2]>/<key>.entry   one file per entry, digest-checked on every read (entry.py)
    index.sqlite                    sizes, times, hits, builds, group inputs, counters (index.py)
    keys/<memo>.json                every group's content key for one model + config + opgen
                                    version, so an unchanged model skips computing 150k inputs

An entry file and its index row change together only while the index's write lock is held (the
rename of a new entry, the unlink of an evicted or corrupt one), so two builds sharing a cache
never make them disagree; only a crash can, and verify(repair=True) mends that.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Callable, Mapping, Optional, Sequence

from ..fingerprint import default_cache_dir, digest
from . import index as idx
from .entry import (CorruptEntry, Entry, ScannedFile, check_key, decode, encode, entry_path, key_of_path, read_entry,
                    remove_quietly, scan, write_temp)

DEFAULT_MAX_BYTES = 1 << 30
REMOTE_FIGURES = ("hits", "misses", "errors", "rejected")
KEY_MEMO_DIR = "keys"
# Older than any put can take (busy timeout included), so a live build's temp is never taken
# for debris.
STALE_TEMP_SECONDS = 60.0


def default_codegen_dir() -> str:
    return os.path.join(default_cache_dir(), "codegen")


@dataclass(frozen=True)
class Found:
    """A whole entry read by lookup() (or fetched) and its size: what counting the hit needs."""
    entry: Entry
    size: int

    @property
    def files(self) -> Mapping[str, str]:
        return self.entry.files


@dataclass(frozen=True)
class Production:
    """One group a build produced: materialized from ``found`` (fetched from the remote tier when
    ``remote``), or rendered (found is None)."""
    group: str
    key: str
    found: Optional[Found]
    remote: bool = False


@dataclass(frozen=True)
class RemoteFigures:
    """What a build's remote tier did: entries fetched, absent, failed calls, bad entries refused."""
    hits: int = 0
    misses: int = 0
    errors: int = 0
    rejected: int = 0


@dataclass(frozen=True)
class BuildRecord:
    label: str
    started: float                  # on the cache's clock
    groups: int                     # groups in the build, produced or up to date
    seconds: float                  # spent producing groups
    produced: tuple[Production, ...]
    inputs: tuple[tuple[str, str, dict[str, str]], ...]  # (group, key, inputs) of keys new to their group
    remote: RemoteFigures = RemoteFigures()


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


class CodegenCache:
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
            if _is_corrupt(path):
                remove_quietly(path)
                idx.delete_entry(db, key)

    # --- content keys of a whole model ---------------------------------------------------------

    def remembered_keys(self, memo: str) -> Optional[dict[str, str]]:
        """The {group: key} map saved under ``memo`` (a digest of everything the keys depend on), or
        None when absent or damaged."""
        try:
            with open(self._memo_path(memo), "rb") as handle:
                data = handle.read()
            header, _, payload = data.partition(b"\n")
            keys = json.loads(payload) if header == digest(payload).encode("ascii") else None
            os.utime(self._memo_path(memo))  # in use: gc --older-than keeps it
        except (OSError, ValueError):
            return None
        return keys if isinstance(keys, dict) else None

    def remember_keys(self, memo: str, keys: dict[str, str]) -> None:
        payload = json.dumps(keys, sort_keys=True).encode("utf-8")
        path = self._memo_path(memo)
        os.replace(write_temp(path, digest(payload).encode("ascii") + b"\n" + payload), path)

    def _memos(self) -> list[str]:
        directory = os.path.join(self.root, KEY_MEMO_DIR)
        try:
            return [os.path.join(directory, name) for name in sorted(os.listdir(directory))]
        except FileNotFoundError:
            return []

    def _memo_path(self, memo: str) -> str:
        return os.path.join(self.root, KEY_MEMO_DIR, check_key(memo) + ".json")

    def now(self) -> float:
        """The time on the clock the index uses (BuildRecord.started)."""
        return self._clock()

    # --- size ------------------------------------------------------------------------------

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

    # --- builds and group inputs -----------------------------------------------------------

    def record_build(self, build: BuildRecord) -> int:
        """Counts a build's hits and misses (local and remote), records its figures, its productions
        and the inputs of keys new to their groups: one transaction for the whole build. Returns the
        build's id. A group fetched from the remote tier is a local miss and a remote hit."""
        local_hits = [p.found for p in build.produced if p.found is not None and not p.remote]
        remote_hits = [p.found for p in build.produced if p.found is not None and p.remote]
        remote = build.remote
        with self._index.write() as db:
            self._count_hits_locked(db, local_hits)
            self._count_misses_locked(db, [p.key for p in build.produced if p.found is None or p.remote])
            idx.bump(db, "seconds_saved", sum(found.entry.render_seconds for found in remote_hits))
            for name in REMOTE_FIGURES:
                idx.bump(db, f"remote_{name}", getattr(remote, name))
            build_id = idx.insert_build(
                db, build.label, build.started, self._clock(), groups=build.groups, hits=len(local_hits),
                misses=len(build.produced) - len(local_hits), regenerated=len(build.produced), seconds=build.seconds,
                saved_seconds=sum(found.entry.render_seconds for found in local_hits + remote_hits),
                remote={name: getattr(remote, name) for name in REMOTE_FIGURES})
            idx.record_productions(db, build_id, [(p.group, p.key, p.found is not None) for p in build.produced])
            for group, key, inputs in build.inputs:
                idx.insert_inputs(db, group, key, inputs, build_id)
        return build_id

    def newest_input_keys(self) -> dict[str, str]:
        """{group: key} of each group's most recently recorded inputs."""
        with self._index.read() as db:
            return idx.newest_input_keys(db)

    def last_production(self, group: str) -> Optional[tuple[int, str, bool]]:
        """(build id, key, materialized from the cache) of the latest build that produced ``group``."""
        with self._index.read() as db:
            return idx.last_production(db, group)

    def inputs_history(self, group: str, n: int = 2) -> list[tuple[str, dict[str, str], int]]:
        """(key, inputs, build_id) of the group's last ``n`` distinct keys, newest first."""
        with self._index.read() as db:
            return idx.inputs_history(db, group, n)

    def stats(self) -> dict:
        with self._index.read() as db:
            counts = idx.counters(db)
            entries, size = idx.entry_count(db), idx.total_bytes(db)
            last, builds = idx.last_finished_build(db), idx.build_count(db)
        return {"root": self.root, "entries": entries, "bytes": size, "max_bytes": self.max_bytes,
                "hits": counts["hits"], "misses": counts["misses"], "evictions": counts["evictions"],
                "corrupt": counts["corrupt_reads"], "hit_rate": _rate(counts["hits"], counts["misses"]),
                "seconds_saved": counts["seconds_saved"], "builds": builds,
                "remote": {name: counts[f"remote_{name}"] for name in REMOTE_FIGURES},
                "last_build": _build_figures(last) if last else None}

    # --- verify ----------------------------------------------------------------------------

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
            corrupt = [path for path in found.corrupt if _is_corrupt(path)]
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


def _is_corrupt(path: str) -> bool:
    try:
        read_entry(path)
    except CorruptEntry:
        return True
    except FileNotFoundError:
        return False
    return False


def _rate(hits: int, misses: int) -> float:
    return hits / (hits + misses) if hits + misses else 0.0


def _build_figures(build: idx.BuildRow) -> dict:
    figures = build.as_dict()
    figures["hit_rate"] = _rate(build.hits or 0, build.misses or 0)
    return figures
