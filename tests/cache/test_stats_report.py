"""`opgen cache stats` says whose counters it shows: the codegen cache's (this checkout's, or a
shared directory's), this checkout's compiles (ccache's stats log under build/) and ccache's own,
machine-wide counters; its last build is every output directory of the last run, and groups
that came from the cache are "materialized from the cache", not "rendered"."""
import dataclasses
import os
import shutil

from opgen import cli
from opgen.cache.records import BuildRecord, Production
from opgen.cache.store import CodegenCache, codegen_dir
from opgen.cache_cli import CCACHE_STATS_LOG, checkout_compiles

from cache_helpers import files_of, key_of


def record_run(root):
    cache = CodegenCache(codegen_dir(root))
    cache.put(key_of("add"), "add", files_of("add"), 0.5)
    hit = Production("add", key_of("add"), cache.lookup(key_of("add"), "add"))
    core = BuildRecord("scons", cache.now(), 90, 0.1, (hit,), (), out_dir=os.path.abspath("build/gen"), run="r")
    backend = BuildRecord("scons --backend XLA", cache.now(), 20, 0.2,
                          (Production("mul@XLA", key_of("mul"), None),), (), out_dir=os.path.abspath("build/gen"), run="r")
    cache.record_build(backend)
    cache.record_build(dataclasses.replace(core))


def test_the_stats_log_counts_this_checkout_s_compiles(tmp_path):
    log = tmp_path / "ccache-stats.log"
    log.write_text("# a.cpp\ncache_miss\ndirect_cache_miss\nlocal_storage_write\n# b.cpp\ndirect_cache_hit\n"
                   "local_storage_hit\n# c.cpp\npreprocessed_cache_hit\n")
    figures = checkout_compiles(str(log))
    assert (figures["hits"], figures["misses"], figures["scope"]) == (2, 1, "checkout")
    assert checkout_compiles(str(tmp_path / "none.log")) is None


def test_stats_label_every_counter_and_cover_the_whole_last_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    record_run(str(tmp_path / "cache"))
    os.makedirs(os.path.dirname(CCACHE_STATS_LOG))
    with open(CCACHE_STATS_LOG, "w", encoding="utf-8") as handle:
        handle.write("# a.cpp\ndirect_cache_hit\n# b.cpp\ncache_miss\n")
    assert cli.main(["cache", "--cache-dir", str(tmp_path / "cache"), "stats"]) == 0
    text = capsys.readouterr().out
    assert "(shared: every build that names it)" in text
    assert "last build       2 of 110 groups produced: 1 materialized from the cache, 1 rendered" in text
    assert "  build/gen (scons --backend XLA): 1 of 20 groups produced: 1 rendered" not in text
    assert "  build/gen (scons --backend XLA): 1 of 20 groups produced: 0 materialized from the cache, 1 rendered" in text
    assert "  build/gen (scons): 1 of 90 groups produced: all materialized from the cache" in text
    assert "compiles, this checkout  1 ccache hits, 1 misses" in text
    if shutil.which("ccache"):
        assert "ccache, machine-wide     " in text and "every build using ccache's cache" in text
