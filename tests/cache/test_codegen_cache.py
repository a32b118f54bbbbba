"""The codegen cache end to end, through ``python -m opgen generate`` and ``python -m opgen cache``:
hits from a second output directory, corruption found by verify and healed by the next build,
SIGKILL mid-build, two builds at once, explain, gc."""
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
YAML = os.path.join(REPO_ROOT, "yaml", "native_functions.yaml")
TAGS = os.path.join(REPO_ROOT, "yaml", "tags.yaml")
REAL_YAML = os.path.normpath(os.path.join(REPO_ROOT, "..", "shared", "data", "pytorch-2.13", "native_functions.yaml"))


def opgen(cache_dir, *args, check=True):
    env = dict(os.environ, OPGEN_CACHE_DIR=str(cache_dir), PYTHONHASHSEED="0")
    env.pop("OPGEN_DEBUG", None)
    result = subprocess.run([sys.executable, "-m", "opgen", *map(str, args)], cwd=REPO_ROOT, env=env,
                            capture_output=True, text=True, timeout=600)
    if check:
        assert result.returncode == 0, result.stdout + result.stderr
    return result


def cache_figures(stdout):
    """(hits, misses) from '... codegen cache: H hits, M misses'."""
    line = next(l for l in stdout.splitlines() if "codegen cache:" in l)
    parts = line.split("codegen cache: ")[1].replace(",", "").split()
    return int(parts[0]), int(parts[2])


def tree(root):
    found = {}
    for directory, _, files in os.walk(root):
        for name in files:
            if not name.startswith("."):
                path = os.path.join(directory, name)
                found[os.path.relpath(path, root)] = open(path, "rb").read()
    return found


def groups(stdout):
    match = re.search(r"\[opgen\] (?:regenerated|materialized from the cache) \d+/(\d+)", stdout)
    return int(match.group(1))


def entry_files(cache_dir):
    return sorted(os.path.join(d, n) for d, _, files in os.walk(cache_dir / "codegen" / "objects")
                  for n in files if n.endswith(".entry"))


def test_second_output_directory_hits_every_group(tmp_path):
    first = opgen(tmp_path / "cache", "generate", YAML, "--out", tmp_path / "a")
    total = groups(first.stdout)
    assert cache_figures(first.stdout) == (0, total)
    second = opgen(tmp_path / "cache", "generate", YAML, "--out", tmp_path / "b")
    assert cache_figures(second.stdout) == (total, 0)
    assert tree(tmp_path / "a") == tree(tmp_path / "b")
    stats = json.loads(opgen(tmp_path / "cache", "cache", "stats", "--json").stdout)
    assert stats["entries"] == total and stats["hits"] == total and stats["misses"] == total
    assert stats["last_build"]["hits"] == total


def test_no_cache_renders_everything(tmp_path):
    opgen(tmp_path / "cache", "generate", YAML, "--out", tmp_path / "a")
    result = opgen(tmp_path / "cache", "generate", YAML, "--out", tmp_path / "b", "--no-cache")
    assert "codegen cache: off" in result.stdout
    assert tree(tmp_path / "a") == tree(tmp_path / "b")


def test_corrupt_entry_is_reported_and_healed(tmp_path):
    cache = tmp_path / "cache"
    opgen(cache, "generate", YAML, "--out", tmp_path / "a")
    victim = entry_files(cache)[3]
    data = bytearray(open(victim, "rb").read())
    data[len(data) // 2] ^= 0xFF
    open(victim, "wb").write(bytes(data))
    verify = opgen(cache, "cache", "verify", check=False)
    assert verify.returncode == 1 and os.path.basename(victim)[:12] in verify.stdout
    rebuilt = opgen(cache, "generate", YAML, "--out", tmp_path / "b")
    total = groups(rebuilt.stdout)
    assert cache_figures(rebuilt.stdout) == (total - 1, 1)
    assert tree(tmp_path / "a") == tree(tmp_path / "b")
    assert opgen(cache, "cache", "verify").returncode == 0


@pytest.mark.skipif(not os.path.exists(REAL_YAML), reason="PyTorch 2.13 yaml not in ../shared/data")
def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="utf-8") as handle:
            return [int(child) for child in handle.read().split()]
    except OSError:
        return []


