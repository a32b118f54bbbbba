"""One codegen cache entry on disk: its byte format, its atomic write and the scan of the objects tree.

An entry file is a header line carrying the xxh3_128 digest of the payload, then the payload:

    opgen-codegen-entry-1 <digest of payload>\\n
    {"files": {relative path: text}, "group": ..., "key": ..., "render_seconds": ...}

The digest is checked before the payload is parsed, so a flipped byte or a truncated file is
caught as a whole and never half-read.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Iterator, Mapping

from .. import writer
from ..fingerprint import digest

MAGIC = b"opgen-codegen-entry-1"
ENTRY_SUFFIX = ".entry"
TEMP_PREFIX = ".tmp-"
# Keys name files, so only plain hex digests are accepted (no separators, no "..").
_KEY_PATTERN = re.compile(r"[0-9a-f]{16,128}")
# Lone surrogates are legal in a Python str; keep them rather than refuse the entry.
_TEXT_ERRORS = "surrogatepass"


class CorruptEntry(Exception):
    """The bytes of an entry file do not match their digest or are not an entry at all."""


@dataclass(frozen=True)
class Entry:
    key: str
    group: str
    files: Mapping[str, str]
    render_seconds: float


def check_key(key: str) -> str:
    if not isinstance(key, str) or not _KEY_PATTERN.fullmatch(key):
        raise ValueError(f"cache key must be a lowercase hex digest, got {key!r}")
    return key


def entry_path(objects_dir: str, key: str) -> str:
    check_key(key)
    return os.path.join(objects_dir, key[:2], key + ENTRY_SUFFIX)


def key_of_path(path: str) -> str:
    """The key an entry file is named after ('' when the name is not a key)."""
    name = os.path.basename(path)
    key = name[: -len(ENTRY_SUFFIX)] if name.endswith(ENTRY_SUFFIX) else ""
    return key if _KEY_PATTERN.fullmatch(key) else ""


def encode(entry: Entry) -> bytes:
    document = {"key": entry.key, "group": entry.group, "render_seconds": float(entry.render_seconds),
                "files": dict(entry.files)}
    payload = json.dumps(document, ensure_ascii=False, sort_keys=True).encode("utf-8", _TEXT_ERRORS)
    return MAGIC + b" " + digest(payload).encode("ascii") + b"\n" + payload


def decode(data: bytes) -> Entry:
    header, newline, payload = data.partition(b"\n")
    magic, _, recorded = header.partition(b" ")
    if not newline or magic != MAGIC or recorded != digest(payload).encode("ascii"):
        raise CorruptEntry("digest mismatch")
    try:
        document = json.loads(payload.decode("utf-8", _TEXT_ERRORS))
        return _entry_of(document)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:  # a digest-valid payload of the wrong shape
        raise CorruptEntry(f"malformed payload: {exc}") from None


def _entry_of(document: dict) -> Entry:
    files = document["files"]
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        raise TypeError("files must map str to str")
    return Entry(key=str(document["key"]), group=str(document["group"]), files=files,
                 render_seconds=float(document["render_seconds"]))


def read_entry(path: str) -> tuple[Entry, int]:
    """The entry at ``path`` and its size in bytes; FileNotFoundError or CorruptEntry otherwise."""
    with open(path, "rb") as handle:
        data = handle.read()
    entry = decode(data)
    if entry.key != key_of_path(path):
        raise CorruptEntry("entry holds another key than its file name")
    return entry, len(data)


def write_temp(path: str, data: bytes) -> str:
    """The entry's bytes in a temp file beside ``path``, renamed into place by the caller under the
    index lock, so no reader ever sees a partial entry under its final name."""
    return writer.write_temp(path, data, prefix=TEMP_PREFIX + os.path.basename(path) + "-")


def remove_quietly(path: str) -> bool:
    """Delete ``path``; False when it was already gone (another build got there first)."""
    try:
        os.unlink(path)
        return True
    except FileNotFoundError:
        return False


@dataclass(frozen=True)
class ScannedFile:
    path: str
    is_temp: bool
    mtime: float


def scan(objects_dir: str) -> Iterator[ScannedFile]:
    """Every entry and temp file below ``objects_dir``; files of other names are left alone."""
    for shard in _entries_of(objects_dir):
        if not shard.is_dir(follow_symlinks=False):
            continue
        for item in _entries_of(shard.path):
            is_temp = item.name.startswith(TEMP_PREFIX)
            if not (is_temp or item.name.endswith(ENTRY_SUFFIX)):
                continue
            try:
                mtime = item.stat(follow_symlinks=False).st_mtime
            except FileNotFoundError:  # renamed or removed by a concurrent build
                continue
            yield ScannedFile(item.path, is_temp, mtime)


def _entries_of(directory: str) -> list[os.DirEntry]:
    try:
        with os.scandir(directory) as items:
            return sorted(items, key=lambda item: item.name)
    except FileNotFoundError:
        return []


@dataclass(frozen=True)
class Found:
    """A whole entry read by lookup() (or fetched) and its size: what counting the hit needs."""
    entry: Entry
    size: int

    @property
    def files(self) -> Mapping[str, str]:
        return self.entry.files


def is_corrupt(path: str) -> bool:
    try:
        read_entry(path)
    except CorruptEntry:
        return True
    except FileNotFoundError:
        return False
    return False
