"""Content keys of a whole model, remembered in the codegen cache (<root>/keys/<memo>.json).

Computing the inputs of PyTorch's 1,342 groups means canonicalizing ~150k fields (~0.2 s). The
{group: key} map of a model is therefore saved under a digest of everything the keys depend on
(the parsed model's fingerprint, the dispatch keys, opgen's codegen sources), so an unchanged
model reads its keys back.
"""
from __future__ import annotations

import json
import os
from typing import Optional

from ..fingerprint import digest
from ..writer import atomic_write
from .entry import check_key

KEY_MEMO_DIR = "keys"
_MEMO_FORMAT = b"opgen-group-keys-1"


def memo_id(model_fingerprint: str, keys_text: str, sources: list[tuple[str, str]]) -> str:
    """The memo a model's keys are saved under: a digest of all they depend on."""
    listing = "\n".join(f"{label} {value}" for label, value in sources)
    return digest(_MEMO_FORMAT, model_fingerprint.encode(), keys_text.encode(), listing.encode())


def remembered(cache, memo: Optional[str], names: list[str]) -> Optional[dict[str, str]]:
    """The keys saved under ``memo`` if they name exactly ``names``; None otherwise (or unreadable)."""
    if cache is None or memo is None:
        return None
    try:
        keys = cache.remembered_keys(memo)
    except OSError:
        return None
    # A memo of other groups (never expected, since the id covers the model) is not trusted.
    return keys if keys is not None and sorted(keys) == sorted(names) else None


def remember(cache, memo: Optional[str], keys: dict[str, str]) -> None:
    if cache is None or memo is None:
        return
    try:
        cache.remember_keys(memo, keys)
    except OSError:
        pass  # a read-only or full cache only costs the next run the same 0.2 s


class KeyMemos:
    """CodegenCache's key memos (needs ``self.root``)."""


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
        atomic_write(self._memo_path(memo), digest(payload).encode("ascii") + b"\n" + payload)

    def _memos(self) -> list[str]:
        directory = os.path.join(self.root, KEY_MEMO_DIR)
        try:
            return [os.path.join(directory, name) for name in sorted(os.listdir(directory))]
        except FileNotFoundError:
            return []

    def _memo_path(self, memo: str) -> str:
        return os.path.join(self.root, KEY_MEMO_DIR, check_key(memo) + ".json")
