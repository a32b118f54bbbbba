"""Keep the autograd facts of a run on disk: the derivatives yaml read against a model, the
autograd plan (one decision per function) and each group's autograd fingerprint, so a repeat
run is a pickle load instead of a parse of derivatives.yaml (mostly its formulas' saved-name
rules) and a plan of every function, both costly on PyTorch's yaml (docs/benchmarks.md,
"Figures behind the code"); and an edit of derivatives.yaml rereads only the entries whose text
changed and plans again only what they touch.

    autograd/<model key>/<key>.pickle   an AutogradModel without its Model, and what its
                                        derivatives read of the model (DerivativesBasis); model
                                        key: the parse cache's key of the model it was read
                                        against; key = xxh3_128(the derivatives yaml's bytes, the
                                        name errors show, the model key, opgen/model's and
                                        opgen/gen's sources)
    autograd/latest/<lineage>           "<model key>/<key>" of the last entry stored for one
                                        derivatives name with these sources: a miss starts from it

The model is the one the parse cache gave this run (``model_cache_key``): only a model that
came from the parse cache has a key, so a model built any other way is never served a stale
plan. The model, its groups and its functions are not stored: they are references, resolved
against the run's model on load (a reference it cannot resolve is a miss). A yaml with errors
is never stored, so its errors are always reported from a full read.

On a miss the latest entry of the lineage gives its derivatives' entries, each taken again while
its text and what it read of the model are unchanged (derivatives_entries.py), and its decisions
and fingerprints, which stand wherever their inputs are unchanged (AutogradModel's ``previous``).
Read against another model (an edit of native_functions.yaml), what changed between the two is
found by tokens (model/model_tokens.py: each function's entry digest): the same derivatives bytes
whose entries and assembly read nothing that changed are taken whole, and only the changed
functions, and the groups that hold or call them, are decided and fingerprinted again (~50 ms on
PyTorch's yaml for one operator against ~0.3 s, most of it the entries' load and store;
docs/benchmarks.md). `opgen cache gc` prunes the
entries of models it prunes, and superseded entries (prune_autograd).
"""
from __future__ import annotations

import copyreg
import gc
import io
import os
import pickle
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

from ..fingerprint import default_cache_dir, digest, package_fingerprint
from ..model.derivatives import Derivatives
from ..model.grouping import OperatorGroup
from ..model.loader import Model
from ..model.model_tokens import ModelChanges, changes_between, model_tokens
from ..model.native_function import NativeFunction
from ..writer import atomic_write
from ..yamlio import read_input
from .derivatives_entries import DerivativesBasis, carried_whole, derivatives_basis, family_check, read_derivatives
from .parse_cache import latest_model_keys, model_cache_key, sorted_entries

_FORMAT = b"opgen-autograd-cache-3"
AUTOGRAD_DIR = "autograd"
_LATEST = "latest"


def load_autograd_cached(model: Model, derivatives_path: str, autograd_model: Callable[..., Any], *,
                         cache_dir: Optional[str] = None, display_name: Optional[str] = None):
    """``autograd_model(model, load_derivatives(derivatives_path, model, display_name))`` (the
    generators' AutogradModel, which cache/ does not import), read from the cache when this yaml
    was read against this model before; ``cache_dir=""`` disables the cache. On a miss
    ``autograd_model`` is also given ``previous=``: the last one stored for this yaml (against this
    model, or an earlier one), or None; ``changes=``: what differs between that one's model and
    this one (None: the same model); ``tokens=``: this model's (model_tokens.py)."""
    name = display_name or derivatives_path
    data = read_input(derivatives_path, name)
    cache_dir = default_cache_dir() if cache_dir is None else cache_dir
    model_key = model_cache_key(model)
    if not (cache_dir and model_key):
        return autograd_model(model, read_derivatives(data, name, model))
    sources = (package_fingerprint("model").encode(), package_fingerprint("gen").encode())
    key = digest(_FORMAT, data, name.encode(), model_key.encode(), *sources)
    entry = f"{model_key}/{key}"
    lineage = digest(_FORMAT, name.encode(), *sources)
    latest = _latest_entry(cache_dir, lineage)
    path = _entry_path(cache_dir, entry)
    cached = _read_entry(path, model)
    if isinstance(cached, _Entry) and isinstance(cached.autograd, autograd_model):
        _touch(path)
        if latest != entry:  # a revert: the next edit starts from this one
            _write_latest(cache_dir, lineage, entry)
        return cached.autograd
    same_model = latest is not None and latest.split("/", 1)[0] == model_key
    previous = _read_previous(cache_dir, latest, model, autograd_model, same_model)
    stored = _derive(model, data, name, previous, same_model, autograd_model)
    for group in model.operator_groups:
        stored.autograd.fingerprint(group)  # what every run asks of every group: remembered with the plan
    if _write_entry(path, stored, model):
        _write_latest(cache_dir, lineage, entry)
    return stored.autograd


