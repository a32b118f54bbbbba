"""CodegenCache (opgen/cache/store.py): round trips, misses, corruption, two processes at once,
SIGKILL mid-put, LRU eviction, gc, stats, builds and group inputs."""
import dataclasses
import multiprocessing
import os
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from cache_helpers import (FakeClock, files_of, key_of, kill, open_fresh, put_and_get_loop, put_forever,
                           put_stalled_in, run_together)
from opgen.cache import DEFAULT_MAX_BYTES, CodegenCache
from opgen.cache.records import BuildRecord, Production
from opgen.cache.entry import entry_path
from opgen.cache.index import KEEP_INPUT_VERSIONS, ProductionRow

SPAWN = multiprocessing.get_context("spawn")
CLEAN = {"corrupt": [], "orphaned": [], "missing": []}


@pytest.fixture
def root(tmp_path):
    return str(tmp_path / "codegen")


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def cache(root, clock):
    with CodegenCache(root, clock=clock) as opened:
        yield opened


def problems(report: dict) -> dict:
    return {kind: report[kind] for kind in CLEAN}


def relative_entry(cache: CodegenCache, name: str) -> str:
    return os.path.relpath(entry_path(cache.objects_dir, key_of(name)), cache.root)


def put(cache: CodegenCache, name: str, render_seconds: float = 0.1, **kwargs) -> None:
    cache.put(key_of(name), name, files_of(name, **kwargs), render_seconds)


def keys_in(cache: CodegenCache) -> set[str]:
    return {entry["group"] for entry in cache.entries()}


# --- round trips and misses ------------------------------------------------------------------

def test_round_trip_keeps_every_file_exactly(cache, root):
    files = {f"dir_{i}/файл_{i}.h": f"// ✓ {i} 中文 \U0001F600\r\n\ttab\n" * (i % 7) for i in range(300)}
    files["empty.cpp"] = ""
    files["surrogate.txt"] = "lone \udc80 surrogate"
    cache.put(key_of("add"), "add", files, 0.25)
    assert cache.get(key_of("add"), "add") == files
    with CodegenCache(root) as other:  # another object (a later build) reads the same bytes
        assert other.get(key_of("add"), "add") == files


def test_default_limit_is_one_gib(root):
    assert DEFAULT_MAX_BYTES == 1 << 30
    assert CodegenCache(root).max_bytes == 1 << 30


def test_unknown_key_is_a_counted_miss(cache):
    assert cache.get(key_of("nothing"), "nothing") is None
    stats = cache.stats()
    assert (stats["hits"], stats["misses"], stats["entries"]) == (0, 1, 0)


def test_key_of_another_group_is_a_miss_that_keeps_the_entry(cache):
    put(cache, "add")
    assert cache.get(key_of("add"), "mul") is None
    assert cache.get(key_of("add"), "add") == files_of("add")
    assert (cache.stats()["misses"], cache.stats()["hits"]) == (1, 1)


@pytest.mark.parametrize("bad_key", ["../../etc", "ABCDEF0123456789", "", "0123"])
def test_keys_that_are_not_hex_digests_are_refused(cache, bad_key):
    with pytest.raises(ValueError):
        cache.put(bad_key, "add", {}, 0.0)
    with pytest.raises(ValueError):
        cache.get(bad_key, "add")


def test_rewriting_a_key_keeps_its_creation_time_and_hits(cache, clock):
    put(cache, "add")
    cache.get(key_of("add"), "add")
    clock.now += 50
    put(cache, "add", count=5)
    [entry] = cache.entries()
    assert (entry["created"], entry["last_used"], entry["hits"]) == (1000.0, 1050.0, 1)
    assert cache.get(key_of("add"), "add") == files_of("add", count=5)


def test_peek_reads_without_counting(cache):
    put(cache, "add")
    assert cache.peek(key_of("add")) == files_of("add")
    assert cache.peek(key_of("mul")) is None
    stats = cache.stats()
    assert (stats["hits"], stats["misses"], cache.entries()[0]["hits"]) == (0, 0, 0)


