"""The codegen cache's Redis tier, against a real redis-server on loopback: a second checkout with
an empty local cache gets every group from it; wrong remote bytes are refused; a read-only
consumer never writes; a server killed mid-build or one that never answers leaves a correct build
with one warning; bad settings exit 2."""
import json
import os
import re
import subprocess
import sys

import pytest

from opgen.cache.entry import decode
from helpers import REPO_ROOT, copy_project, snapshot
from scons_helpers import GEN, GROUPS, ok, scons
from servers import KillAfterProxy, SilentServer, redis_url, start_redis

redis = pytest.importorskip("redis")

YAML = os.path.join(REPO_ROOT, "yaml", "native_functions.yaml")
REAL_YAML = os.path.normpath(os.path.join(REPO_ROOT, "..", "shared", "data", "pytorch-2.13", "native_functions.yaml"))
PREFIX = "opgen:codegen:1:"
CACHE_LINE = re.compile(r"codegen cache: (\d+) hits, (\d+) rendered(?: \(remote(?: read-only)?: (\d+) hits, "
                        r"(\d+) misses, (\d+) errors, (\d+) rejected\))?")
WARNING = "warning: remote codegen cache"


@pytest.fixture
def server(tmp_path):
    started = start_redis(str(tmp_path))
    yield started
    started.stop()


@pytest.fixture
def client(server):
    connection = redis.Redis.from_url(redis_url(server))
    yield connection
    connection.close()


def checkout(root):
    """A copy of the project at ``root`` (a new directory)."""
    root.mkdir(parents=True)
    return copy_project(root)


def figures(output):
    """(hits, rendered, remote hits, remote misses, remote errors, remote rejected)."""
    match = CACHE_LINE.search(output)
    assert match is not None, output[-3000:]
    return tuple(int(g) if g is not None else None for g in match.groups())