@dataclass(frozen=True)
class _Entry:
    """What an entry stores: the autograd model, and what its derivatives read of its model, by
    tokens (None for a model without them), for the next model's read."""

    autograd: Any
    basis: Optional[DerivativesBasis]


def _derive(model: Model, data: bytes, name: str, previous: Optional[_Entry], same_model: bool,
            autograd_model: Callable[..., Any]) -> _Entry:
    """The autograd model of ``data`` against ``model``, from the latest entry of the lineage
    (``previous``): read against this model (``same_model``: an edit of derivatives.yaml), or an
    earlier one (an edit of the operator yaml: what changed between the two is found by tokens,
    model_tokens.py). Whatever stands is taken; the rest is derived again."""
    earlier = previous.autograd if previous is not None else None
    tokens = earlier.tokens if same_model and earlier is not None else model_tokens(model)
    changes = None  # what changed since an earlier model (None: the same model, or nothing to tell)
    if earlier is not None and not same_model and earlier.tokens is not None and tokens is not None:
        changes = changes_between(earlier.tokens, tokens)
    basis = previous.basis if previous is not None and changes is not None else None
    derivatives = _derivatives(model, data, name, earlier, basis, same_model, changes)
    carried = earlier if same_model or changes is not None else None
    autograd = autograd_model(model, derivatives, previous=carried, changes=changes, tokens=tokens)
    if tokens is None:
        return _Entry(autograd, None)
    if basis is not None and derivatives is earlier.derivatives:
        return _Entry(autograd, basis)  # the same read: the same basis
    same_model_basis = previous.basis if same_model and previous is not None else None
    return _Entry(autograd, derivatives_basis(data, derivatives, model, same_model_basis))


def _derivatives(model: Model, data: bytes, name: str, earlier: Any, basis: Optional[DerivativesBasis],
                 same_model: bool, changes: Optional[ModelChanges]) -> Derivatives:
    """The derivatives of ``data``: the earlier read whole when it stands for this model (an edit
    of the operator yaml that touched nothing it read), else read entry by entry from it."""
    previous = earlier.derivatives if earlier is not None else None
    if basis is not None:
        whole = carried_whole(data, previous, basis, model, changes)
        if whole is not None:
            return whole
    family_unchanged = family_check(basis, previous, model, changes) if basis is not None else None
    return read_derivatives(data, name, model, previous, same_model=same_model, family_unchanged=family_unchanged)


def _entry_path(cache_dir: str, entry: str) -> str:
    return os.path.join(cache_dir, AUTOGRAD_DIR, *entry.split("/")) + ".pickle"


def _read_previous(cache_dir: str, latest: Optional[str], model: Model, autograd_model: type, same_model: bool) -> Optional[_Entry]:
    """The latest entry of the lineage, resolved against ``model``: when it was read against
    another model, its references to that model's functions and groups are resolved by name in
    this one (None where this one has none), and the model itself is None."""
    if latest is None:
        return None
    previous = _read_entry(_entry_path(cache_dir, latest), model, lenient=not same_model)
    if not isinstance(previous, _Entry) or not isinstance(previous.autograd, autograd_model):
        return None
    return previous if isinstance(previous.autograd.derivatives, Derivatives) else None


def _latest_entry(cache_dir: str, lineage: str) -> Optional[str]:
    try:
        with open(os.path.join(cache_dir, AUTOGRAD_DIR, _LATEST, lineage), "r", encoding="ascii") as handle:
            entry = handle.read().strip()
    except (OSError, ValueError):
        return None
    model_key, _, key = entry.partition("/")
    return entry if model_key.isalnum() and key.isalnum() else None


def _write_latest(cache_dir: str, lineage: str, entry: str) -> None:
    try:
        atomic_write(os.path.join(cache_dir, AUTOGRAD_DIR, _LATEST, lineage), entry.encode("ascii"))
    except OSError:
        pass


# ----- the model as references -----

def _reference(kind: str, name: str):
    """What an entry stores for the model, a group or a function: a call that _Unpickler answers
    from the run's model (called any other way, there is no model to answer from)."""
    raise pickle.UnpicklingError(f"a reference to {kind} {name!r} read without a model")