def test_threads_share_one_cache_object(cache):
    names = [f"op{i}" for i in range(40)]

    def work(name):
        put(cache, name)
        return cache.get(key_of(name), name) == files_of(name)

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(work, names * 2))
    assert keys_in(cache) == set(names)
    assert problems(cache.verify()) == CLEAN


# --- corruption ------------------------------------------------------------------------------

def flip_last_byte(path):
    data = bytearray(open(path, "rb").read())
    data[-2] ^= 0x01
    open(path, "wb").write(bytes(data))


def flip_header_byte(path):
    data = bytearray(open(path, "rb").read())
    data[30] ^= 0x01  # inside the recorded digest
    open(path, "wb").write(bytes(data))


def truncate(path):
    size = os.path.getsize(path)
    with open(path, "r+b") as handle:
        handle.truncate(size - 10)


def empty(path):
    open(path, "wb").close()


@pytest.mark.parametrize("damage", [flip_last_byte, flip_header_byte, truncate, empty])
def test_damaged_entry_is_reported_then_read_as_a_miss_and_replaced(cache, damage):
    put(cache, "add")
    put(cache, "mul")
    path = entry_path(cache.objects_dir, key_of("add"))
    damage(path)

    report = cache.verify()
    assert problems(report) == {"corrupt": [relative_entry(cache, "add")], "orphaned": [], "missing": []}
    assert report["ok"] == 1

    assert cache.get(key_of("add"), "add") is None
    assert not os.path.exists(path)
    assert keys_in(cache) == {"mul"}
    stats = cache.stats()
    assert (stats["corrupt"], stats["misses"], stats["hits"]) == (1, 1, 0)
    assert problems(cache.verify()) == CLEAN

    put(cache, "add")  # the next build stores it again
    assert cache.get(key_of("add"), "add") == files_of("add")


def test_repair_deletes_corrupt_entries(cache):
    put(cache, "add")
    truncate(entry_path(cache.objects_dir, key_of("add")))
    assert cache.verify(repair=True)["corrupt"] == [relative_entry(cache, "add")]
    assert cache.verify() == {"ok": 0, **CLEAN}
    assert cache.stats()["entries"] == 0


def test_missing_files_are_reported_and_their_rows_dropped(cache):
    put(cache, "add")
    put(cache, "mul")
    os.unlink(entry_path(cache.objects_dir, key_of("add")))
    assert problems(cache.verify())["missing"] == [relative_entry(cache, "add")]
    assert problems(cache.verify(repair=True))["missing"] == [relative_entry(cache, "add")]
    assert cache.verify() == {"ok": 1, **CLEAN}
    assert keys_in(cache) == {"mul"}


def test_a_get_of_a_vanished_file_drops_its_row(cache):
    put(cache, "add")
    os.unlink(entry_path(cache.objects_dir, key_of("add")))
    assert cache.get(key_of("add"), "add") is None
    assert cache.entries() == []
    assert cache.verify() == {"ok": 0, **CLEAN}


def test_entry_files_without_rows_are_orphans_that_repair_adopts(cache, root):
    put(cache, "add", render_seconds=0.75)
    with sqlite3.connect(os.path.join(root, "index.sqlite")) as db:
        db.execute("DELETE FROM entries")
    assert problems(cache.verify())["orphaned"] == [relative_entry(cache, "add")]
    cache.verify(repair=True)
    assert cache.verify() == {"ok": 1, **CLEAN}
    assert cache.get(key_of("add"), "add") == files_of("add")
    assert cache.stats()["seconds_saved"] == pytest.approx(0.75)


def test_stale_temp_files_are_orphans_fresh_ones_are_a_live_put(cache):
    put(cache, "add")
    shard = os.path.dirname(entry_path(cache.objects_dir, key_of("add")))
    fresh, stale = os.path.join(shard, ".tmp-fresh"), os.path.join(shard, ".tmp-stale")
    for path in (fresh, stale):
        open(path, "wb").write(b"half an entry")
    os.utime(stale, (time.time() - 120, time.time() - 120))
    assert problems(cache.verify())["orphaned"] == [os.path.relpath(stale, cache.root)]
    cache.verify(repair=True)
    assert not os.path.exists(stale) and os.path.exists(fresh)
    assert cache.verify() == {"ok": 1, **CLEAN}


