"""gen/registry.py: a generated layer added through the recipe of docs/architecture.md (its
module, its place in the registry, its test) shows in generate_tree's output and its content
field in each group's key, and leaves every other layer's bytes alone."""
import pytest

from generate_helpers import REPO_TAGS, REPO_YAML
from helpers import snapshot
from opgen.gen import CodegenConfig, generate_tree
from opgen.gen.engine.layer import Layer
from opgen.gen.engine.layout import OPS_DIR
from opgen.gen.group import GroupCodegen
from opgen.gen.registry import LAYERS
from opgen.gen.sections import in_tree_jobs
from opgen.model.loader import load_model


# ----- the toy layer: ops/<g>_toy.txt, the group's operator names -----

def toy_file(group: str) -> str:
    return f"{OPS_DIR}/{group}_toy.txt"


def toy_files(codegen) -> list[str]:
    return [toy_file(codegen.name)]


def toy_render(codegen) -> dict[str, str]:
    return {toy_file(codegen.name): "".join(f"{f.func.name}\n" for f in codegen.group.functions)}


def toy_fields(group, config) -> dict[str, str]:
    return {"toy": f"{len(group.functions)} functions"}


TOY = Layer("toy", toy_files, toy_render, content_fields=toy_fields)
WITH_TOY = LAYERS + (TOY,)


@pytest.fixture(scope="module")
def model():
    return load_model(REPO_YAML, REPO_TAGS)


@pytest.fixture(scope="module")
def trees(model, tmp_path_factory):
    """The tree generated with the registry, and with the registry and the toy layer."""
    plain, toy = tmp_path_factory.mktemp("plain"), tmp_path_factory.mktemp("toy")
    generate_tree(model, str(plain), cache_dir="")
    generate_tree(model, str(toy), cache_dir="", layers=WITH_TOY)
    return snapshot(str(plain)), snapshot(str(toy))


def test_the_registry_names_each_layer_once():
    names = [layer.name for layer in LAYERS]
    assert names == ["operators", "declarations", "methods", "kernels", "functionalize", "autograd"]
    assert len(set(names)) == len(names)


def test_the_toy_layer_writes_its_files(model, trees):
    plain, toy = trees
    added = sorted(set(toy) - set(plain))
    assert added == sorted(toy_file(g.name) for g in model.operator_groups)
    add = model.operator_groups[[g.name for g in model.operator_groups].index("add")]
    text = toy[toy_file("add")][0].decode()
    assert text.splitlines() == [str(f.func.name) for f in add.functions]


def test_other_layers_bytes_are_unchanged(trees):
    plain, toy = trees  # snapshot leaves out the state files, which record the keys
    assert plain  # the toy file is no .cpp: no unit includes it, so the units' bytes hold too
    assert {p: data for p, (data, _) in toy.items() if p in plain} == {p: data for p, (data, _) in plain.items()}


def test_the_toy_field_enters_every_key(model):
    config = CodegenConfig()
    plain = {job.name: job for job in in_tree_jobs(model, config)}
    toy = {job.name: job for job in in_tree_jobs(model, config, layers=WITH_TOY)}
    assert plain.keys() == toy.keys()
    assert all(plain[name].key != toy[name].key for name in plain)
    [field] = [f for f in toy["add"].inputs() if f not in plain["add"].inputs()]
    assert str(field) == "toy"


def test_files_and_render_agree(model):
    for group in model.operator_groups[:10]:
        codegen = GroupCodegen(group, model.indices, CodegenConfig(), WITH_TOY)
        assert sorted(codegen.render()) == codegen.files()
        assert toy_file(group.name) in codegen.files()


def test_a_layer_that_does_not_apply_writes_nothing(model):
    off = Layer("toy", toy_files, toy_render, content_fields=toy_fields, applies=lambda config: False)
    group = model.operator_groups[0]
    codegen = GroupCodegen(group, model.indices, CodegenConfig(), LAYERS + (off,))
    assert toy_file(group.name) not in codegen.files()
    plain = {job.name: job.key for job in in_tree_jobs(model, CodegenConfig())}
    assert {job.name: job.key for job in in_tree_jobs(model, CodegenConfig(), layers=LAYERS + (off,))} == plain
