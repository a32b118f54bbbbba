"""gen/jobs.py: each group's job carries the key of its inputs; a model's keys are remembered in the
codegen cache and read back instead of recomputed, and inputs are computed only on demand."""
import os

import pytest

from generate_helpers import REPO_TAGS, REPO_YAML
from opgen.cache import CodegenCache
from opgen.gen import CodegenConfig
from opgen.gen import jobs as jobs_module
from opgen.cache.inputs import group_inputs, inputs_key
from opgen.gen.jobs import backend_jobs, in_tree_jobs
from opgen.cache.parse_cache import load_model_cached
from opgen.model.backend_yaml import parse_backend_yaml
from opgen.model.dispatch_keys import DispatchKey

REPO_BACKEND_YAML = os.path.join(os.path.dirname(REPO_YAML), "xla_native_functions.yaml")


@pytest.fixture
def model(tmp_path):
    return load_model_cached(REPO_YAML, REPO_TAGS, cache_dir=str(tmp_path / "parse"))


@pytest.fixture
def cache(tmp_path):
    with CodegenCache(str(tmp_path / "codegen")) as opened:
        yield opened


def computed_keys(model, config):
    return {g.name: inputs_key(group_inputs(g, model.indices, config)) for g in model.operator_groups}


def memo_files(cache):
    directory = os.path.join(cache.root, "keys")
    return sorted(os.listdir(directory)) if os.path.isdir(directory) else []


def forbid_inputs(monkeypatch):
    def fail(*args):
        raise AssertionError("inputs computed although the keys were remembered")
    monkeypatch.setattr(jobs_module, "inputs_key", fail)


def test_jobs_carry_the_key_of_their_inputs(model):
    config = CodegenConfig()
    jobs = in_tree_jobs(model, config)
    assert [job.name for job in jobs] == [g.name for g in model.operator_groups]
    assert {job.name: job.key for job in jobs} == computed_keys(model, config)
    assert all(inputs_key(job.inputs()) == job.key for job in jobs)


def test_keys_are_remembered_and_read_back_without_computing_inputs(model, cache, monkeypatch):
    config = CodegenConfig()
    first = {job.name: job.key for job in in_tree_jobs(model, config, cache)}
    assert len(memo_files(cache)) == 1
    forbid_inputs(monkeypatch)
    again = in_tree_jobs(model, config, cache)
    assert {job.name: job.key for job in again} == first == computed_keys(model, config)


def test_another_config_gets_its_own_memo(model, cache):
    in_tree_jobs(model, CodegenConfig(), cache)
    with_cuda = CodegenConfig(CodegenConfig().keys + (DispatchKey.CUDA,))
    keys = {job.name: job.key for job in in_tree_jobs(model, with_cuda, cache)}
    assert len(memo_files(cache)) == 2
    assert keys == computed_keys(model, with_cuda) != computed_keys(model, CodegenConfig())


def test_an_edited_model_does_not_read_the_old_memo(tmp_path, model, cache, yaml_copy):
    in_tree_jobs(model, CodegenConfig(), cache)
    text = yaml_copy.read_text()
    old = "- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)"
    yaml_copy.write_text(text.replace(old, old.replace("alpha=1", "alpha=2")))
    edited = load_model_cached(str(yaml_copy), str(yaml_copy.parent / "tags.yaml"), cache_dir=str(tmp_path / "parse"))
    keys = {job.name: job.key for job in in_tree_jobs(edited, CodegenConfig(), cache)}
    assert keys == computed_keys(edited, CodegenConfig())
    assert keys["add"] != computed_keys(model, CodegenConfig())["add"]
    assert len(memo_files(cache)) == 2


@pytest.mark.parametrize("damage", [b"", b"garbage\n{}", b"0" * 32 + b"\n{\"add\": \"x\"}"])
def test_a_damaged_memo_is_recomputed(model, cache, damage):
    in_tree_jobs(model, CodegenConfig(), cache)
    (name,) = memo_files(cache)
    with open(os.path.join(cache.root, "keys", name), "wb") as handle:
        handle.write(damage)
    keys = {job.name: job.key for job in in_tree_jobs(model, CodegenConfig(), cache)}
    assert keys == computed_keys(model, CodegenConfig())
    assert cache.remembered_keys(name[:-len(".json")]) == keys  # rewritten whole


def test_a_model_without_fingerprint_is_not_remembered(cache):
    from opgen.model import load_model

    unfingerprinted = load_model(REPO_YAML, REPO_TAGS)
    assert unfingerprinted.fingerprint == ""
    in_tree_jobs(unfingerprinted, CodegenConfig(), cache)
    assert memo_files(cache) == []


def test_backend_jobs_are_named_after_the_backend_key(model):
    backend = parse_backend_yaml(REPO_BACKEND_YAML, model)
    jobs = backend_jobs(model, backend)
    assert jobs and all(job.name.endswith("@XLA") for job in jobs)
    assert all(inputs_key(job.inputs()) == job.key for job in jobs)
