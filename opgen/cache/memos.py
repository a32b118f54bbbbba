"""Content keys of groups, remembered in the codegen cache (<root>/keys/<memo>.json) under what
they were computed from.

Computing the inputs of every group means canonicalizing every field of every entry, which
on PyTorch's yaml is a large share of a no-op (docs/benchmarks.md, "Figures behind the code"). A
group whose functions all come from yaml entries is fully described by the text of those
entries, the dispatch keys and opgen's codegen sources: its *identity* is a digest of them, and
a memo maps each group to (identity, key). A run reads the memo of its yaml and configuration
and computes inputs only for groups whose identity is new, so an edit keys one group, not all.
"""
from __future__ import annotations

import json
import os
from typing import Optional

from ..fingerprint import digest
from ..writer import atomic_write
from .entry import check_key

KEY_MEMO_DIR = "keys"
_MEMO_FORMAT = b"opgen-group-keys-2"

Remembered = dict[str, tuple[str, str]]  # group -> (identity, key)


def memo_id(source: str, keys_text: str) -> str:
    """The memo of one yaml (as named in messages) built for one set of dispatch keys."""
    return digest(_MEMO_FORMAT, source.encode(), keys_text.encode())


def group_identity(group_name: str, entry_digests: list[str], keys_text: str, sources_digest: str) -> str:
    return digest(_MEMO_FORMAT, group_name.encode(), keys_text.encode(), sources_digest.encode(),
                  *sorted(d.encode() for d in entry_digests))


def remembered(cache, memo: Optional[str]) -> Remembered:
    """The (identity, key) pairs saved under ``memo``; empty when absent, unreadable or malformed."""
    if cache is None or memo is None:
        return {}
    try:
        saved = cache.remembered_keys(memo)
    except OSError:
        return {}
    if not saved:
        return {}
    pairs = {}
    for name, value in saved.items():
        if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value)):
            return {}  # another format: start over
        pairs[name] = (value[0], value[1])
    return pairs


def remember(cache, memo: Optional[str], pairs: Remembered) -> None:
    if cache is None or memo is None:
        return
    try:
        cache.remember_keys(memo, {name: list(pair) for name, pair in pairs.items()})
    except OSError:
        pass  # a read-only or full cache only costs the next run the keys it could have read


class KeyMemos:
    """CodegenCache's key memos (needs ``self.root``)."""


    def remembered_keys(self, memo: str) -> Optional[dict]:
        """The JSON object saved under ``memo``, or None when absent or damaged."""
        try:
            with open(self._memo_path(memo), "rb") as handle:
                data = handle.read()
            header, _, payload = data.partition(b"\n")
            keys = json.loads(payload) if header == digest(payload).encode("ascii") else None
            os.utime(self._memo_path(memo))  # in use: gc --older-than keeps it
        except (OSError, ValueError):
            return None
        return keys if isinstance(keys, dict) else None

    def remember_keys(self, memo: str, keys: dict) -> None:
        payload = json.dumps(keys, sort_keys=True).encode("utf-8")
        atomic_write(self._memo_path(memo), digest(payload).encode("ascii") + b"\n" + payload)

    def _memos(self) -> list[str]:
        directory = os.path.join(self.root, KEY_MEMO_DIR)
        try:
            return [os.path.join(directory, name) for name in sorted(os.listdir(directory))]
        except FileNotFoundError:
            return []

    def _memo_path(self, memo: str) -> str:
        return os.path.join(self.root, KEY_MEMO_DIR, check_key(memo) + ".json")
