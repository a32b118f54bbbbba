"""Keep the autograd facts of a run on disk: the derivatives yaml read against a model, the
autograd plan (one decision per function) and each group's autograd fingerprint, so a repeat
run is a pickle load instead of a parse of derivatives.yaml (mostly its formulas' saved-name
rules) and a plan of every function, both costly on PyTorch's yaml (docs/benchmarks.md,
"Figures behind the code").

    autograd/<model key>/<key>.pickle   an AutogradModel without its Model; model key: the
                                        parse cache's key of the model it was read against;
                                        key = xxh3_128(the derivatives yaml's bytes, the name
                                        errors show, the model key, opgen/model's and
                                        opgen/gen's sources)

The model is the one the parse cache gave this run (``model_cache_key``): only a model that
came from the parse cache has a key, so a model built any other way is never served a stale
plan. The model, its groups and its functions are not stored: they are references, resolved
against the run's model on load (a reference it cannot resolve is a miss). A yaml with errors
is never stored, so its errors are always reported from a full read. `opgen cache gc` prunes
the entries of models it prunes, and superseded entries (prune_autograd).
"""
from __future__ import annotations

import gc
import io
import os
import pickle
import time
from typing import Any, Callable, Optional

from ..fingerprint import default_cache_dir, digest, package_fingerprint
from ..model.derivatives import Derivatives, build_derivatives
from ..model.grouping import OperatorGroup
from ..model.loader import Model
from ..model.native_function import NativeFunction
from ..writer import atomic_write
from ..yamlio import load_bytes, read_input
from .parse_cache import latest_model_keys, model_cache_key, sorted_entries

_FORMAT = b"opgen-autograd-cache-1"
AUTOGRAD_DIR = "autograd"


def load_autograd_cached(model: Model, derivatives_path: str, autograd_model: Callable[[Model, Derivatives], Any], *,
                         cache_dir: Optional[str] = None, display_name: Optional[str] = None):
    """``autograd_model(model, load_derivatives(derivatives_path, model, display_name))`` (the
    generators' AutogradModel, which cache/ does not import), read from the cache when this yaml
    was read against this model before; ``cache_dir=""`` disables the cache."""

    name = display_name or derivatives_path
    data = read_input(derivatives_path, name)
    cache_dir = default_cache_dir() if cache_dir is None else cache_dir
    model_key = model_cache_key(model)
    path = None
    if cache_dir and model_key:
        key = digest(_FORMAT, data, name.encode(), model_key.encode(), package_fingerprint("model").encode(),
                     package_fingerprint("gen").encode())
        path = os.path.join(cache_dir, AUTOGRAD_DIR, model_key, key + ".pickle")
        cached = _read_entry(path, model)
        if isinstance(cached, autograd_model):
            _touch(path)
            return cached
    autograd = autograd_model(model, build_derivatives(load_bytes(data, name), name, model))
    if path is not None:
        for group in model.operator_groups:
            autograd.fingerprint(group)  # what every run asks of every group: remembered with the plan
        _write_entry(path, autograd, model)
    return autograd


# ----- the model as references -----

class _Pickler(pickle.Pickler):
    def __init__(self, file, model: Model):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.model = model
        self.groups = {id(g): g.name for g in model.operator_groups}
        self.functions = {id(f): str(f.func.name) for f in model.functions}

    def persistent_id(self, obj):
        if obj is self.model:
            return ("model",)
        if isinstance(obj, OperatorGroup) and id(obj) in self.groups:
            return ("group", self.groups[id(obj)])
        if isinstance(obj, NativeFunction) and id(obj) in self.functions:
            return ("function", self.functions[id(obj)])
        if isinstance(obj, (Model, OperatorGroup, NativeFunction)):
            raise pickle.PicklingError("an autograd model refers to a model other than its own")
        return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, model: Model):
        super().__init__(file)
        self.model = model
        self.groups = {g.name: g for g in model.operator_groups}
        self.functions = {str(f.func.name): f for f in model.functions}

    def persistent_load(self, pid):
        kind = pid[0]
        if kind == "model":
            return self.model
        table = self.groups if kind == "group" else self.functions if kind == "function" else None
        if table is None or pid[1] not in table:
            raise pickle.UnpicklingError(f"unknown reference {pid!r}")
        return table[pid[1]]


def _read_entry(path: str, model: Model):
    gc_was_enabled = gc.isenabled()
    gc.disable()  # thousands of small objects: no collections while they load
    try:
        with open(path, "rb") as handle:
            return _Unpickler(handle, model).load()
    except FileNotFoundError:
        return None
    except Exception:  # truncated, from another opgen, or refers to what the model lacks: a miss
        return None
    finally:
        if gc_was_enabled:
            gc.enable()


def _write_entry(path: str, autograd, model: Model) -> None:
    buffer = io.BytesIO()
    try:
        _Pickler(buffer, model).dump(autograd)
        atomic_write(path, buffer.getvalue())
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        pass  # a read-only or full cache, or something unpicklable, only costs speed


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
    return {"autograd_removed": removed, "autograd_bytes_freed": freed, "autograd": kept - removed}

