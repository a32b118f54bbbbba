"""The parse cache: a repeat load is a pickle load; damaged entries are misses; any input edit changes the key."""
import glob
import os
import pickle
import shutil
import subprocess
import sys

import pytest

from opgen.errors import OpgenError
from opgen.cache import parse_cache
from opgen.cache.parse_cache import load_model_cached
from opgen.model import Model, load_model

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def entries(cache_dir):
    return sorted(glob.glob(os.path.join(cache_dir, "models", "*", "*.pickle")))


def names(model):
    return [str(f.func.name) for f in model.functions]


def forbid_parsing(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("parsed although the cache should have answered")
    for step in ("parse_entries", "assemble_model"):
        monkeypatch.setattr(parse_cache, step, fail)


def test_second_load_is_served_from_the_cache(inputs, cache_dir, monkeypatch):
    first = load_model_cached(*inputs, cache_dir=cache_dir)
    (entry,) = entries(cache_dir)
    assert os.path.basename(os.path.dirname(entry)) == os.path.basename(entry)[:2]
    forbid_parsing(monkeypatch)
    second = load_model_cached(*inputs, cache_dir=cache_dir)
    assert isinstance(second, Model)
    assert names(second) == names(first)
    assert second.functions == first.functions
    assert [g.name for g in second.operator_groups] == [g.name for g in first.operator_groups]
    assert {str(k): dict(v.index) for k, v in second.indices.items()} == {str(k): dict(v.index) for k, v in first.indices.items()}


def test_cached_model_equals_an_uncached_parse(inputs, cache_dir):
    load_model_cached(*inputs, cache_dir=cache_dir)
    cached = load_model_cached(*inputs, cache_dir=cache_dir)
    fresh = load_model(*inputs)
    assert cached.functions == fresh.functions
    assert cached.source == fresh.source


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty", "not-a-model"])
def test_damaged_entry_is_a_miss_and_is_replaced(inputs, cache_dir, damage):
    first = load_model_cached(*inputs, cache_dir=cache_dir)
    (entry,) = entries(cache_dir)
    with open(entry, "rb") as handle:
        good = handle.read()
    damaged = {"truncate": good[: len(good) // 2], "garbage": b"\x00not a pickle\xff" * 10, "empty": b"",
               "not-a-model": pickle.dumps({"functions": []})}[damage]
    with open(entry, "wb") as handle:
        handle.write(damaged)
    again = load_model_cached(*inputs, cache_dir=cache_dir)
    assert names(again) == names(first)
    assert entries(cache_dir) == [entry]
    with open(entry, "rb") as handle:
        assert isinstance(pickle.load(handle), Model)  # rewritten whole


@pytest.mark.parametrize("edit", ["yaml", "tags"])
def test_editing_an_input_changes_the_key(inputs, cache_dir, edit):
    load_model_cached(*inputs, cache_dir=cache_dir)
    (old,) = entries(cache_dir)
    path = inputs[0] if edit == "yaml" else inputs[1]
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("\n- func: fresh_op(Tensor self) -> Tensor\n" if edit == "yaml" else "- tag: fresh_op\n")
    model = load_model_cached(*inputs, cache_dir=cache_dir)
    assert len(entries(cache_dir)) == 2 and old in entries(cache_dir)
    assert ("fresh_op" in names(model)) == (edit == "yaml")


def test_display_name_is_part_of_the_key(inputs, cache_dir):
    a = load_model_cached(*inputs, cache_dir=cache_dir, display_name="a/native_functions.yaml")
    b = load_model_cached(*inputs, cache_dir=cache_dir, display_name="b/native_functions.yaml")
    assert (a.source, b.source) == ("a/native_functions.yaml", "b/native_functions.yaml")
    assert len(entries(cache_dir)) == 2


def test_empty_cache_dir_disables_the_cache(inputs, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPGEN_CACHE_DIR", str(tmp_path / "env-cache"))
    load_model_cached(*inputs, cache_dir="")
    assert glob.glob(str(tmp_path / "**" / "*.pickle"), recursive=True) == []


def test_cache_dir_defaults_to_the_environment(inputs, tmp_path, monkeypatch):
    monkeypatch.setenv("OPGEN_CACHE_DIR", str(tmp_path / "env-cache"))
    load_model_cached(*inputs)
    assert len(entries(str(tmp_path / "env-cache"))) == 1


def test_invalid_input_is_not_cached(inputs, cache_dir):
    with open(inputs[0], "a", encoding="utf-8") as handle:
        handle.write("\n- func: broken(Tensor self) -> Tensor\n  variants: nope\n")
    for _ in range(2):
        with pytest.raises(OpgenError, match="unknown variant 'nope'"):
            load_model_cached(*inputs, cache_dir=cache_dir)
    assert entries(cache_dir) == []


def test_unwritable_cache_only_costs_speed(inputs, tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache directory should be")
    model = load_model_cached(*inputs, cache_dir=str(blocker))
    assert names(model) == names(load_model(*inputs))


def test_cli_uses_the_cache_unless_told_not_to(inputs, tmp_path):
    env = dict(os.environ, OPGEN_CACHE_DIR=str(tmp_path / "cli-cache"))
    run = lambda *extra: subprocess.run([sys.executable, "-m", "opgen", "model", inputs[0], *extra],  # noqa: E731
                                        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=60)
    no_cache = run("--no-cache")
    assert no_cache.returncode == 0 and entries(str(tmp_path / "cli-cache")) == []
    cold, warm = run(), run()
    assert cold.returncode == warm.returncode == 0
    assert cold.stdout == warm.stdout == no_cache.stdout
    assert len(entries(str(tmp_path / "cli-cache"))) == 1


def test_unreadable_input_is_an_input_error(inputs, cache_dir, tmp_path):
    missing = str(tmp_path / "missing-tags.yaml")
    with pytest.raises(OpgenError) as info:
        load_model_cached(inputs[0], missing, cache_dir=cache_dir)
    assert str(info.value) == f"{missing}: error: cannot read: No such file or directory"


def test_non_utf8_yaml_is_an_input_error(inputs, cache_dir):
    with open(inputs[0], "rb") as handle:
        line = handle.read().count(b"\n") + 1
    with open(inputs[0], "ab") as handle:
        handle.write(b"# caf\xe9\n")
    with pytest.raises(OpgenError) as info:
        load_model_cached(*inputs, cache_dir=cache_dir)
    assert str(info.value).startswith(f"{inputs[0]}:{line}: error: not UTF-8 text: byte 0xe9")
    assert entries(cache_dir) == []


def _edit(yaml_path, n):
    with open(yaml_path, "a", encoding="utf-8") as handle:
        handle.write(f"\n- func: prune_probe_{n}(Tensor self) -> Tensor\n  variants: function\n")


def test_prune_keeps_each_yamls_latest_model_and_removes_the_superseded(inputs, cache_dir):
    yaml_path = inputs[0]
    for n in range(3):  # three versions of one yaml: two superseded models
        _edit(yaml_path, n)
        load_model_cached(*inputs, cache_dir=cache_dir)
    assert len(entries(cache_dir)) == 3
    latest = entries(cache_dir)
    report = parse_cache.prune_models(cache_dir)
    assert report["models_removed"] == 2 and report["models"] == 1 and report["model_bytes_freed"] > 0
    (kept,) = entries(cache_dir)
    assert kept in latest
    # The kept model still answers, and the next edit still reuses its entries.
    assert "prune_probe_2" in names(load_model_cached(*inputs, cache_dir=cache_dir))


def test_prune_by_age_spares_recently_used_models(inputs, cache_dir):
    yaml_path = inputs[0]
    original = open(yaml_path, encoding="utf-8").read()
    load_model_cached(*inputs, cache_dir=cache_dir)
    _edit(yaml_path, 0)
    load_model_cached(*inputs, cache_dir=cache_dir)
    old = [path for path in entries(cache_dir)]
    for path in old:  # both a day old
        os.utime(path, (os.stat(path).st_atime, os.stat(path).st_mtime - 86400))
    with open(yaml_path, "w", encoding="utf-8") as handle:
        handle.write(original)
    load_model_cached(*inputs, cache_dir=cache_dir)  # a revert: a hit, which refreshes that model
    assert parse_cache.prune_models(cache_dir, older_than_seconds=3600)["models_removed"] == 1
    assert len(entries(cache_dir)) == 1  # the reverted-to model, now the latest and recently used
    assert parse_cache.prune_models(cache_dir, older_than_seconds=3600)["models_removed"] == 0


def test_prune_of_a_missing_cache_removes_nothing(tmp_path):
    assert parse_cache.prune_models(str(tmp_path / "nowhere")) == {"models_removed": 0, "model_bytes_freed": 0, "models": 0}
