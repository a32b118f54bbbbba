"""Keep parsed models on disk, keyed by the yaml's bytes, so a repeat parse is a pickle load, and
an edited yaml reparses only the entries whose text changed.

    models/<key[:2]>/<key>.pickle   a model; key = xxh3_128(yaml bytes, tags bytes, the names
                                    errors show, opgen/model's sources)
    models/latest/<lineage>         the key of the last model parsed from one yaml name with
                                    these tags and model sources: an edit reuses its entries

`opgen cache gc` prunes the models no latest/ names (prune_models).

A model remembers the digest of each entry's text (``Model.entry_digests``); an entry whose text
is unchanged is taken from the previous model (moved to its new line), the others are parsed on
their own, and the checks across entries, autogen and grouping run on the whole as for a full
parse. Any problem sends the file through the full parse, so error messages never depend on
what was remembered. A damaged or unreadable entry is a miss; entries are written atomically.
"""
from __future__ import annotations

import copy
import gc
import os
import pickle
import time
import weakref
from typing import Optional

from ..errors import Location, OpgenError
from ..fingerprint import default_cache_dir, digest, package_fingerprint
from ..model.loader import Model, ParsedEntry, assemble_model, parse_entries, tags_from_document
from ..model.native_function import KernelTable, NativeFunction
from ..model.schema import OperatorName
from ..writer import atomic_write
from ..yamlio import load_bytes, load_entry_alone, mapping_on_first_line, top_level_items

_FORMAT = b"opgen-model-cache-2"
_LATEST = "latest"

# id(model) -> (a weak reference to it, its key): the key each model this process loaded
# through the cache was stored under (what else is cached against the model is keyed by it).
_KEYS: dict[int, tuple[weakref.ref, str]] = {}


def model_cache_key(model: Model) -> Optional[str]:
    """The cache key of ``model`` when this process loaded it through the parse cache (its yaml's
    and tags' bytes, their names and opgen/model's sources), else None."""
    held = _KEYS.get(id(model))
    return held[1] if held is not None and held[0]() is model else None


def _remember_key(model: Model, key: str) -> Model:
    _KEYS[id(model)] = (weakref.ref(model), key)
    return model


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
    model_code = package_fingerprint("model").encode()
    key = digest(_FORMAT, yaml_bytes, tags_bytes, name.encode(), (tags_name or "").encode(), model_code)
    lineage = digest(_FORMAT, name.encode(), tags_bytes, (tags_name or "").encode(), model_code)
    if cache_dir:
        path = _model_path(cache_dir, key)
        model = _read_entry(path)
        if model is not None:
            _touch(path)  # last use, for prune_models' age
            if _latest_key(cache_dir, lineage) != key:  # a revert: the next edit starts from this model
                _write_latest(cache_dir, lineage, key)
            return _remember_key(model, key)
    # Parse the bytes already read for the key rather than reading the files again.
    valid_tags = tags_from_document(load_bytes(tags_bytes, tags_name), tags_name) if tags_path else frozenset()
    previous = _read_latest(cache_dir, lineage) if cache_dir else None
    items = _top_level_items(yaml_bytes)
    model = (_reparse_edited(items, name, valid_tags, previous) if previous is not None and items is not None else None) \
        or _parse_whole(yaml_bytes, items, name, valid_tags)
    model.variant_groups, model.view_groups, model.operator_groups  # noqa: B018 - cache the groupings too
    for f in model.functions:  # and each function's key: the autograd cache resolves its entries' functions by it
        f.key  # noqa: B018
    if cache_dir:
        _write_entry(_model_path(cache_dir, key), model)
        _write_latest(cache_dir, lineage, key)
        return _remember_key(model, key)
    return model


def _top_level_items(yaml_bytes: bytes) -> Optional[list[tuple[int, str]]]:
    """The file's entries split as text; None when it is not UTF-8 (the whole parse says so) or
    not a plain top-level list."""
    try:
        return top_level_items(yaml_bytes.decode("utf-8"))
    except UnicodeDecodeError:
        return None


def _parse_whole(yaml_bytes: bytes, items: Optional[list[tuple[int, str]]], name: str, valid_tags: frozenset[str]) -> Model:
    document = load_bytes(yaml_bytes, name)
    parsed, errors, unparsed = parse_entries(document, name, valid_tags)
    digests = _entry_digests(items, parsed) if items is not None and not errors.diagnostics else None
    return assemble_model(name, parsed, errors, unparsed, entry_digests=digests)


