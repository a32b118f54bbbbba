"""An edited yaml reparses only the entries whose text changed, and gives exactly the model (lines
included) and the errors a whole parse gives, for every kind of edit."""
import os
import shutil

import pytest

from opgen.cache import parse_cache
from opgen.cache.parse_cache import load_model_cached
from opgen.errors import OpgenError
from opgen.model import load_model
from opgen.model import loader
from opgen.yamlio import top_level_items


ADD = "- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n"
SQUARE = "- func: opgen_square(Tensor self) -> Tensor\n  variants: function, method\n\n"


def first_entry(text):
    return text[text.index("- func:"):text.index("\n- func:", text.index("- func:")) + 1]


def second_entry(text):
    start = text.index("\n- func:", text.index("- func:")) + 1
    return text[start:text.index("\n- func:", start) + 1]


# name -> (edit of the text, entries parsed again)
EDITS = {
    "a default value": (lambda t: t.replace(ADD, ADD.replace("alpha=1", "alpha=2")), 1),
    "a new entry at the top (every line moves)": (lambda t: t.replace("- func:", SQUARE + "- func:", 1), 1),
    "an entry removed": (lambda t: t.replace(second_entry(t), "", 1), 0),
    "two entries swapped": (lambda t: t.replace(first_entry(t) + second_entry(t), second_entry(t) + first_entry(t), 1), 0),
    "comment lines above everything": (lambda t: "# a note\n#\n\n" + t, 0),
    "a comment after an entry": (lambda t: t.replace(ADD, ADD + "  # the default\n", 1), 1),
    "a kernel renamed": (lambda t: t.replace("CPU, CUDA: mul_out\n", "CPU, CUDA: mul_out_renamed\n", 1), 1),
    "a document marker (parsed whole)": (lambda t: "---\n" + t, None),
}


def count_entry_parses(monkeypatch):
    parsed = []
    real = loader.parse_entry

    def counting(raw, valid_tags):
        parsed.append(raw.line)
        return real(raw, valid_tags)
    monkeypatch.setattr(loader, "parse_entry", counting)
    return parsed


def assert_same_model(incremental, whole):
    assert incremental.functions == whole.functions
    assert [f.location for f in incremental.functions] == [f.location for f in whole.functions]
    assert {k: dict(v.index) for k, v in incremental.indices.items()} == {k: dict(v.index) for k, v in whole.indices.items()}
    assert incremental.operator_groups == whole.operator_groups
    assert incremental.view_groups == whole.view_groups and incremental.variant_groups == whole.variant_groups


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_edit_reparses_only_changed_entries_and_equals_a_whole_parse(inputs, cache_dir, monkeypatch, edit):
    change, expected_parses = EDITS[edit]
    load_model_cached(*inputs, cache_dir=cache_dir)
    with open(inputs[0]) as handle:
        text = handle.read()
    edited = change(text)
    assert edited != text
    with open(inputs[0], "w") as handle:
        handle.write(edited)
    parses = count_entry_parses(monkeypatch)
    incremental = load_model_cached(*inputs, cache_dir=cache_dir)
    entry_count = len([line for line in edited.splitlines() if line.startswith("- func:")])
    assert len(parses) == (entry_count if expected_parses is None else expected_parses)
    monkeypatch.undo()
    assert_same_model(incremental, load_model(*inputs))


@pytest.mark.parametrize("bad, message", [
    ("Scalar alpha=1) -> Tensor", "Scalar alpha=1) -> Tensr"),      # an entry's own problem
    ("- func: add.Tensor(", "- func: mul.Tensor("),                    # a problem across entries
])
def test_an_edit_with_an_error_reports_what_a_whole_parse_reports(inputs, cache_dir, bad, message):
    load_model_cached(*inputs, cache_dir=cache_dir)
    with open(inputs[0]) as handle:
        text = handle.read()
    with open(inputs[0], "w") as handle:
        handle.write(text.replace(bad, message, 1))
    with pytest.raises(OpgenError) as incremental:
        load_model_cached(*inputs, cache_dir=cache_dir)
    with pytest.raises(OpgenError) as whole:
        load_model(*inputs)
    assert str(incremental.value) == str(whole.value)


def test_an_edit_after_an_error_is_incremental_again(inputs, cache_dir, monkeypatch):
    load_model_cached(*inputs, cache_dir=cache_dir)
    with open(inputs[0]) as handle:
        text = handle.read()
    with open(inputs[0], "w") as handle:
        handle.write(text.replace(ADD, ADD.replace("Tensor\n", "Tensr\n"), 1))
    with pytest.raises(OpgenError):
        load_model_cached(*inputs, cache_dir=cache_dir)
    with open(inputs[0], "w") as handle:
        handle.write(text.replace(ADD, ADD.replace("alpha=1", "alpha=3"), 1))
    parses = count_entry_parses(monkeypatch)
    load_model_cached(*inputs, cache_dir=cache_dir)
    assert len(parses) == 1


@pytest.mark.parametrize("text, items", [
    ("- a: 1\n- b: 2\n", [(1, "- a: 1\n"), (2, "- b: 2\n")]),
    ("# c\n\n- a: 1\n  x: [1,\n    2]\n# between\n-\n  b: 2", [(3, "- a: 1\n  x: [1,\n    2]\n# between\n"), (7, "-\n  b: 2")]),
    ("---\n- a: 1\n", None),            # a document marker
    ("%YAML 1.1\n- a: 1\n", None),      # a directive
    ("a: 1\n- b: 2\n", None),           # not a sequence at the top
    ("-a\n", None),                     # a scalar, not an item
    ("- a: 1\x85- b: 2\n", None),       # a line break str.splitlines and yaml count differently
    ("", None),
])
def test_top_level_items(text, items):
    assert top_level_items(text) == items


def test_pytorch_yaml_edit_parses_only_the_changed_entries(real_paths, tmp_path, cache_dir, monkeypatch):
    for path in real_paths:
        shutil.copy(path, tmp_path / os.path.basename(path))
    paths = str(tmp_path / "native_functions.yaml"), str(tmp_path / "tags.yaml")
    load_model_cached(*paths, cache_dir=cache_dir)
    with open(paths[0]) as handle:
        text = handle.read()
    assert ADD in text
    with open(paths[0], "w") as handle:
        handle.write(SQUARE + text.replace(ADD, ADD.replace("alpha=1", "alpha=5"), 1))
    parses = count_entry_parses(monkeypatch)
    incremental = load_model_cached(*paths, cache_dir=cache_dir)
    assert len(parses) == 2
    monkeypatch.undo()
    assert_same_model(incremental, load_model(*paths))
