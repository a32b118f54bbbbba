"""The codegen cache's index: one SQLite file of entries, builds, group inputs and counters.

Two builds may share a cache, so the database runs in WAL mode (readers never block the writer)
with a long busy_timeout, and every write is a BEGIN IMMEDIATE transaction: a writer takes the
lock up front and waits for it, instead of upgrading a read snapshot later and failing with
"database is locked". Each thread (and each forked process) gets its own connection.
"""
from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator, Optional, TypeVar

BUSY_TIMEOUT_SECONDS = 30.0
# An older group's inputs only serve "why did this regenerate"; a few versions are plenty.
KEEP_INPUT_VERSIONS = 8
INTEGER_COUNTERS = ("hits", "misses", "evictions", "corrupt_reads",
                    "remote_hits", "remote_misses", "remote_errors", "remote_rejected")
REAL_COUNTERS = ("seconds_saved",)

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS entries (
         key TEXT PRIMARY KEY, group_name TEXT NOT NULL, size INTEGER NOT NULL,
         created REAL NOT NULL, last_used REAL NOT NULL, hits INTEGER NOT NULL DEFAULT 0,
         render_seconds REAL NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS entries_by_last_used ON entries (last_used, created, key)",
    """CREATE TABLE IF NOT EXISTS builds (
         id INTEGER PRIMARY KEY AUTOINCREMENT, label TEXT NOT NULL, started REAL NOT NULL,
         finished REAL, groups INTEGER, hits INTEGER, misses INTEGER, regenerated INTEGER,
         seconds REAL, saved_seconds REAL, remote_hits INTEGER DEFAULT 0, remote_misses INTEGER DEFAULT 0,
         remote_errors INTEGER DEFAULT 0, remote_rejected INTEGER DEFAULT 0)""",
    """CREATE TABLE IF NOT EXISTS inputs (
         id INTEGER PRIMARY KEY AUTOINCREMENT, group_name TEXT NOT NULL, key TEXT NOT NULL,
         build_id INTEGER NOT NULL, inputs TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS inputs_by_group ON inputs (group_name, id)",
    # A group's last productions per output directory: explain compares a build of a directory
    # with that directory's previous one, and tells "files were missing" from "inputs changed".
    """CREATE TABLE IF NOT EXISTS productions (
         id INTEGER PRIMARY KEY AUTOINCREMENT, out_dir TEXT NOT NULL, group_name TEXT NOT NULL,
         build_id INTEGER NOT NULL, key TEXT NOT NULL, hit INTEGER NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS productions_by_group ON productions (group_name, out_dir, id)",
    "CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value REAL NOT NULL)",
)

T = TypeVar("T")


@dataclass(frozen=True)
class EntryRow:
    key: str
    group: str
    size: int
    created: float
    last_used: float
    hits: int
    render_seconds: float

    def as_dict(self) -> dict:
        return {"group": self.group, "key": self.key, "size": self.size, "created": self.created,
                "last_used": self.last_used, "hits": self.hits, "render_seconds": self.render_seconds}


@dataclass(frozen=True)
class BuildRow:
    id: int
    label: str
    started: float
    finished: Optional[float]
    groups: Optional[int]
    hits: Optional[int]
    misses: Optional[int]
    regenerated: Optional[int]
    seconds: Optional[float]
    saved_seconds: Optional[float]
    remote_hits: Optional[int]
    remote_misses: Optional[int]
    remote_errors: Optional[int]
    remote_rejected: Optional[int]
    run: Optional[str] = ""       # the build invocation (one SCons run: several output directories)
    out_dir: Optional[str] = ""   # the output directory, absolute; "" when unknown

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


_ENTRY_COLUMNS = "key, group_name, size, created, last_used, hits, render_seconds"
_REMOTE_COLUMNS = ("remote_hits", "remote_misses", "remote_errors", "remote_rejected")
# A build run's columns: one invocation (an SCons run) records a build per output directory.
_RUN_COLUMNS = ("run", "out_dir")
_BUILD_COLUMNS = ("id, label, started, finished, groups, hits, misses, regenerated, seconds, saved_seconds, "
                  + ", ".join(_REMOTE_COLUMNS + _RUN_COLUMNS))


class CacheIndex:
    """Connections and transactions on ``path``; the queries are the functions below."""

    def __init__(self, path: str):
        self.path = path
        self._local = threading.local()
        self._opened: list[tuple[int, sqlite3.Connection]] = []
        self._opened_lock = threading.Lock()

    def connection(self) -> sqlite3.Connection:
        local = self._local
        if getattr(local, "pid", None) != os.getpid():  # never reuse a connection across fork
            local.connection = _open(self.path)
            local.pid = os.getpid()
            with self._opened_lock:
                self._opened.append((local.pid, local.connection))
        return local.connection

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, holding the database's write lock from its start."""
        db = self.connection()
        _retry_while_locked(lambda: db.execute("BEGIN IMMEDIATE"))
        try:
            yield db
        except BaseException:
            if db.in_transaction:  # SQLite may have rolled back already (e.g. a full disk)
                db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """One consistent snapshot for several queries."""
        db = self.connection()
        db.execute("BEGIN")
        try:
            yield db
        finally:
            db.execute("COMMIT")

    def close(self) -> None:
        with self._opened_lock:
            opened, self._opened = self._opened, []
        for pid, db in opened:
            if pid == os.getpid():  # a parent's connection is the parent's to close
                db.close()
        self._local = threading.local()


def _open(path: str) -> sqlite3.Connection:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    # isolation_level=None: transactions are exactly the BEGIN/COMMIT issued above.
    db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None, check_same_thread=False)
    db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECONDS * 1000)}")
    # Switching a new file to WAL can report "locked" without waiting while another process
    # does the same, hence the retry.
    _retry_while_locked(lambda: db.execute("PRAGMA journal_mode = WAL"))
    db.execute("PRAGMA synchronous = NORMAL")  # WAL stays consistent; entries carry their own digest
    _retry_while_locked(lambda: _create_schema(db))
    return db