def _reparse_edited(items: list[tuple[int, str]], name: str, valid_tags: frozenset[str], previous: Model) -> Optional[Model]:
    """The model of an edited yaml from ``previous`` plus the entries whose text is new; None
    when the file must be parsed whole (any problem in it)."""
    known = {entry_digest: previous.by_name[op] for op, entry_digest in previous.entry_digests.items()}
    tables = _kernel_tables(previous)
    parsed: list[ParsedEntry] = []
    digests = {}
    for line, text in items:
        entry_digest = digest(text.encode("utf-8"))
        f = known.get(entry_digest) if mapping_on_first_line(text) else None
        entry = _moved(f, name, line, tables) if f is not None else _parse_alone(text, line, name, valid_tags)
        if entry is None:
            return None
        parsed.append(entry)
        digests[entry[0].func.name] = entry_digest
    try:
        return assemble_model(name, parsed, entry_digests=digests)
    except OpgenError:
        return None  # the whole parse reports it, with every other problem of the file


def _kernel_tables(model: Model) -> dict[OperatorName, KernelTable]:
    """Each function's kernels as its entry listed them (the indices hold nothing else for it)."""
    tables: dict[OperatorName, KernelTable] = {}
    for dispatch_key, index in model.indices.items():
        for op, meta in index.index.items():
            tables.setdefault(op, []).append((dispatch_key, meta))
    return tables


def _moved(f: NativeFunction, name: str, line: int, tables: dict[OperatorName, KernelTable]) -> ParsedEntry:
    """A remembered entry at its line in the edited file, with its kernels."""
    table = tables.get(f.func.name, [])
    if f.location.line != line:
        f = copy.copy(f)  # keeps what the schema has already derived
        object.__setattr__(f, "location", Location(name, line))
    return f, table


def _parse_alone(text: str, line: int, name: str, valid_tags: frozenset[str]) -> Optional[ParsedEntry]:
    """One entry's text parsed with its lines numbered as in the file; None on any problem."""
    document = load_entry_alone(text, line, name)
    if document is None:
        return None
    parsed, errors, _ = parse_entries(document, name, valid_tags)
    return parsed[0] if parsed and not errors.diagnostics else None


def _entry_digests(items: list[tuple[int, str]], parsed: list[ParsedEntry]) -> Optional[dict]:
    """Each function's entry digest, when the file split into exactly the entries that parsed."""
    if len(items) != len(parsed):
        return None
    return {f.func.name: digest(text.encode("utf-8")) for (_, text), (f, _) in zip(items, parsed)}


def _model_path(cache_dir: str, key: str) -> str:
    return os.path.join(cache_dir, "models", key[:2], key + ".pickle")


def prune_models(cache_dir: str, older_than_seconds: Optional[float] = None, *,
                 now: Optional[float] = None) -> dict:
    """Remove parsed models that only a revert could use: every model but the latest of each
    yaml (``models/latest/``), or with ``older_than_seconds`` only those unused for that long
    (a hit refreshes a model's time). Each edit of PyTorch's yaml leaves a ~5 MB model behind."""
    root = os.path.join(cache_dir, "models")
    kept_keys = latest_model_keys(cache_dir)
    deadline = None if older_than_seconds is None else (time.time() if now is None else now) - older_than_seconds
    removed, freed, kept = 0, 0, 0
    for shard in sorted_entries(root):
        if shard == _LATEST:
            continue
        for name in sorted_entries(os.path.join(root, shard)):
            path = os.path.join(root, shard, name)
            try:
                stat = os.stat(path)
            except OSError:
                continue
            superseded = name.endswith(".pickle") and name[:-len(".pickle")] not in kept_keys
            if superseded and (deadline is None or stat.st_mtime < deadline):
                try:
                    os.remove(path)
                except OSError:
                    continue
                removed, freed = removed + 1, freed + stat.st_size
            else:
                kept += 1
    return {"models_removed": removed, "model_bytes_freed": freed, "models": kept}


def latest_model_keys(cache_dir: str) -> set[str]:
    """The keys of the models ``models/latest/`` names: the last parsed of each yaml."""
    latest_dir = os.path.join(cache_dir, "models", _LATEST)
    return {key for key in (_latest_key(cache_dir, lineage) for lineage in sorted_entries(latest_dir)) if key}


def sorted_entries(path: str) -> list[str]:
    """A directory's entry names, sorted; none for a directory that cannot be listed."""
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def _latest_key(cache_dir: str, lineage: str) -> Optional[str]:
    try:
        with open(os.path.join(cache_dir, "models", _LATEST, lineage), "r", encoding="ascii") as handle:
            key = handle.read().strip()
    except (OSError, ValueError):
        return None
    return key if key.isalnum() else None


def _read_latest(cache_dir: str, lineage: str) -> Optional[Model]:
    key = _latest_key(cache_dir, lineage)
    return _read_entry(_model_path(cache_dir, key)) if key else None


def _write_latest(cache_dir: str, lineage: str, key: str) -> None:
    try:
        atomic_write(os.path.join(cache_dir, "models", _LATEST, lineage), key.encode("ascii"))
    except OSError:
        pass


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


def _touch(path: str) -> None:
    try:
        os.utime(path)
    except OSError:
        pass  # a read-only cache only loses the age


def _write_entry(path: str, model: Model) -> None:
    try:
        atomic_write(path, pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL))
    except OSError:
        pass  # a read-only or full cache only costs speed
