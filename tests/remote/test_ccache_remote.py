"""Both remote tiers (scons --ccache-remote=URL --opgen-cache-remote=URL) against one real
redis-server on loopback: checkout A uploads every object (its local hits too, CCACHE_RESHARE=1)
and every generated group; checkout B, at another path with empty local caches (ccache and
codegen), gets every group and every object from redis and renders and compiles nothing itself."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import REPO_ROOT, ccache_stats, copy_project, run_scons, snapshot
from scons_helpers import GEN, GROUPS, LIBRARY, ok, scons
from servers import HttpStore, free_port, redis_url, start_redis

needs_ccache = pytest.mark.skipif(shutil.which("ccache") is None, reason="ccache is not installed")


def objects_of(checkout):
    """{path under build/obj: bytes} of every compiled object of the checkout."""
    found = {}
    for directory, _, files in os.walk(checkout / "build" / "obj"):
        for name in files:
            if name.endswith((".o", ".os")):
                path = Path(directory, name)
                found[str(path.relative_to(checkout))] = path.read_bytes()
    return found


def new_checkout(path):
    path.mkdir(parents=True)
    return copy_project(path)


def build_with(checkout, environment, *args):
    """scons_helpers.scons() with extra environment variables for ccache."""
    return scons(checkout, *args, env=environment)


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory):
    server = start_redis(str(tmp_path_factory.mktemp("redis")))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def two_checkouts(redis_server, tmp_path_factory):
    """A builds with the usual local ccache (warm from other builds) and shares it; B builds at
    another path with an empty local ccache. Both use the same redis."""
    if shutil.which("ccache") is None:
        pytest.skip("ccache is not installed")
    root = tmp_path_factory.mktemp("ccache-remote")
    url = redis_url(redis_server)
    checkout_a = new_checkout(root / "checkout-a")
    # A's own counters come from its stats log: the cache's are shared with any concurrent build.
    stats_log_a = root / "ccache-a-stats.log"
    build_a = ok(build_with(checkout_a, {"CCACHE_RESHARE": "1", "CCACHE_STATSLOG": str(stats_log_a)}, "--ccache=on",
                            f"--ccache-remote={url}", f"--opgen-cache-remote={url}"))
    uploads_a = stats_log_a.read_text().splitlines().count("remote_storage_write")

    checkout_b = new_checkout(root / "elsewhere" / "checkout-b")
    empty_cache = root / "ccache-b"
    # An exported remote that does not answer: the option must win over it.
    dead_remote = f"redis://127.0.0.1:{free_port()}"
    build_b = ok(build_with(checkout_b, {"CCACHE_DIR": str(empty_cache), "CCACHE_REMOTE_STORAGE": dead_remote},
                            "--ccache=on", f"--ccache-remote={url}", f"--opgen-cache-remote={url}"))
    # What `opgen cache stats` tells of B: its codegen cache and its ccache, local and remote.
    stats = subprocess.run([sys.executable, "-m", "opgen", "cache", "--cache-dir", str(checkout_b / "cache"), "stats",
                            "--json"], cwd=REPO_ROOT, env=dict(os.environ, CCACHE_DIR=str(empty_cache)),
                           capture_output=True, text=True, check=True)
    return {"a": checkout_a, "b": checkout_b, "build_a": build_a, "build_b": build_b, "uploads_a": uploads_a,
            "stats_b": ccache_stats(empty_cache), "url": url, "opgen_stats_b": json.loads(stats.stdout)}


def test_checkout_b_gets_every_generated_group_from_redis(two_checkouts):
    line = "[opgen] codegen cache: {} hits, {} rendered (remote: {} hits, {} misses, 0 errors, 0 rejected)"
    assert line.format(0, GROUPS, 0, GROUPS) in two_checkouts["build_a"].result.stdout
    assert line.format(GROUPS, 0, GROUPS, 0) in two_checkouts["build_b"].result.stdout
    generated = [{path: data for path, (data, _) in snapshot(two_checkouts[name] / GEN).items()} for name in "ab"]
    assert generated[0] == generated[1] and len(generated[0]) > GROUPS
    stats = two_checkouts["opgen_stats_b"]
    assert stats["remote"] == {"hits": GROUPS, "misses": 0, "errors": 0, "rejected": 0}
    assert stats["ccache"]["remote"]["hits"] == len(two_checkouts["build_b"].compiled)
    assert stats["ccache"]["misses"] == 0


def test_the_build_announces_the_remote_and_maps_the_checkout_away(two_checkouts):
    for name in ("a", "b"):
        build = two_checkouts[f"build_{name}"]
        assert f"[opgen] ccache remote storage: {two_checkouts['url']}\n" in build.result.stdout
        assert f"-ffile-prefix-map={two_checkouts[name]}=." in build.result.stdout


@needs_ccache
def test_checkout_a_uploads_every_object(two_checkouts):
    compiled = two_checkouts["build_a"].compiled
    assert len(compiled) > 100  # the whole library: hand-written and generated objects
    # Direct mode writes a manifest and a result per compile, hit or miss (CCACHE_RESHARE=1).
    assert two_checkouts["uploads_a"] == 2 * len(compiled)


@needs_ccache
def test_checkout_b_gets_every_object_from_redis(two_checkouts):
    compiled, stats = two_checkouts["build_b"].compiled, two_checkouts["stats_b"]
    assert compiled == two_checkouts["build_a"].compiled
    assert stats["remote_storage_hit"] == len(compiled)
    assert stats["cache_miss"] == 0
    assert stats["local_storage_hit"] == 0
    assert stats["remote_storage_error"] == stats["remote_storage_timeout"] == 0


@needs_ccache
def test_objects_and_library_are_identical_and_name_no_checkout(two_checkouts):
    checkout_a, checkout_b = two_checkouts["a"], two_checkouts["b"]
    objects_a, objects_b = objects_of(checkout_a), objects_of(checkout_b)
    assert set(objects_a) == set(objects_b)
    assert [path for path in objects_a if objects_a[path] != objects_b[path]] == []
    library_a, library_b = (checkout / LIBRARY for checkout in (checkout_a, checkout_b))
    assert library_a.read_bytes() == library_b.read_bytes()
    for checkout, objects in ((checkout_a, objects_a), (checkout_b, objects_b)):
        named = [path for path, data in objects.items() if str(checkout).encode() in data]
        assert named == []
        assert str(checkout).encode() not in (checkout / LIBRARY).read_bytes()


@pytest.fixture(scope="module")
def spare_checkout(tmp_path_factory):
    """For runs that stop before building: nothing of it is ever compiled."""
    return new_checkout(tmp_path_factory.mktemp("ccache-remote-options") / "checkout")


@needs_ccache
@pytest.mark.parametrize("url", ["https://cache.example/ccache", "ftp://cache.example/", "cache.example:6379",
                                 "redis://cache.example file:/nfs/ccache sftp://cache.example"])
def test_an_unsupported_url_stops_with_status_2(spare_checkout, url):
    build = scons(spare_checkout, "--ccache=on", f"--ccache-remote={url}")
    assert build.result.returncode == 2, build.output
    assert "scons: *** --ccache-remote: " in build.result.stderr
    assert "is not a ccache remote storage URL (ccache 4.7 takes redis://, redis+unix:, http://, file:; no https)" \
        in build.result.stderr
    assert len(build.result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in build.output


def test_the_remote_needs_ccache(spare_checkout):
    build = scons(spare_checkout, "--ccache=off", "--ccache-remote=redis://127.0.0.1:6379")
    assert build.result.returncode == 2, build.output
    assert build.result.stderr.strip() == "scons: *** --ccache-remote needs ccache, but --ccache=off"


@needs_ccache
def test_passwords_and_tokens_are_not_printed(spare_checkout):
    url = "redis://opgen:s3cret@127.0.0.1:6379/2|connect-timeout=50 http://127.0.0.1:8080/c|bearer-token=t0ken"
    build = ok(scons(spare_checkout, "-n", "--ccache=on", f"--ccache-remote={url}"))
    assert ("[opgen] ccache remote storage: redis://***@127.0.0.1:6379/2|connect-timeout=50 "
            "http://127.0.0.1:8080/c|bearer-token=***\n") in build.result.stdout
    assert "s3cret" not in build.output and "t0ken" not in build.output


@needs_ccache
def test_an_exported_remote_is_used_and_announced(spare_checkout):
    exported = {"CCACHE_REMOTE_STORAGE": "redis://127.0.0.1:6379"}
    build = ok(build_with(spare_checkout, exported, "-n", "--ccache=on"))
    announced = "[opgen] ccache remote storage: redis://127.0.0.1:6379 (from $CCACHE_REMOTE_STORAGE)\n"
    assert announced in build.result.stdout


# A tiny project with the project's ccache tool: enough to exercise one backend end to end.
TINY_SCONSTRUCT = """\
import os, sys
sys.path.insert(0, {root!r})  # the toolset's tools import opgen.scons.toolset
env = Environment(tools=["default", "ccache"], toolpath=[{tools!r}], ENV={{"PATH": os.environ["PATH"]}},
                  CCACHE_MODE="on", CCACHE_REMOTE=ARGUMENTS.get("remote", ""), CCFLAGS=["-O1"])