def test_sigkill_mid_build_leaves_no_corrupt_entry(tmp_path):
    cache = tmp_path / "cache"
    env = dict(os.environ, OPGEN_CACHE_DIR=str(cache))
    process = subprocess.Popen([sys.executable, "-m", "opgen", "generate", REAL_YAML, "--out", str(tmp_path / "a")],
                               cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while len(entry_files(cache) if (cache / "codegen" / "objects").exists() else []) < 50 and time.time() < deadline:
        time.sleep(0.05)
    workers = _children(process.pid)  # the render pool's (opgen/gen/engine/workers.py)
    assert workers or len(os.sched_getaffinity(0)) == 1
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL
    # They end with it (PR_SET_PDEATHSIG), not wait for a job forever.
    deadline = time.time() + 10
    while any(os.path.exists(f"/proc/{pid}") for pid in workers) and time.time() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in workers if os.path.exists(f"/proc/{pid}")]
    report = json.loads(opgen(cache, "cache", "verify", "--json", check=False).stdout)
    assert report["corrupt"] == [] and report["missing"] == []
    finished = opgen(cache, "generate", REAL_YAML, "--out", tmp_path / "a")
    hits, misses = cache_figures(finished.stdout)
    assert hits >= 50 and hits + misses == groups(finished.stdout)
    assert opgen(cache, "cache", "verify").returncode == 0


