"""The autograd cache: the derivatives yaml read against a model, the autograd plan and each group's
autograd fingerprint come back from disk equal to a fresh read, keyed by the derivatives' bytes
and the model they were read against; errors and models from outside the parse cache are never
stored; `opgen cache gc` prunes what only a revert could use."""
import glob
import os

import pytest

from opgen.cache import autograd_cache
from opgen.cache.autograd_cache import load_autograd_cached, prune_autograd
from opgen.cache.parse_cache import load_model_cached, model_cache_key, prune_models
from opgen.errors import OpgenError
from opgen.gen.layers.autograd_kernels import AutogradModel
from opgen.model import load_model
from opgen.model.derivatives import load_derivatives
from yaml_copies import cache_dir, inputs  # noqa: F401  (fixtures)




def stored(cache_dir):
    return sorted(glob.glob(os.path.join(cache_dir, "autograd", "*", "*.pickle")))


def same(cached: AutogradModel, fresh: AutogradModel) -> None:
    assert cached.decisions == fresh.decisions
    assert cached.derivatives == fresh.derivatives
    assert cached.infos == fresh.infos
    assert [cached.fingerprint(g) for g in cached.model.operator_groups] == \
        [fresh.fingerprint(g) for g in fresh.model.operator_groups]


def test_a_repeat_load_comes_from_the_cache_and_equals_a_fresh_read(inputs, cache_dir, monkeypatch):
    yaml, tags, derivatives = inputs
    model = load_model_cached(yaml, tags, cache_dir=cache_dir)
    first = load_autograd_cached(model, derivatives, AutogradModel, cache_dir=cache_dir, display_name="derivatives.yaml")
    (entry,) = stored(cache_dir)
    assert os.path.basename(os.path.dirname(entry)) == model_cache_key(model)

    def fail(*args, **kwargs):
        raise AssertionError("read the derivatives although the cache should have answered")
    monkeypatch.setattr(autograd_cache, "read_derivatives", fail)
    second = load_autograd_cached(model, derivatives, AutogradModel, cache_dir=cache_dir, display_name="derivatives.yaml")
    assert second is not first and isinstance(second, AutogradModel)
    # The model, its groups and functions are the run's own objects, not copies.
    assert second.model is model
    assert all(second._groups[g.name] is g for g in model.operator_groups)
    same(second, first)
    same(second, AutogradModel(model, load_derivatives(derivatives, model, display_name="derivatives.yaml")))
    # Another process's model (loaded again from the parse cache) gets the same entry.
    again = load_model_cached(yaml, tags, cache_dir=cache_dir)
    assert load_autograd_cached(again, derivatives, AutogradModel, cache_dir=cache_dir,
                                display_name="derivatives.yaml").model is again


def test_an_edit_of_either_yaml_is_a_miss(inputs, cache_dir):
    yaml, tags, derivatives = inputs
    model = load_model_cached(yaml, tags, cache_dir=cache_dir)
    before = load_autograd_cached(model, derivatives, AutogradModel, cache_dir=cache_dir)
    with open(derivatives, encoding="utf-8") as handle:
        text = handle.read()
    assert "self: grad * other" in text
    with open(derivatives, "w", encoding="utf-8") as handle:
        handle.write(text.replace("self: grad * other", "self: grad * other * 2", 1))
    edited = load_autograd_cached(model, derivatives, AutogradModel, cache_dir=cache_dir)
    assert len(stored(cache_dir)) == 2
    same(edited, AutogradModel(model, load_derivatives(derivatives, model)))
    assert [edited.fingerprint(g) for g in model.operator_groups] != [before.fingerprint(g) for g in model.operator_groups]

    with open(yaml, "a", encoding="utf-8") as handle:
        handle.write("\n- func: opgen_cache_probe(Tensor self) -> Tensor\n  variants: function\n")
    other = load_model_cached(yaml, tags, cache_dir=cache_dir)
    assert model_cache_key(other) != model_cache_key(model)
    probed = load_autograd_cached(other, derivatives, AutogradModel, cache_dir=cache_dir)
    assert probed.model is other and "opgen_cache_probe" in probed.decisions
    assert len(stored(cache_dir)) == 3