class _Pickler(pickle.Pickler):
    """Stores the model, its groups and its functions as ``_reference`` calls, found by type in the
    dispatch table: the entry's other objects cost no Python call each, as a persistent_id method's
    would (docs/benchmarks.md, "Figures behind the code")."""

    def __init__(self, file, model: Model):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        names = {id(model): ("model", "")}
        names.update((id(g), ("group", g.name)) for g in model.operator_groups)
        names.update((id(f), ("function", f.key)) for f in model.functions)

        def reference(obj):
            found = names.get(id(obj))
            if found is None:
                raise pickle.PicklingError("an autograd model refers to a model other than its own")
            return _reference, found
        self.dispatch_table = copyreg.dispatch_table.copy()
        self.dispatch_table.update({Model: reference, OperatorGroup: reference, NativeFunction: reference})


class _Unpickler(pickle.Unpickler):
    """Resolves the stored references against the run's model. ``lenient``: the entry of another
    model: a reference the model cannot resolve becomes None instead of a miss, and the model
    itself is None (what the entry derived from that model stands only where its tokens say so)."""

    def __init__(self, file, model: Model, lenient: bool = False):
        super().__init__(file)
        self.model = model
        self.lenient = lenient
        self.groups = {g.name: g for g in model.operator_groups}
        self.functions = {f.key: f for f in model.functions}

    def find_class(self, module: str, name: str):
        if module == __name__ and name == _reference.__name__:
            return self._resolve
        return super().find_class(module, name)

    def _resolve(self, kind: str, name: str):
        if kind == "model":
            return None if self.lenient else self.model
        table = self.groups if kind == "group" else self.functions if kind == "function" else None
        if table is None or name not in table:
            if self.lenient:
                return None
            raise pickle.UnpicklingError(f"unknown reference {kind} {name!r}")
        return table[name]


def _read_entry(path: str, model: Model, lenient: bool = False):
    gc_was_enabled = gc.isenabled()
    gc.disable()  # thousands of small objects: no collections while they load
    try:
        with open(path, "rb") as handle:
            return _Unpickler(handle, model, lenient).load()
    except FileNotFoundError:
        return None
    except Exception:  # truncated, from another opgen, or refers to what the model lacks: a miss
        return None
    finally:
        if gc_was_enabled:
            gc.enable()


def _write_entry(path: str, autograd, model: Model) -> bool:
    buffer = io.BytesIO()
    try:
        _Pickler(buffer, model).dump(autograd)
        atomic_write(path, buffer.getvalue())
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        return False  # a read-only or full cache, or something unpicklable, only costs speed
    return True


def _touch(path: str) -> None:
    try:
        os.utime(path)
    except OSError:
        pass


def prune_autograd(cache_dir: str, older_than_seconds: Optional[float] = None, *, now: Optional[float] = None) -> dict:
    """Remove stored autograd models only a revert could use: those read against a model that is
    not the latest of its yaml (``latest_model_keys``: what prune_models keeps), and, for the
    latest models, every entry but the last used (an edit of derivatives.yaml leaves one
    behind). With ``older_than_seconds``, only such entries unused for that long go."""
    root = os.path.join(cache_dir, AUTOGRAD_DIR)
    kept_models = latest_model_keys(cache_dir)
    deadline = None if older_than_seconds is None else (time.time() if now is None else now) - older_than_seconds
    removed, freed, kept = 0, 0, 0
    for model_key in sorted_entries(root):
        if model_key == _LATEST:
            continue
        entries = []
        for name in sorted_entries(os.path.join(root, model_key)):
            path = os.path.join(root, model_key, name)
            try:
                stat = os.stat(path)
            except OSError:
                continue
            entries.append((stat.st_mtime, stat.st_size, path))
        entries.sort(reverse=True)
        superseded = entries if model_key not in kept_models else entries[1:]
        for mtime, size, path in superseded:
            if deadline is not None and mtime >= deadline:
                continue
            try:
                os.remove(path)
            except OSError:
                continue
            removed, freed = removed + 1, freed + size
        kept += len(entries)
        try:
            os.rmdir(os.path.join(root, model_key))  # only when it is empty
        except OSError:
            pass
    for lineage in sorted_entries(os.path.join(root, _LATEST)):  # pointers to removed entries
        entry = _latest_entry(cache_dir, lineage)
        if entry is None or not os.path.exists(_entry_path(cache_dir, entry)):
            try:
                os.remove(os.path.join(root, _LATEST, lineage))
            except OSError:
                pass
    return {"autograd_removed": removed, "autograd_bytes_freed": freed, "autograd": kept - removed}

