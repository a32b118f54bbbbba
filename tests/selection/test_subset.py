"""opgen.selection.subset: the operator yaml of a selective build."""
import os

from helpers import REPO_ROOT

from opgen.model import load_model
from opgen.selection.subset import subset_yaml

YAML = os.path.join(REPO_ROOT, "yaml", "native_functions.yaml")
TAGS = os.path.join(REPO_ROOT, "yaml", "tags.yaml")


def _subset(tmp_path, groups):
    model = load_model(YAML, TAGS)
    with open(YAML, encoding="utf-8") as handle:
        text = handle.read()
    path = tmp_path / "native_functions.yaml"
    path.write_text(subset_yaml(text, model, groups))
    return text, path


def test_the_subset_holds_exactly_the_groups_every_overload_included(tmp_path):
    full = load_model(YAML, TAGS)
    _, path = _subset(tmp_path, ["add", "mm"])
    model = load_model(str(path), TAGS)
    assert sorted(g.name for g in model.operator_groups) == ["add", "mm"]
    want = sorted(str(f.func.name) for f in full.functions if f.root_name in ("add", "mm"))
    assert sorted(str(f.func.name) for f in model.functions) == want


def test_the_subset_is_the_full_yamls_entries_verbatim_in_order(tmp_path):
    text, path = _subset(tmp_path, ["sum", "abs", "add"])
    subset = path.read_text()
    entries = subset.split("\n- func:")[1:]
    positions = [text.index("\n- func:" + entry) for entry in entries]
    assert entries and positions == sorted(positions)
    assert subset.startswith(text[:text.index("- func:")])  # the preamble


def test_every_group_gives_the_full_yaml_and_none_its_preamble(tmp_path):
    model = load_model(YAML, TAGS)
    text, path = _subset(tmp_path, [g.name for g in model.operator_groups])
    assert path.read_text() == text
    _, empty = _subset(tmp_path, [])
    assert "- func:" not in empty.read_text()
