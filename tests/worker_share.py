"""What the test command's parallel workers (pytest-xdist, tests/parallel_schedule.py) share: a
session fixture's costly tree (the built project, its backends, the plugin's venv) is made once
for the whole run, by the first worker that asks, and read by the others; a plain run (-n0) makes
it as before, in its own temp directory."""
from __future__ import annotations

import contextlib
import fcntl
import pickle
import shutil
from pathlib import Path
from typing import Callable, Iterator, TypeVar

T = TypeVar("T")


_worker: str | None = None


def set_worker(config) -> None:
    """Called by pytest_configure: the worker's name from xdist's own record (not the environment,
    which a pytest the tests start inherits)."""
    global _worker
    _worker = getattr(config, "workerinput", {}).get("workerid")


def worker_name() -> str | None:
    """gw0, gw1, ... in an xdist worker; None in a plain run."""
    return _worker


def shared_root(tmp_path_factory) -> Path:
    """The directory every worker of this run sees: the parent of the workers' own basetemps."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if worker_name() else base


@contextlib.contextmanager
def exclusive(tmp_path_factory, name: str) -> Iterator[None]:
    """Holds the run-wide lock ``name`` (flock: released when the holder dies, too); a no-op in a plain run."""
    if not worker_name():
        yield
        return
    with open(shared_root(tmp_path_factory) / f"{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def made_once(tmp_path_factory, name: str, make: Callable[[Path], T]) -> T:
    """make(an empty directory) once per run: the first worker makes it under the lock ``name`` and
    records its result (plain data: pickled, so no class of a conftest module); the others wait for
    it and return that record. A make that fails records nothing, so the next worker to ask tries
    again and fails in its own test too."""
    if not worker_name():
        return make(tmp_path_factory.mktemp(name))
    root = shared_root(tmp_path_factory)
    record = root / f"{name}.pickle"
    with exclusive(tmp_path_factory, name):
        if record.exists():
            return pickle.loads(record.read_bytes())
        directory = root / name
        shutil.rmtree(directory, ignore_errors=True)  # a failed make's leftovers
        directory.mkdir()
        result = make(directory)
        record.write_bytes(pickle.dumps(result))
        return result