env.Program("build/hello", ["src/main.cpp", "src/util.c"])
"""
TINY_SOURCES = {"src/util.c": "int util(void) { return 0; }\n",
                "src/main.cpp": 'extern "C" int util(void);\nint main() { return util(); }\n'}


def tiny_build(root, ccache_dir, remote):
    root.mkdir(parents=True)
    tools = os.path.join(REPO_ROOT, "opgen", "scons", "toolset")
    (root / "SConstruct").write_text(TINY_SCONSTRUCT.format(tools=tools, root=REPO_ROOT))
    for name, text in TINY_SOURCES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    result = run_scons(root, f"remote={remote}", drop=(), ccache_dir=ccache_dir, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return ccache_stats(ccache_dir)


@needs_ccache
def test_an_http_remote_serves_a_second_checkout(tmp_path):
    store = HttpStore()
    try:
        first = tiny_build(tmp_path / "a", tmp_path / "ccache-a", store.url())
        assert first["cache_miss"] == 2 and first["remote_storage_write"] == 4  # manifest + result each
        stored = len(store.objects)
        second = tiny_build(tmp_path / "elsewhere" / "b", tmp_path / "ccache-b", store.url())
    finally:
        store.close()
    assert stored == 4
    assert (second["remote_storage_hit"], second["cache_miss"], second["local_storage_hit"]) == (2, 0, 0)
    assert (tmp_path / "a" / "build" / "hello").read_bytes() == (tmp_path / "elsewhere" / "b" / "build" / "hello").read_bytes()