def _create_schema(db: sqlite3.Connection) -> None:
    db.execute("BEGIN IMMEDIATE")
    try:
        for statement in _SCHEMA:
            db.execute(statement)
        for name in INTEGER_COUNTERS + REAL_COUNTERS:
            db.execute("INSERT OR IGNORE INTO counters (name, value) VALUES (?, 0)", (name,))
        # Caches made before the remote tier existed gain its columns.
        columns = {row[1] for row in db.execute("PRAGMA table_info(builds)")}
        for column in _REMOTE_COLUMNS:
            if column not in columns:
                db.execute(f"ALTER TABLE builds ADD COLUMN {column} INTEGER DEFAULT 0")
        # ... and those made before builds were grouped by run, their run and output directory.
        for column in _RUN_COLUMNS:
            if column not in columns:
                db.execute(f"ALTER TABLE builds ADD COLUMN {column} TEXT DEFAULT ''")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _retry_while_locked(action: Callable[[], T]) -> T:
    deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
    while True:
        try:
            return action()
        except sqlite3.OperationalError as exc:
            busy = "locked" in str(exc) or "busy" in str(exc)
            if not busy or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


# --- entries ---------------------------------------------------------------------------------

def _entry_row(row: tuple) -> EntryRow:
    return EntryRow(*row)


def entry_rows(db: sqlite3.Connection) -> list[EntryRow]:
    """Every entry, least recently used first (the eviction order)."""
    rows = db.execute(f"SELECT {_ENTRY_COLUMNS} FROM entries ORDER BY last_used, created, key")
    return [_entry_row(row) for row in rows]


def entry_keys(db: sqlite3.Connection) -> set[str]:
    return {key for (key,) in db.execute("SELECT key FROM entries")}


def entries_unused_since(db: sqlite3.Connection, moment: float) -> list[EntryRow]:
    rows = db.execute(f"SELECT {_ENTRY_COLUMNS} FROM entries WHERE last_used < ? ORDER BY last_used, key",
                      (moment,))
    return [_entry_row(row) for row in rows]


