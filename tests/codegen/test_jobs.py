"""gen/engine/jobs.py and gen/sections.py: each group's job carries the key of its inputs; keys
are remembered in the codegen cache under each group's identity (the text of its yaml entries,
the dispatch keys, opgen's sources) and read back instead of recomputed, so an edit keys only
the groups it changed."""
import os

import pytest

from generate_helpers import REPO_TAGS, REPO_YAML
from opgen.cache import CodegenCache
from opgen.gen import CodegenConfig
from opgen.gen.engine import jobs as jobs_module
from opgen.cache.inputs import group_inputs, inputs_key
from opgen.gen.engine.jobs import JobId
from opgen.gen.sections import backend_jobs, in_tree_jobs
from opgen.gen.engine.plan import Report
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


def count_inputs(monkeypatch):
    """The groups whose inputs in_tree_jobs computes from now on."""
    counted = []
    real = jobs_module.group_inputs

    def counting(group, *args):
        counted.append(group.name)
        return real(group, *args)
    monkeypatch.setattr(jobs_module, "group_inputs", counting)
    return counted


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
    computed = count_inputs(monkeypatch)
    again = in_tree_jobs(model, config, cache)
    assert computed == []
    assert {job.name: job.key for job in again} == first == computed_keys(model, config)


def test_another_config_gets_its_own_memo(model, cache):
    in_tree_jobs(model, CodegenConfig(), cache)
    with_cuda = CodegenConfig(CodegenConfig().keys + (DispatchKey.CUDA,))
    keys = {job.name: job.key for job in in_tree_jobs(model, with_cuda, cache)}
    assert len(memo_files(cache)) == 2
    assert keys == computed_keys(model, with_cuda) != computed_keys(model, CodegenConfig())


EDITS = {
    "default value": ("Scalar alpha=1) -> Tensor\n", "Scalar alpha=2) -> Tensor\n", ["add"]),
    # relu.out is derived from relu_'s entry (autogen): its group is still the only one keyed again
    "kernel of an autogen source renamed": ("CompositeExplicitAutograd: relu_\n  autogen: relu.out",
                                            "CompositeExplicitAutograd: relu_renamed_\n  autogen: relu.out", ["relu"]),
    "entry added": ("- func: add.Tensor(", "- func: square(Tensor self) -> Tensor\n  variants: function, method\n\n"
                    "- func: add.Tensor(", ["square"]),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_edit_keys_only_the_groups_it_changed(tmp_path, cache, yaml_copy, monkeypatch, edit):
    old, new, changed = EDITS[edit]
    parse_dir = str(tmp_path / "parse")
    tags = str(yaml_copy.parent / "tags.yaml")
    before = {job.name: job.key for job in in_tree_jobs(load_model_cached(str(yaml_copy), tags, cache_dir=parse_dir), CodegenConfig(), cache)}
    text = yaml_copy.read_text()
    assert old in text
    yaml_copy.write_text(text.replace(old, new, 1))
    edited = load_model_cached(str(yaml_copy), tags, cache_dir=parse_dir)
    computed = count_inputs(monkeypatch)
    keys = {job.name: job.key for job in in_tree_jobs(edited, CodegenConfig(), cache)}
    assert sorted(computed) == changed
    assert keys == computed_keys(edited, CodegenConfig())
    assert sorted(name for name in keys if keys[name] != before.get(name)) == changed
    assert len(memo_files(cache)) == 1


def test_a_source_change_keys_every_group_again(model, cache, monkeypatch):
    in_tree_jobs(model, CodegenConfig(), cache)
    monkeypatch.setattr(jobs_module, "codegen_sources", lambda: (("template x.j2", "changed"),))
    computed = count_inputs(monkeypatch)
    in_tree_jobs(model, CodegenConfig(), cache)
    assert sorted(computed) == sorted(g.name for g in model.operator_groups)


@pytest.mark.parametrize("damage", [b"", b"garbage\n{}", b"0" * 32 + b"\n{\"add\": \"x\"}"])
def test_a_damaged_memo_is_recomputed(model, cache, damage):
    first = {job.name: job.key for job in in_tree_jobs(model, CodegenConfig(), cache)}
    (name,) = memo_files(cache)
    with open(os.path.join(cache.root, "keys", name), "wb") as handle:
        handle.write(damage)
    keys = {job.name: job.key for job in in_tree_jobs(model, CodegenConfig(), cache)}
    assert keys == first == computed_keys(model, CodegenConfig())
    assert {group: pair[1] for group, pair in cache.remembered_keys(name[:-len(".json")]).items()} == keys  # rewritten whole


def test_a_model_parsed_without_the_cache_is_not_remembered(cache):
    from opgen.model import load_model

    unremembered = load_model(REPO_YAML, REPO_TAGS)
    assert unremembered.entry_digests == {}
    in_tree_jobs(unremembered, CodegenConfig(), cache)
    assert memo_files(cache) == []


def test_backend_jobs_are_named_after_the_backend_key(model):
    backend = parse_backend_yaml(REPO_BACKEND_YAML, model)
    jobs = backend_jobs(model, backend)
    assert jobs and all(job.name.endswith("@XLA") for job in jobs)
    assert all(job.id == JobId(job.codegen.name, DispatchKey.XLA) and job.name == f"{job.id.group}@XLA" for job in jobs)
    assert all(inputs_key(job.inputs()) == job.key for job in jobs)


def test_job_ids_print_as_the_text_state_files_keep():
    assert str(JobId("add")) == "add" and str(JobId("add", DispatchKey.XLA)) == "add@XLA"


def test_a_backend_report_names_its_jobs_by_group():
    jobs = [JobId("mul", DispatchKey.XLA), JobId("a1", DispatchKey.XLA), JobId("a", DispatchKey.XLA)]
    backend = Report("XLA backend groups", 3, DispatchKey.XLA, regenerated=list(jobs))
    assert backend.summary().splitlines()[0] == "[opgen] regenerated 3/3 XLA backend groups: a1, a, mul"
    mixed = Report("groups", 4, None, regenerated=[JobId("mul"), *jobs])
    assert mixed.summary().splitlines()[0] == "[opgen] regenerated 4/4 groups: a1@XLA, a@XLA, mul, mul@XLA"


def test_a_report_of_groups_all_from_the_cache_says_materialized_not_regenerated():
    jobs = [JobId("add"), JobId("mul")]
    cached = Report("groups", 90, None, regenerated=list(jobs), cache_hits=2, cache_misses=0)
    assert cached.summary().splitlines()[0] == "[opgen] materialized from the cache 2/90 groups: add, mul"
    mixed = Report("groups", 90, None, regenerated=list(jobs), cache_hits=1, cache_misses=1)
    assert mixed.summary().splitlines()[0] == "[opgen] regenerated 2/90 groups: add, mul"
    uncached = Report("groups", 90, None, regenerated=list(jobs))  # no cache: rendered
    assert uncached.summary().splitlines()[0] == "[opgen] regenerated 2/90 groups: add, mul"