# --- two processes, and SIGKILL --------------------------------------------------------------

@pytest.mark.parametrize("max_bytes", [DEFAULT_MAX_BYTES, 6000], ids=["roomy", "evicting"])
def test_two_processes_put_and_get_the_same_and_different_keys(root, max_bytes):
    shared = [f"shared{i}" for i in range(12)]
    jobs = [(root, shared + [f"own{seed}_{i}" for i in range(12)], 0.5, max_bytes, seed) for seed in (1, 2)]
    results = run_together(SPAWN, put_and_get_loop, jobs)
    assert all(result["hits"] > 10 and result["puts"] > 10 for result in results), results
    with CodegenCache(root, max_bytes=max_bytes) as cache:
        report = cache.verify()
        stats = cache.stats()
        assert problems(report) == CLEAN
        assert report["ok"] == stats["entries"] > 0
        assert stats["bytes"] <= max_bytes + 1000  # each process keeps only the entry it just put
        assert (max_bytes == DEFAULT_MAX_BYTES) == (stats["evictions"] == 0)
        for entry in cache.entries():
            assert cache.get(entry["key"], entry["group"]) == files_of(entry["group"])


def test_processes_creating_one_fresh_cache_at_once_all_succeed(tmp_path):
    # Switching a new index to WAL can report "locked" at once (no busy wait) to all but one.
    assert run_together(SPAWN, open_fresh, [(str(tmp_path), 30)] * 4) == [[0] * 30] * 4


@pytest.mark.parametrize("stage", ["write", "commit"])
def test_a_put_killed_midway_leaves_no_corrupt_entry(root, stage):
    ready = SPAWN.Event()
    child = SPAWN.Process(target=put_stalled_in, args=(root, ready, stage))
    child.start()
    assert ready.wait(30), "the child never reached the stall"
    kill(child)
    with CodegenCache(root) as cache:
        report = cache.verify()
        assert report["corrupt"] == [] and report["missing"] == []
        if stage == "write":  # a fresh temp file: possibly a live build's, so not reported yet
            assert report["orphaned"] == [] and cache.get(key_of("stalled"), "stalled") is None
            for item in os.scandir(os.path.dirname(entry_path(cache.objects_dir, key_of("stalled")))):
                os.utime(item.path, (time.time() - 120, time.time() - 120))
            assert len(cache.verify(repair=True)["orphaned"]) == 1
        else:  # renamed but never indexed: whole, so repair indexes it
            assert report["orphaned"] == [relative_entry(cache, "stalled")]
            cache.verify(repair=True)
            assert cache.get(key_of("stalled"), "stalled") == files_of("stalled")
        assert problems(cache.verify()) == CLEAN
        put(cache, "after")  # the killed writer's lock died with it
        assert cache.get(key_of("after"), "after") == files_of("after")


@pytest.mark.parametrize("delay", [0.02, 0.11, 0.23])
def test_killing_a_looping_writer_at_any_moment_leaves_no_corrupt_entry(root, delay):
    ready = SPAWN.Event()
    child = SPAWN.Process(target=put_forever, args=(root, ready, 20000))
    child.start()
    assert ready.wait(30)
    time.sleep(delay)
    kill(child)
    with CodegenCache(root) as cache:
        report = cache.verify(repair=True)
        assert report["corrupt"] == [] and report["missing"] == []
        assert all(".tmp-" not in path for path in report["orphaned"])  # temps are too fresh to judge
        assert problems(cache.verify()) == CLEAN
        for entry in cache.entries():
            assert cache.get(entry["key"], entry["group"]) == files_of(entry["group"], count=4, width=20000)


# --- size: LRU eviction and gc ---------------------------------------------------------------

def entry_size(root) -> int:
    with CodegenCache(root + "-probe") as probe:
        put(probe, "g0")
        return probe.entries()[0]["size"]