def total_bytes(db: sqlite3.Connection) -> int:
    return int(db.execute("SELECT COALESCE(SUM(size), 0) FROM entries").fetchone()[0])


def entry_count(db: sqlite3.Connection) -> int:
    return int(db.execute("SELECT COUNT(*) FROM entries").fetchone()[0])


def upsert_entry(db: sqlite3.Connection, key: str, group: str, size: int, now: float,
                 render_seconds: float) -> None:
    """A fresh write of ``key``: a rewrite keeps its creation time and hit count."""
    db.execute(
        f"INSERT INTO entries ({_ENTRY_COLUMNS}) VALUES (?, ?, ?, ?, ?, 0, ?) "
        "ON CONFLICT (key) DO UPDATE SET group_name = excluded.group_name, size = excluded.size, "
        "last_used = excluded.last_used, render_seconds = excluded.render_seconds",
        (key, group, size, now, now, render_seconds))


def adopt_entry(db: sqlite3.Connection, key: str, group: str, size: int, created: float,
                render_seconds: float) -> None:
    """Index a complete entry file that has no row (a build killed between rename and commit)."""
    db.execute(f"INSERT OR IGNORE INTO entries ({_ENTRY_COLUMNS}) VALUES (?, ?, ?, ?, ?, 0, ?)",
               (key, group, size, created, created, render_seconds))


def record_hit(db: sqlite3.Connection, key: str, now: float) -> None:
    db.execute("UPDATE entries SET hits = hits + 1, last_used = ? WHERE key = ?", (now, key))


def delete_entry(db: sqlite3.Connection, key: str) -> None:
    db.execute("DELETE FROM entries WHERE key = ?", (key,))


# --- counters --------------------------------------------------------------------------------

def bump(db: sqlite3.Connection, name: str, amount: float = 1) -> None:
    if amount:
        db.execute("UPDATE counters SET value = value + ? WHERE name = ?", (amount, name))


def counters(db: sqlite3.Connection) -> dict[str, float]:
    values = dict(db.execute("SELECT name, value FROM counters"))
    result: dict[str, float] = {name: int(values.get(name, 0)) for name in INTEGER_COUNTERS}
    result.update({name: float(values.get(name, 0.0)) for name in REAL_COUNTERS})
    return result


# --- builds ----------------------------------------------------------------------------------

def insert_build(db: sqlite3.Connection, label: str, started: float, finished: float, *, groups: int, hits: int,
                 misses: int, regenerated: int, seconds: float, saved_seconds: float,
                 remote: Optional[dict[str, int]] = None, run: str = "", out_dir: str = "") -> int:
    """A finished build's row; ``remote`` holds its remote tier's hits, misses, errors and rejected."""
    remote = remote or {}
    columns = _BUILD_COLUMNS.removeprefix("id, ")  # the id is SQLite's to choose
    cursor = db.execute(f"INSERT INTO builds ({columns}) VALUES ({', '.join('?' * (columns.count(',') + 1))})",
                        (label, started, finished, groups, hits, misses, regenerated, seconds, saved_seconds,
                         *(remote.get(column[len("remote_"):], 0) for column in _REMOTE_COLUMNS), run, out_dir))
    return int(cursor.lastrowid)


@dataclass(frozen=True)
class ProductionRow:
    """One build's production of one group into one output directory."""
    out_dir: str
    build_id: int
    key: str
    hit: bool  # materialized from the cache, not rendered


def record_productions(db: sqlite3.Connection, build_id: int, out_dir: str,
                       produced: list[tuple[str, str, bool]]) -> None:
    """(group, key, hit) of each group ``build_id`` produced into ``out_dir``; the last few per
    directory and group are kept."""
    db.executemany("INSERT INTO productions (out_dir, group_name, build_id, key, hit) VALUES (?, ?, ?, ?, ?)",
                   [(out_dir, group, build_id, key, int(hit)) for group, key, hit in produced])
    db.executemany("DELETE FROM productions WHERE group_name = ? AND out_dir = ? AND id NOT IN "
                   "(SELECT id FROM productions WHERE group_name = ? AND out_dir = ? ORDER BY id DESC LIMIT ?)",
                   [(group, out_dir, group, out_dir, KEEP_INPUT_VERSIONS) for group, _, _ in produced])


