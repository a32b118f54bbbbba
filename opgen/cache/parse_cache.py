"""Keep parsed models on disk, keyed by the yaml's bytes, so a repeat parse is a pickle load.

Key = xxh3_128(yaml bytes, tags bytes, the name errors would show, opgen/model sources).
A damaged or unreadable entry is a miss; entries are written atomically.
"""
from __future__ import annotations

import dataclasses
import gc
import os
import pickle
from typing import Optional

from ..errors import Location, OpgenError
from ..fingerprint import default_cache_dir, digest, package_fingerprint
from ..model.loader import Model, build_model, tags_from_document
from ..writer import atomic_write
from ..yamlio import load_bytes

_FORMAT = b"opgen-model-cache-1"


def _read_bytes(path: str, display: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise OpgenError(f"cannot read: {exc.strerror}", Location(display, 0)) from None


def load_model_cached(yaml_path: str, tags_path: Optional[str] = None, *, cache_dir: Optional[str] = None,
                      display_name: Optional[str] = None, tags_display_name: Optional[str] = None) -> Model:
    """Like ``load_model``; ``cache_dir=""`` disables the cache."""
    name = display_name or yaml_path
    tags_name = tags_display_name or tags_path
    yaml_bytes = _read_bytes(yaml_path, name)
    tags_bytes = _read_bytes(tags_path, tags_name) if tags_path else b""
    cache_dir = default_cache_dir() if cache_dir is None else cache_dir
    key = digest(_FORMAT, yaml_bytes, tags_bytes, name.encode(), (tags_name or "").encode(), package_fingerprint("model").encode())
    entry = os.path.join(cache_dir, "models", key[:2], key + ".pickle") if cache_dir else None
    if entry:
        model = _read_entry(entry)
        if model is not None:
            return model
    # Parse the bytes already read for the key rather than reading the files again.
    valid_tags = tags_from_document(load_bytes(tags_bytes, tags_name), tags_name) if tags_path else frozenset()
    model = dataclasses.replace(build_model(load_bytes(yaml_bytes, name), name, valid_tags), fingerprint=key)
    model.variant_groups, model.view_groups, model.operator_groups  # noqa: B018 - cache the groupings too
    if entry:
        _write_entry(entry, model)
    return model


def _read_entry(path: str) -> Optional[Model]:
    gc_was_enabled = gc.isenabled()
    gc.disable()  # unpickling thousands of small objects triggers needless collections
    try:
        with open(path, "rb") as handle:
            model = pickle.load(handle)
    except FileNotFoundError:
        return None
    except Exception:  # truncated or from an incompatible opgen: rebuild it
        return None
    finally:
        if gc_was_enabled:
            gc.enable()
    return model if isinstance(model, Model) else None


def _write_entry(path: str, model: Model) -> None:
    try:
        atomic_write(path, pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL))
    except OSError:
        pass  # a read-only or full cache only costs speed