def generate(cache_dir, out, *args, yaml=YAML, env_extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPGEN_")}
    env.update(OPGEN_CACHE_DIR=str(cache_dir), **(env_extra or {}))
    return subprocess.run([sys.executable, "-m", "opgen", "generate", yaml, "--out", str(out), *map(str, args)],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)


def tree(root):
    return {path: data for path, (data, _) in snapshot(root).items() if not path.startswith(".")}


def entry_key(client, group):
    """The redis key holding ``group``'s entry."""
    for key in client.scan_iter(match=PREFIX + "*"):
        if f'"group": "{group}"'.encode() in client.get(key):
            return key
    raise AssertionError(f"no remote entry of {group}")


def test_a_second_checkout_gets_every_group_from_the_remote_tier(tmp_path, server, client):
    url = redis_url(server)
    first = checkout(tmp_path / "first")
    built = ok(scons(first, "--codegen-only", f"--opgen-cache={tmp_path / 'cache-1'}", f"--opgen-cache-remote={url}",
                     target=None))
    assert figures(built.output) == (0, GROUPS, 0, GROUPS, 0, 0)
    assert client.dbsize() == GROUPS

    second = checkout(tmp_path / "elsewhere" / "second")  # another path, an empty local cache
    fetched = ok(scons(second, "--codegen-only", f"--opgen-cache={tmp_path / 'cache-2'}",
                       f"--opgen-cache-remote={url}", target=None))
    assert figures(fetched.output) == (GROUPS, 0, GROUPS, 0, 0, 0)
    assert tree(second / GEN) == tree(first / GEN)

    stats = json.loads(subprocess.run([sys.executable, "-m", "opgen", "cache", "--cache-dir", str(tmp_path / "cache-2"),
                                       "stats", "--json"], cwd=REPO_ROOT, capture_output=True, text=True).stdout)
    assert stats["remote"] == {"hits": GROUPS, "misses": 0, "errors": 0, "rejected": 0}
    assert stats["entries"] == GROUPS  # fetched entries are kept locally too
    assert (stats["last_build"]["remote_hits"], stats["last_build"]["hits"]) == (GROUPS, 0)
    text = subprocess.run([sys.executable, "-m", "opgen", "cache", "--cache-dir", str(tmp_path / "cache-2"), "stats"],
                          cwd=REPO_ROOT, capture_output=True, text=True).stdout
    assert f"remote           {GROUPS} hits, 0 misses, 0 errors, 0 rejected" in text


def test_remote_entries_with_wrong_bytes_are_refused_and_replaced(tmp_path, server, client):
    url = redis_url(server)
    assert generate(tmp_path / "cache-1", tmp_path / "a", "--cache-remote", url).returncode == 0
    flipped, foreign = entry_key(client, "add"), entry_key(client, "mul")
    good = client.get(flipped)
    client.set(flipped, good.replace(b"Tensor", b"Tensir", 1))           # fails its digest
    client.set(foreign, client.get(entry_key(client, "sub")))            # a whole entry of another group
    result = generate(tmp_path / "cache-2", tmp_path / "b", "--cache-remote", url)
    assert result.returncode == 0, result.stderr
    assert figures(result.stdout) == (GROUPS - 2, 2, GROUPS - 2, 0, 0, 2)
    assert tree(tmp_path / "b") == tree(tmp_path / "a")
    # The rendered entries were written through over the bad ones (their render times differ).
    assert decode(client.get(flipped)).files == decode(good).files
    assert decode(client.get(foreign)).group == "mul"


def test_a_read_only_consumer_fetches_but_never_stores(tmp_path, server, client):
    url = redis_url(server)
    result = generate(tmp_path / "cache-1", tmp_path / "a", "--cache-remote", url, "--cache-remote-read-only")
    assert result.returncode == 0, result.stderr
    assert figures(result.stdout) == (0, GROUPS, 0, GROUPS, 0, 0)
    assert client.dbsize() == 0
    assert generate(tmp_path / "cache-2", tmp_path / "b", "--cache-remote", url).returncode == 0
    assert client.dbsize() == GROUPS
    consumer = generate(tmp_path / "cache-3", tmp_path / "c", env_extra={"OPGEN_CACHE_REMOTE": url,
                                                                         "OPGEN_CACHE_REMOTE_READ_ONLY": "1"})
    assert figures(consumer.stdout) == (GROUPS, 0, GROUPS, 0, 0, 0)
    assert "remote read-only" in consumer.stdout


def test_killing_redis_mid_build_leaves_a_correct_build(tmp_path, server):
    yaml = REAL_YAML if os.path.exists(REAL_YAML) else YAML
    reference = generate(tmp_path / "cache-ref", tmp_path / "reference", "--cache-remote", redis_url(server), yaml=yaml)
    assert reference.returncode == 0, reference.stderr
    groups = figures(reference.stdout)[1]
    proxy = KillAfterProxy(server, after=groups // 2)
    try:
        result = generate(tmp_path / "cache-2", tmp_path / "out", "--cache-remote", proxy.url(), yaml=yaml)
    finally:
        proxy.close()
    assert proxy.killed.is_set()
    assert result.returncode == 0, result.stderr
    hits, rendered, remote_hits, remote_misses, errors, rejected = figures(result.stdout)
    assert 0 < remote_hits < groups and errors == 1 and rejected == 0 and remote_misses == 0
    assert hits + rendered == groups and rendered == groups - remote_hits
    assert result.stderr.count(WARNING) == 1
    assert tree(tmp_path / "out") == tree(tmp_path / "reference")


def test_a_server_that_never_answers_costs_one_timeout_and_one_warning(tmp_path):
    silent = SilentServer()
    try:
        result = generate(tmp_path / "cache", tmp_path / "out", "--cache-remote", silent.url(),
                          env_extra={"OPGEN_CACHE_REMOTE_TIMEOUT": "0.3"})
    finally:
        silent.close()
    assert result.returncode == 0, result.stderr
    assert figures(result.stdout) == (0, GROUPS, 0, 0, 1, 0)
    assert result.stderr.count(WARNING) == 1 and "Timeout" in result.stderr


@pytest.mark.parametrize("args, env_extra, where", [
    (["--cache-remote", "http://127.0.0.1:1"], {}, "--cache-remote"),
    ([], {"OPGEN_CACHE_REMOTE": "memcached://x"}, "OPGEN_CACHE_REMOTE"),
    (["--cache-remote", "redis://127.0.0.1:1"], {"OPGEN_CACHE_REMOTE_TIMEOUT": "soon"}, "OPGEN_CACHE_REMOTE_TIMEOUT"),
])
def test_bad_remote_settings_exit_2(tmp_path, args, env_extra, where):
    result = generate(tmp_path / "cache", tmp_path / "out", *args, env_extra=env_extra)
    assert result.returncode == 2 and where in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_scons_stops_on_a_bad_remote_url(tmp_path):
    project = checkout(tmp_path / "project")
    build = scons(project, "--codegen-only", "--opgen-cache-remote=ftp://example", target=None)
    assert build.result.returncode == 2, build.output[-2000:]
    assert "--opgen-cache-remote" in build.output and "Traceback" not in build.output
    assert not (project / GEN).exists()