def productions(db: sqlite3.Connection, group: str, out_dir: Optional[str], n: int) -> list[ProductionRow]:
    """The group's last ``n`` productions into ``out_dir``, newest first; with no directory, into
    the directory of its newest production anywhere."""
    if out_dir is None:
        row = db.execute("SELECT out_dir FROM productions WHERE group_name = ? ORDER BY id DESC LIMIT 1",
                         (group,)).fetchone()
        if row is None:
            return []
        out_dir = row[0]
    rows = db.execute("SELECT out_dir, build_id, key, hit FROM productions WHERE group_name = ? AND out_dir = ? "
                      "ORDER BY id DESC LIMIT ?", (group, out_dir, n))
    return [ProductionRow(d, int(b), k, bool(h)) for d, b, k, h in rows]


def last_finished_build(db: sqlite3.Connection) -> Optional[BuildRow]:
    row = db.execute(f"SELECT {_BUILD_COLUMNS} FROM builds WHERE finished IS NOT NULL "
                     "ORDER BY id DESC LIMIT 1").fetchone()
    return BuildRow(*row) if row else None


def last_run(db: sqlite3.Connection) -> list[BuildRow]:
    """The builds of the last run (every output directory one invocation built), oldest first;
    a build recorded without a run is a run of its own."""
    last = last_finished_build(db)
    if last is None or not last.run:
        return [last] if last else []
    rows = db.execute(f"SELECT {_BUILD_COLUMNS} FROM builds WHERE finished IS NOT NULL AND run = ? ORDER BY id",
                      (last.run,)).fetchall()
    return [BuildRow(*row) for row in rows]


def build_count(db: sqlite3.Connection) -> int:
    return int(db.execute("SELECT COUNT(*) FROM builds WHERE finished IS NOT NULL").fetchone()[0])


# --- inputs of groups ------------------------------------------------------------------------

def insert_inputs(db: sqlite3.Connection, group: str, key: str, inputs: dict[str, str], build_id: int) -> None:
    """Remember ``group``'s inputs under ``key``, unless its newest record already has that key."""
    newest = db.execute("SELECT key FROM inputs WHERE group_name = ? ORDER BY id DESC LIMIT 1", (group,)).fetchone()
    if newest and newest[0] == key:
        return
    text = json.dumps(inputs, ensure_ascii=False, sort_keys=True)
    db.execute("INSERT INTO inputs (group_name, key, build_id, inputs) VALUES (?, ?, ?, ?)",
               (group, key, build_id, text))
    db.execute("DELETE FROM inputs WHERE group_name = ? AND id NOT IN "
               "(SELECT id FROM inputs WHERE group_name = ? ORDER BY id DESC LIMIT ?)",
               (group, group, KEEP_INPUT_VERSIONS))


def newest_input_keys(db: sqlite3.Connection) -> dict[str, str]:
    """Every group's most recently recorded key."""
    rows = db.execute("SELECT group_name, key FROM inputs WHERE id IN (SELECT MAX(id) FROM inputs GROUP BY group_name)")
    return dict(rows)


def inputs_history(db: sqlite3.Connection, group: str, n: int) -> list[tuple[str, dict[str, str], int]]:
    rows = db.execute("SELECT key, inputs, build_id FROM inputs WHERE group_name = ? ORDER BY id DESC LIMIT ?",
                      (group, n))
    return [(key, json.loads(text), int(build_id)) for key, text, build_id in rows]


def inputs_of_key(db: sqlite3.Connection, group: str, key: str) -> Optional[dict[str, str]]:
    """The inputs recorded for ``group`` at ``key``, if still kept."""
    row = db.execute("SELECT inputs FROM inputs WHERE group_name = ? AND key = ? ORDER BY id DESC LIMIT 1",
                     (group, key)).fetchone()
    return json.loads(row[0]) if row else None