def test_two_builds_at_once_share_one_cache(tmp_path):
    cache = tmp_path / "cache"
    env = dict(os.environ, OPGEN_CACHE_DIR=str(cache))
    runs = [subprocess.Popen([sys.executable, "-m", "opgen", "generate", YAML, "--out", str(tmp_path / name)],
                             cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for name in ("a", "b")]
    outputs = [run.communicate(timeout=300) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    assert tree(tmp_path / "a") == tree(tmp_path / "b")
    assert opgen(cache, "cache", "verify").returncode == 0
    third = opgen(cache, "generate", YAML, "--out", tmp_path / "c")
    assert cache_figures(third.stdout)[1] == 0


def test_explain_names_the_changed_field(tmp_path):
    cache = tmp_path / "cache"
    yaml_dir = tmp_path / "yaml"
    yaml_dir.mkdir()
    shutil.copy(YAML, yaml_dir / "native_functions.yaml")
    shutil.copy(TAGS, yaml_dir / "tags.yaml")
    opgen(cache, "generate", yaml_dir / "native_functions.yaml", "--out", tmp_path / "a")
    first = opgen(cache, "cache", "explain", "add").stdout
    assert "first build of this group" in first
    text = (yaml_dir / "native_functions.yaml").read_text()
    old = "- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)"
    assert old in text
    (yaml_dir / "native_functions.yaml").write_text(text.replace(old, old.replace("alpha=1", "alpha=2")))
    opgen(cache, "generate", yaml_dir / "native_functions.yaml", "--out", tmp_path / "a")
    explained = opgen(cache, "cache", "explain", "add")
    assert "add.Tensor: default of alpha changed 1 -> 2" in explained.stdout
    data = json.loads(opgen(cache, "cache", "explain", "add", "--json").stdout)
    assert "add.Tensor: default of alpha changed 1 -> 2" in data["reasons"]
    assert data["previous_key"] != data["key"]
    unknown = opgen(cache, "cache", "explain", "no_such_group", check=False)
    assert unknown.returncode == 2 and "no_such_group" in unknown.stderr and "Traceback" not in unknown.stderr


def test_explain_compares_with_the_previous_build_of_the_same_output_directory(tmp_path):
    """a built at alpha=1, b at alpha=2, then a at alpha=2: a's inputs changed, though the last
    build before it (b's) had the same key; explaining from b's build would say 'files missing'."""
    cache = tmp_path / "cache"
    yaml_dir = tmp_path / "yaml"
    yaml_dir.mkdir()
    shutil.copy(TAGS, yaml_dir / "tags.yaml")
    text = open(YAML, encoding="utf-8").read()
    old = "- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)"
    assert old in text
    edited = yaml_dir / "native_functions.yaml"
    edited.write_text(text)
    opgen(cache, "generate", edited, "--out", tmp_path / "a")
    edited.write_text(text.replace(old, old.replace("alpha=1", "alpha=2")))
    opgen(cache, "generate", edited, "--out", tmp_path / "b")
    assert "first build of this group" in opgen(cache, "cache", "explain", "add").stdout  # b's first
    opgen(cache, "generate", edited, "--out", tmp_path / "a")
    for args in ((), ("--out", tmp_path / "a")):
        data = json.loads(opgen(cache, "cache", "explain", "add", "--json", *args).stdout)
        assert data["reasons"] == ["add.Tensor: default of alpha changed 1 -> 2"]
        assert data["out_dir"] == os.path.realpath(tmp_path / "a") and data["materialized"] is True
    b = json.loads(opgen(cache, "cache", "explain", "add", "--json", "--out", tmp_path / "b").stdout)
    assert b["reasons"] == ["first build of this group"] and b["out_dir"] == os.path.realpath(tmp_path / "b")
    never = opgen(cache, "cache", "explain", "add", "--out", tmp_path / "c", check=False)
    assert never.returncode == 2 and "into" in never.stderr


def test_explain_after_rm_rf_build_says_the_files_were_missing(tmp_path):
    cache = tmp_path / "cache"
    opgen(cache, "generate", YAML, "--out", tmp_path / "build")
    shutil.rmtree(tmp_path / "build")
    rebuilt = opgen(cache, "generate", YAML, "--out", tmp_path / "build")
    assert cache_figures(rebuilt.stdout) == (groups(rebuilt.stdout), 0)
    data = json.loads(opgen(cache, "cache", "explain", "add", "--json").stdout)
    assert data["materialized"] is True and data["previous_key"] == data["key"]
    assert len(data["reasons"]) == 1
    assert data["reasons"][0].startswith("inputs unchanged since build 1; its files were missing")
    text = opgen(cache, "cache", "explain", "add").stdout
    assert "regenerated in build 2" in text and "materialized from the cache" in text


def test_a_warm_build_records_one_build_and_no_new_inputs(tmp_path):
    cache = tmp_path / "cache"
    opgen(cache, "generate", YAML, "--out", tmp_path / "a")
    opgen(cache, "generate", YAML, "--out", tmp_path / "b")
    index = sqlite3.connect(str(cache / "codegen" / "index.sqlite"))
    try:
        inputs_by_build = dict(index.execute("SELECT build_id, COUNT(*) FROM inputs GROUP BY build_id"))
        builds = index.execute("SELECT id, hits, misses FROM builds ORDER BY id").fetchall()
    finally:
        index.close()
    total = builds[0][2]
    assert builds == [(1, 0, total), (2, total, 0)]
    assert inputs_by_build == {1: total}  # the second build's keys were all recorded already


def test_ls_show_and_gc(tmp_path):
    cache = tmp_path / "cache"
    opgen(cache, "generate", YAML, "--out", tmp_path / "a")
    listing = opgen(cache, "cache", "ls", "add*").stdout
    assert listing.splitlines()[0].startswith("add ") and "hits" in listing
    shown = json.loads(opgen(cache, "cache", "show", "add", "--json").stdout)
    assert "ops/add_CPU.cpp" in shown["files"] and shown["cached"]
    assert any(name.startswith("add.Tensor:") for name in shown["inputs"])
    before = json.loads(opgen(cache, "cache", "stats", "--json").stdout)
    result = json.loads(opgen(cache, "cache", "gc", "--max-size", "64K", "--json").stdout)
    after = json.loads(opgen(cache, "cache", "stats", "--json").stdout)
    assert result["evicted"] > 0 and after["bytes"] <= 64 * 1024
    assert after["entries"] == before["entries"] - result["evicted"]
    assert after["evictions"] == before["evictions"] + result["evicted"]
    # Parsed models go too: an edited yaml's superseded model, never the latest.
    with open(YAML, encoding="utf-8") as handle:
        edited = handle.read() + "\n- func: gc_probe(Tensor self) -> Tensor\n"
    edited_yaml = tmp_path / "edited" / "native_functions.yaml"
    edited_yaml.parent.mkdir()
    edited_yaml.write_text(edited)
    shutil.copy(os.path.join(os.path.dirname(YAML), "tags.yaml"), edited_yaml.parent / "tags.yaml")
    opgen(cache, "model", edited_yaml)
    edited_yaml.write_text(edited + "\n- func: gc_probe2(Tensor self) -> Tensor\n")
    opgen(cache, "model", edited_yaml)
    pruned = json.loads(opgen(cache, "cache", "gc", "--json").stdout)
    assert pruned["models_removed"] == 1 and pruned["models"] == 2  # each yaml's latest stays
    assert "superseded parsed models" in opgen(cache, "cache", "gc").stdout
    bad = opgen(cache, "cache", "gc", "--max-size", "lots", check=False)
    assert bad.returncode == 2 and "is not a size" in bad.stderr


def test_an_unusable_cache_warns_and_the_build_goes_on(tmp_path):
    not_a_directory = tmp_path / "cache"
    not_a_directory.write_text("a file where the cache directory should be")
    result = opgen(not_a_directory, "generate", YAML, "--out", tmp_path / "a")
    assert "warning: codegen cache off" in result.stderr and "Traceback" not in result.stderr
    assert "codegen cache: off" in result.stdout
    reference = opgen(tmp_path / "good-cache", "generate", YAML, "--out", tmp_path / "b")
    assert reference.returncode == 0 and tree(tmp_path / "a") == tree(tmp_path / "b")
