"""Shared helpers of the cache store tests, importable by spawned child processes (a test module
is not: children import functions by module name, and this directory is on their sys.path)."""
import os
import random
import signal
import time

from opgen.cache.store import CodegenCache
from opgen.fingerprint import digest


def key_of(name: str) -> str:
    return digest(name.encode())


def files_of(name: str, count: int = 3, width: int = 200) -> dict[str, str]:
    """Deterministic files for ``name``, so any reader can check what it got back."""
    return {f"{name}/file_{i}.cpp": f"// {name} {i} ü\n" + ("x" * width) + "\n" for i in range(count)}


class FakeClock:
    """Index time that only moves when a test says so."""

    def __init__(self, now: float = 1000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


def put_and_get_loop(root: str, names: list[str], start_at: float, seconds: float, max_bytes: int,
                     seed: int) -> dict:
    """A child build: from wall time ``start_at`` (so two children surely overlap) for ``seconds``,
    gets and puts ``names`` in random order; every hit must be exactly right."""
    rng = random.Random(seed)
    time.sleep(max(0.0, start_at - time.time()))
    cache = CodegenCache(root, max_bytes=max_bytes)  # both open a fresh index at once
    hits = puts = 0
    while time.time() < start_at + seconds:
        name = rng.choice(names)
        files = cache.get(key_of(name), name)
        if files is None:
            cache.put(key_of(name), name, files_of(name), 0.01)
            puts += 1
        else:
            assert files == files_of(name), f"wrong files for {name}"
            hits += 1
    cache.close()
    return {"hits": hits, "puts": puts}


def put_forever(root: str, ready, width: int) -> None:
    """Keep putting fresh entries until killed; ``ready`` is set after the first one."""
    cache = CodegenCache(root)
    n = 0
    while True:
        name = f"loop{n % 50}"
        cache.put(key_of(name), name, files_of(name, count=4, width=width), 0.01)
        ready.set()
        n += 1


def put_stalled_in(root: str, ready, stage: str) -> None:
    """Put one entry but stall, until killed, at ``stage``: "write" (half the temp file written)
    or "commit" (the entry renamed into place, its index row not yet committed)."""
    from opgen.cache import entry, index, store

    if stage == "write":
        def half_write(path, data):
            directory = os.path.dirname(path)
            os.makedirs(directory, exist_ok=True)
            temp = os.path.join(directory, entry.TEMP_PREFIX + os.path.basename(path) + "-stalled")
            with open(temp, "wb") as handle:
                handle.write(data[: len(data) // 2])
            _stall(ready)
        store.write_temp = half_write
    else:
        upsert = index.upsert_entry

        def upsert_then_stall(*args, **kwargs):
            upsert(*args, **kwargs)
            _stall(ready)
        index.upsert_entry = upsert_then_stall
    CodegenCache(root).put(key_of("stalled"), "stalled", files_of("stalled"), 0.5)


def _stall(ready) -> None:
    ready.set()
    while True:
        time.sleep(1)


def kill(process) -> None:
    os.kill(process.pid, signal.SIGKILL)
    process.join(10)
    assert process.exitcode == -signal.SIGKILL
