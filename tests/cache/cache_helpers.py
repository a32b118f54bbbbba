"""Shared helpers of the cache store tests, importable by spawned child processes (a test module
is not: children import functions by module name, and this directory is on their sys.path)."""
import os
import random
import signal
import time
import traceback

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


def put_and_get_loop(root: str, names: list[str], seconds: float, max_bytes: int, seed: int) -> dict:
    """A child build: for ``seconds``, gets and puts ``names`` in random order; every hit must be
    exactly right."""
    rng = random.Random(seed)
    cache = CodegenCache(root, max_bytes=max_bytes)  # the children open a fresh index at once
    hits = puts = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
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


def open_fresh(base: str, count: int) -> list[int]:
    """Open (so create) caches base/0, base/1, ... in turn; children doing the same collide."""
    entries = []
    for i in range(count):
        with CodegenCache(os.path.join(base, str(i))) as cache:
            entries.append(cache.stats()["entries"])
    return entries


def run_together(context, target, arg_lists: list[tuple], timeout: float = 60) -> list:
    """``target(*args)`` in one child process per item of ``arg_lists``, all released at once by a
    barrier (so they surely overlap); their results in order, or AssertionError with a child's
    traceback."""
    barrier, results = context.Barrier(len(arg_lists)), context.Queue()
    children = [context.Process(target=_report_to, args=(results, barrier, i, target, args))
                for i, args in enumerate(arg_lists)]
    for child in children:
        child.start()
    try:
        reports = sorted(results.get(timeout=timeout) for _ in children)
    finally:
        for child in children:
            child.join(timeout)
    failures = [error for _, error, _ in reports if error]
    assert not failures, "\n".join(failures)
    return [value for _, _, value in reports]


def _report_to(results, barrier, index: int, target, args: tuple) -> None:
    barrier.wait(60)
    try:
        results.put((index, "", target(*args)))
    except BaseException:
        results.put((index, traceback.format_exc(), None))