def test_eviction_drops_the_least_recently_used_first(root, clock):
    size = entry_size(root)
    with CodegenCache(root, max_bytes=3 * size + size // 2, clock=clock) as cache:
        for name in ("g1", "g2", "g3"):
            clock.now += 1
            put(cache, name)
        clock.now += 1
        assert cache.get(key_of("g1"), "g1") is not None  # g1 is now newer than g2 and g3
        clock.now += 1
        put(cache, "g4")
        assert keys_in(cache) == {"g1", "g3", "g4"}
        assert not os.path.exists(entry_path(cache.objects_dir, key_of("g2")))
        clock.now += 1
        put(cache, "g5")
        assert keys_in(cache) == {"g1", "g4", "g5"}
        stats = cache.stats()
        assert (stats["evictions"], stats["entries"], stats["bytes"]) == (2, 3, 3 * size)
        assert cache.verify() == {"ok": 3, **CLEAN}


def test_an_entry_larger_than_the_limit_still_lands(root):
    with CodegenCache(root, max_bytes=10) as cache:
        put(cache, "g1")
        put(cache, "g2")
        assert keys_in(cache) == {"g2"}
        assert cache.stats()["evictions"] == 1


def test_gc_to_a_size_keeps_the_most_recently_used(root, clock):
    size = entry_size(root)
    with CodegenCache(root, clock=clock) as cache:
        for name in ("g1", "g2", "g3", "g4", "g5"):
            clock.now += 1
            put(cache, name)
        report = cache.gc(max_bytes=2 * size)
        assert report == {"evicted": 3, "expired": 0, "bytes_freed": 3 * size, "temps_removed": 0,
                          "key_memos_removed": 0, "entries": 2, "bytes": 2 * size}
        assert keys_in(cache) == {"g4", "g5"}
        assert cache.stats()["evictions"] == 3
        assert cache.gc()["evicted"] == 0  # within the 1 GiB default


def test_gc_by_age_drops_entries_unused_for_that_long(cache, clock):
    for name, moment in (("old", 10.0), ("older", 5.0), ("recent", 90.0)):
        clock.now = moment
        put(cache, name)
    clock.now = 95.0
    assert cache.get(key_of("older"), "older") is not None  # used lately, however old
    clock.now = 100.0
    report = cache.gc(older_than_seconds=50)
    assert (report["evicted"], report["expired"], report["entries"]) == (1, 1, 2)
    assert keys_in(cache) == {"older", "recent"}
    assert not os.path.exists(entry_path(cache.objects_dir, key_of("old")))
    assert cache.verify() == {"ok": 2, **CLEAN}


def test_key_memos_round_trip_and_age_out(cache):
    keys = {"add": key_of("add"), "mul": key_of("mul")}
    memo, unused = key_of("memo"), key_of("unused")
    assert cache.remembered_keys(memo) is None
    cache.remember_keys(memo, keys)
    cache.remember_keys(unused, keys)
    assert cache.remembered_keys(memo) == keys
    day_ago = time.time() - 86400
    for name in (memo, unused):
        os.utime(os.path.join(cache.root, "keys", name + ".json"), (day_ago, day_ago))
    assert cache.remembered_keys(memo) == keys  # a read keeps it young
    assert cache.gc()["key_memos_removed"] == 0  # only an age limit removes memos
    assert cache.gc(older_than_seconds=3600)["key_memos_removed"] == 1
    assert cache.remembered_keys(memo) == keys and cache.remembered_keys(unused) is None


def test_gc_removes_stale_temp_files(cache):
    put(cache, "add")
    stale = os.path.join(os.path.dirname(entry_path(cache.objects_dir, key_of("add"))), ".tmp-stale")
    open(stale, "wb").close()
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    assert cache.gc()["temps_removed"] == 1
    assert not os.path.exists(stale)


# --- figures, builds, inputs -----------------------------------------------------------------

def test_stats_figures(cache, clock, root):
    put(cache, "add", render_seconds=1.5)
    put(cache, "mul", render_seconds=2.0)
    clock.now += 10
    for name in ("add", "add", "mul", "sub"):
        cache.get(key_of(name), name)
    stats = cache.stats()
    on_disk = sum(os.path.getsize(entry_path(cache.objects_dir, key_of(n))) for n in ("add", "mul"))
    assert stats == {"root": root, "entries": 2, "bytes": on_disk, "max_bytes": DEFAULT_MAX_BYTES,
                     "hits": 3, "misses": 1, "evictions": 0, "corrupt": 0, "hit_rate": 0.75,
                     "seconds_saved": pytest.approx(5.0), "builds": 0, "last_build": None,
                     "remote": {"hits": 0, "misses": 0, "errors": 0, "rejected": 0}}
    by_group = {entry["group"]: entry for entry in cache.entries()}
    assert by_group["add"] == {"group": "add", "key": key_of("add"), "size": by_group["add"]["size"],
                               "created": 1000.0, "last_used": 1010.0, "hits": 2, "render_seconds": 1.5}
    assert by_group["mul"]["hits"] == 1
    assert [entry["group"] for entry in cache.entries("a*")] == ["add"]


def build_of(cache: CodegenCache, label: str, hits=(), rendered=(), inputs=(), groups=None, seconds=0.5,
             started=None) -> BuildRecord:
    """A BuildRecord whose ``hits`` are looked up in ``cache`` and whose ``rendered`` groups missed."""
    produced = [Production(name, key_of(name), cache.lookup(key_of(name), name)) for name in hits]
    produced += [Production(name, key_of(name), None) for name in rendered]
    assert all(p.found is not None for p in produced[:len(hits)])
    return BuildRecord(label, cache.now() if started is None else started,
                       len(produced) if groups is None else groups, seconds, tuple(produced), tuple(inputs))


def test_a_lookup_counts_nothing_until_the_build_is_recorded(cache):
    put(cache, "add", render_seconds=1.25)
    assert cache.lookup(key_of("add"), "add").files == files_of("add")
    assert cache.lookup(key_of("mul"), "mul") is None
    assert cache.lookup(key_of("add"), "mul") is None  # another group's key
    stats = cache.stats()
    assert (stats["hits"], stats["misses"], stats["builds"], cache.entries()[0]["hits"]) == (0, 0, 0, 0)


def test_builds_record_their_figures_and_time_saved(cache, clock):
    put(cache, "add", render_seconds=1.25)
    started = cache.now()
    clock.now += 3
    first = cache.record_build(build_of(cache, "scons", hits=["add"], rendered=["mul", "sub", "div"], groups=4,
                                        seconds=2.5, started=started))
    second = cache.record_build(build_of(cache, "generate", rendered=["a", "b", "c", "d"], seconds=1.0))
    assert second > first

    stats = cache.stats()
    assert stats["builds"] == 2
    assert (stats["hits"], stats["misses"], stats["seconds_saved"]) == (1, 7, pytest.approx(1.25))
    build = {"id": second, "label": "generate", "started": 1003.0, "finished": 1003.0,
             "groups": 4, "hits": 0, "misses": 4, "regenerated": 4, "seconds": 1.0,
             "saved_seconds": 0.0, "hit_rate": 0.0, "remote_hits": 0, "remote_misses": 0,
             "remote_errors": 0, "remote_rejected": 0, "run": "", "out_dir": ""}
    assert stats["last_build"] == {**build, "outputs": [build]}  # recorded without a run: a run of its own
    with sqlite3.connect(os.path.join(cache.root, "index.sqlite")) as db:
        row = db.execute("SELECT started, finished, hits, misses, saved_seconds FROM builds WHERE id = ?",
                         (first,)).fetchone()
    assert row == (1000.0, 1003.0, 1, 3, pytest.approx(1.25))
    assert cache.entries()[0]["hits"] == 1 and cache.entries()[0]["last_used"] == 1003.0


def test_a_build_records_each_groups_productions_per_output_directory(cache):
    put(cache, "add")
    first = cache.record_build(dataclasses.replace(build_of(cache, "scons", hits=["add"], rendered=["mul"]), out_dir="/a"))
    second = cache.record_build(dataclasses.replace(build_of(cache, "scons", rendered=["add"]), out_dir="/b"))
    third = cache.record_build(dataclasses.replace(build_of(cache, "scons", rendered=["add"]), out_dir="/a"))
    add = key_of("add")
    assert cache.productions("add") == [ProductionRow("/a", third, add, False), ProductionRow("/a", first, add, True)]
    assert cache.productions("add", "/b") == [ProductionRow("/b", second, add, False)]
    assert cache.productions("mul") == [ProductionRow("/a", first, key_of("mul"), False)]
    assert cache.productions("div") == []


def test_a_hit_on_an_entry_without_a_row_adopts_it(cache, root):
    put(cache, "add", render_seconds=0.5)
    with sqlite3.connect(os.path.join(root, "index.sqlite")) as db:
        db.execute("DELETE FROM entries")
    cache.record_build(build_of(cache, "scons", hits=["add"]))
    assert [(e["group"], e["hits"]) for e in cache.entries()] == [("add", 1)]
    assert problems(cache.verify()) == CLEAN


def record_inputs(cache: CodegenCache, group: str, key: str, inputs: dict) -> int:
    return cache.record_build(BuildRecord("scons", cache.now(), 1, 0.0, (), ((group, key, inputs),)))


def test_inputs_history_is_newest_first_and_skips_repeats(cache):
    versions = [{"add.out: argument alpha": f"Scalar alpha={i}", "template ü.j2": "abc"} for i in range(3)]
    builds = [record_inputs(cache, "add", "k1", versions[0]), record_inputs(cache, "add", "k2", versions[1])]
    record_inputs(cache, "add", "k2", versions[1])  # unchanged key: nothing new to remember
    builds.append(record_inputs(cache, "mul", "m1", {"x": "y"}))
    builds.append(record_inputs(cache, "add", "k3", versions[2]))
    assert cache.inputs_history("add") == [("k3", versions[2], builds[3]), ("k2", versions[1], builds[1])]
    assert cache.inputs_history("add", 10) == [("k3", versions[2], builds[3]), ("k2", versions[1], builds[1]),
                                               ("k1", versions[0], builds[0])]
    assert cache.inputs_history("mul", 1) == [("m1", {"x": "y"}, builds[2])]
    assert cache.inputs_history("div") == []
    assert cache.newest_input_keys() == {"add": "k3", "mul": "m1"}


def test_inputs_history_keeps_a_bounded_number_of_versions(cache):
    for i in range(KEEP_INPUT_VERSIONS + 5):
        record_inputs(cache, "add", f"k{i}", {"n": str(i)})
    history = cache.inputs_history("add", 100)
    assert len(history) == KEEP_INPUT_VERSIONS
    assert history[0][0] == f"k{KEEP_INPUT_VERSIONS + 4}"


def test_the_last_build_covers_every_output_directory_of_its_run(cache, clock):
    """An SCons run records one build per output directory (the core groups, a backend's): the
    last build is all of them, summed, each under "outputs"; a no-op directory records nothing
    unless its run was recorded already."""
    put(cache, "add", render_seconds=1.0)
    cache.record_build(build_of(cache, "older", rendered=["x"]))
    backend = build_of(cache, "scons --backend XLA", rendered=["a", "b"], groups=20)
    cache.record_build(dataclasses.replace(backend, run="run-1", out_dir="/p/build/gen"))
    assert cache.last_run_id() == "run-1"
    core = build_of(cache, "scons", hits=["add"], groups=90)
    cache.record_build(dataclasses.replace(core, run="run-1", out_dir="/p/build/gen"))
    last = cache.stats()["last_build"]
    assert (last["groups"], last["hits"], last["misses"], last["regenerated"]) == (110, 1, 2, 3)
    assert [(o["label"], o["groups"], o["regenerated"]) for o in last["outputs"]] == [
        ("scons --backend XLA", 20, 2), ("scons", 90, 1)]


def test_a_session_that_produced_nothing_joins_its_run_only(cache):
    from opgen.cache.session import CacheSession

    idle = CacheSession(cache, "scons", run="run-2")
    idle.finish(90)
    assert cache.stats()["builds"] == 0  # a no-op run writes nothing
    cache.record_build(dataclasses.replace(build_of(cache, "scons --backend XLA", rendered=["a"], groups=20),
                                           run="run-2"))
    CacheSession(cache, "scons", run="run-2").finish(90)
    last = cache.stats()["last_build"]
    assert [(o["label"], o["groups"], o["regenerated"]) for o in last["outputs"]] == [
        ("scons --backend XLA", 20, 1), ("scons", 90, 0)]