def test_a_model_from_outside_the_parse_cache_is_never_stored(inputs, cache_dir):
    yaml, tags, derivatives = inputs
    model = load_model(yaml, tags)
    assert model_cache_key(model) is None
    load_autograd_cached(model, derivatives, AutogradModel, cache_dir=cache_dir)
    cached_model = load_model_cached(yaml, tags, cache_dir="")
    assert model_cache_key(cached_model) is None  # the cache is off: nothing to key by
    load_autograd_cached(cached_model, derivatives, AutogradModel, cache_dir="")
    assert stored(cache_dir) == []


def test_errors_are_reported_every_time_and_never_stored(inputs, cache_dir):
    yaml, tags, derivatives = inputs
    model = load_model_cached(yaml, tags, cache_dir=cache_dir)
    with open(derivatives, "a", encoding="utf-8") as handle:
        handle.write("\n- name: no_such_operator(Tensor self) -> Tensor\n  self: grad\n")
    for _ in range(2):
        with pytest.raises(OpgenError, match="no_such_operator"):
            load_autograd_cached(model, derivatives, AutogradModel, cache_dir=cache_dir)
    assert stored(cache_dir) == []


@pytest.mark.parametrize("damage", [b"", b"garbage", None])
def test_a_damaged_entry_is_a_miss_and_is_replaced(inputs, cache_dir, damage):
    yaml, tags, derivatives = inputs
    model = load_model_cached(yaml, tags, cache_dir=cache_dir)
    first = load_autograd_cached(model, derivatives, AutogradModel, cache_dir=cache_dir)
    (entry,) = stored(cache_dir)
    with open(entry, "rb") as handle:
        good = handle.read()
    with open(entry, "wb") as handle:
        handle.write(good[: len(good) // 2] if damage is None else damage)
    same(load_autograd_cached(model, derivatives, AutogradModel, cache_dir=cache_dir), first)
    with open(entry, "rb") as handle:
        assert handle.read() == good


def test_gc_prunes_entries_only_a_revert_could_use(inputs, cache_dir):
    yaml, tags, derivatives = inputs
    model = load_model_cached(yaml, tags, cache_dir=cache_dir)
    load_autograd_cached(model, derivatives, AutogradModel, cache_dir=cache_dir)
    with open(derivatives, "a", encoding="utf-8") as handle:
        handle.write("\n# an edit\n")
    load_autograd_cached(model, derivatives, AutogradModel, cache_dir=cache_dir)
    assert len(stored(cache_dir)) == 2
    assert prune_autograd(cache_dir, older_than_seconds=3600)["autograd_removed"] == 0  # both in use lately
    report = prune_autograd(cache_dir)
    assert report["autograd_removed"] == 1 and report["autograd"] == 1
    (kept,) = stored(cache_dir)
    # The kept entry is the last one used: the current yaml loads without reading it.
    assert load_autograd_cached(model, derivatives, AutogradModel, cache_dir=cache_dir)
    assert stored(cache_dir) == [kept]
    # A model that is no longer the latest of its yaml takes its entries with it.
    with open(yaml, "a", encoding="utf-8") as handle:
        handle.write("\n# an edit\n")
    newer = load_model_cached(yaml, tags, cache_dir=cache_dir)
    load_autograd_cached(newer, derivatives, AutogradModel, cache_dir=cache_dir)
    prune_models(cache_dir)
    assert prune_autograd(cache_dir)["autograd_removed"] == 1
    assert [os.path.basename(os.path.dirname(p)) for p in stored(cache_dir)] == [model_cache_key(newer)]
    assert prune_autograd(str(os.path.join(cache_dir, "nowhere"))) == {
        "autograd_removed": 0, "autograd_bytes_freed": 0, "autograd": 0}
