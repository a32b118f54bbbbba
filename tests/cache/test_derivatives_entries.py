"""An edited derivatives.yaml rereads only the entries whose text changed, decides again only the
functions that find other infos, fingerprints again only the groups whose autograd inputs changed
and regenerates only those; the result (lines included) equals a whole read, and a broken entry
is reported at FILE:LINE and never stored. The counts come from the reader, the plan and the
fingerprints themselves, and from `opgen generate`'s report."""
import glob
import os
import re
import shutil

import pytest

from opgen import cli
from opgen.cache.autograd_cache import load_autograd_cached
from opgen.cache.parse_cache import load_model_cached
from opgen.errors import OpgenError
from opgen.gen.layers.autograd_kernels import AutogradModel
from opgen.model.derivatives import load_derivatives
from load_counts import Counts
from yaml_copies import cache_dir, inputs  # noqa: F401  (fixtures)

MUL = "- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n"
MUL_SCALAR = "- name: mul.Scalar(Tensor self, Scalar other) -> Tensor\n"


def entry_text(text, head):
    start = text.index(head)
    return text[start:text.index("\n- name:", start) + 1]


def swapped(text, first, second):
    a, b = entry_text(text, first), entry_text(text, second)
    return text.replace(a + b, b + a, 1)


# name -> (edit of the repository's derivatives.yaml, entries read, functions decided, groups regenerated);
# None: every entry is read.
EDITS = {
    "one formula": (lambda t: t.replace(MUL + "  self: grad * other\n", MUL + "  self: grad * other * 2\n", 1), 1, 0, ["mul"]),
    "a comment line in the middle (the entries below move)":
        (lambda t: t.replace(MUL, "# products\n" + MUL, 1), 1, 0, []),
    "comment lines above everything": (lambda t: "# a note\n#\n\n" + t, 0, 0, []),
    "an entry removed": (lambda t: t.replace(entry_text(t, MUL_SCALAR), "", 1), 0, 2, ["mul"]),
    "two entries swapped (their nodes' numbers swap)": (lambda t: swapped(t, MUL, MUL_SCALAR), 0, 5, ["mul"]),
    "a document marker (read whole)": (lambda t: "---\n" + t, None, 0, []),
}


def rewrite(path, change):
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    edited = change(text)
    assert edited != text
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(edited)
    return edited


def assert_same(incremental: AutogradModel, whole: AutogradModel) -> None:
    assert incremental.derivatives == whole.derivatives
    assert [(i.location, [f.location for f in i.formulas], [f.location for f in i.forward_formulas])
            for i in incremental.derivatives.infos] == \
        [(i.location, [f.location for f in i.formulas], [f.location for f in i.forward_formulas])
         for i in whole.derivatives.infos]
    assert incremental.decisions == whole.decisions and list(incremental.decisions) == list(whole.decisions)
    assert [incremental.fingerprint(g) for g in incremental.model.operator_groups] == \
        [whole.fingerprint(g) for g in whole.model.operator_groups]


def regenerated(out: str, capsys) -> list[str]:
    captured = capsys.readouterr().out
    found = re.search(r"regenerated \d+/\d+ groups: (.*)", captured)
    return sorted(found[1].split(", ")) if found else []


def generate(inputs, out, cache_dir, monkeypatch) -> int:
    yaml, tags, derivatives = inputs
    monkeypatch.setenv("OPGEN_CACHE_DIR", cache_dir)
    monkeypatch.setenv("OPGEN_CACHE_REMOTE", "off")
    return cli.main(["generate", yaml, "--tags", tags, "--derivatives", derivatives, "--out", out])


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_edit_rereads_only_changed_entries_and_equals_a_whole_read(inputs, cache_dir, tmp_path, monkeypatch, capsys, edit):
    change, expected_reads, expected_decisions, expected_groups = EDITS[edit]
    yaml, tags, derivatives = inputs
    out = str(tmp_path / "out")
    assert generate(inputs, out, cache_dir, monkeypatch) == 0
    capsys.readouterr()
    edited = rewrite(derivatives, change)

    counts = Counts(monkeypatch)
    model = load_model_cached(yaml, tags, cache_dir=cache_dir)
    incremental = load_autograd_cached(model, derivatives, AutogradModel, cache_dir=cache_dir)
    entries = len(re.findall(r"^- name:", edited, re.M))
    assert len(counts.read) == (entries if expected_reads is None else expected_reads)
    assert len(counts.decided) == expected_decisions
    assert sorted(set(counts.fingerprinted)) == expected_groups
    monkeypatch.undo()
    assert_same(incremental, AutogradModel(model, load_derivatives(derivatives, model)))

    # The run of `opgen generate` after it regenerates exactly those groups (the cache answers it).
    assert generate(inputs, out, cache_dir, monkeypatch) == 0
    assert regenerated(out, capsys) == expected_groups


def test_one_formula_edit_through_generate_reads_one_entry_and_regenerates_its_group(inputs, cache_dir, tmp_path, monkeypatch, capsys):
    out = str(tmp_path / "out")
    assert generate(inputs, out, cache_dir, monkeypatch) == 0
    capsys.readouterr()
    rewrite(inputs[2], EDITS["one formula"][0])
    counts = Counts(monkeypatch)
    assert generate(inputs, out, cache_dir, monkeypatch) == 0
    assert (len(counts.read), len(counts.decided), counts.fingerprinted) == (1, 0, ["mul"])
    assert regenerated(out, capsys) == ["mul"]
    with open(os.path.join(out, "ops", "mul_Autograd.cpp"), encoding="utf-8") as handle:
        assert "op::mul(op::mul(grad, other), 2)" in handle.read()


def test_a_broken_entry_is_reported_at_its_line_and_never_stored(inputs, cache_dir, tmp_path, monkeypatch, capsys):
    yaml, tags, derivatives = inputs
    out = str(tmp_path / "out")
    assert generate(inputs, out, cache_dir, monkeypatch) == 0
    stored = sorted(glob.glob(os.path.join(cache_dir, "autograd", "**", "*"), recursive=True))
    with open(derivatives, encoding="utf-8") as handle:
        original = handle.read()
    edited = rewrite(derivatives, lambda t: t.replace(MUL + "  self: grad * other\n", MUL + "  self: grad * othre\n", 1))
    line = edited[:edited.index("grad * othre")].count("\n") + 1
    capsys.readouterr()
    for _ in range(2):  # the same message each time: nothing of it was remembered
        assert generate(inputs, out, cache_dir, monkeypatch) == 2
        err = capsys.readouterr().err
        assert f"derivatives.yaml:{line}: error: the formula for 'self' uses 'othre'" in err
    assert sorted(glob.glob(os.path.join(cache_dir, "autograd", "**", "*"), recursive=True)) == stored
    model = load_model_cached(yaml, tags, cache_dir=cache_dir)
    with pytest.raises(OpgenError, match=f"derivatives.yaml:{line}: error: .*'othre'"):
        load_autograd_cached(model, derivatives, AutogradModel, cache_dir=cache_dir)

    # Fixed again: the entry stored before the error answers, reading nothing.
    with open(derivatives, "w", encoding="utf-8") as handle:
        handle.write(original)
    counts = Counts(monkeypatch)
    load_autograd_cached(model, derivatives, AutogradModel, cache_dir=cache_dir)
    assert (counts.read, counts.decided, counts.fingerprinted) == ([], [], [])


def test_an_edit_of_the_operator_yaml_rereads_only_entries_whose_functions_changed(inputs, cache_dir, monkeypatch):
    yaml, tags, derivatives = inputs
    load_autograd_cached(load_model_cached(yaml, tags, cache_dir=cache_dir), derivatives, AutogradModel, cache_dir=cache_dir)
    # A function no entry's schema shares a signature with: no entry reads anything new.
    with open(yaml, "a", encoding="utf-8") as handle:
        handle.write("\n- func: opgen_cache_probe(Tensor self) -> Tensor\n  variants: function\n")
    counts = Counts(monkeypatch)
    model = load_model_cached(yaml, tags, cache_dir=cache_dir)
    probed = load_autograd_cached(model, derivatives, AutogradModel, cache_dir=cache_dir)
    assert counts.read == []
    monkeypatch.undo()
    assert_same(probed, AutogradModel(model, load_derivatives(derivatives, model)))
    # An in-place variant of maximum (it has none): maximum's entry reads the model again, alone.
    with open(yaml, "a", encoding="utf-8") as handle:
        handle.write("\n- func: maximum_(Tensor(a!) self, Tensor other) -> Tensor(a!)\n  variants: method\n"
                     "  structured_delegate: maximum.out\n")
    counts = Counts(monkeypatch)
    model = load_model_cached(yaml, tags, cache_dir=cache_dir)
    probed = load_autograd_cached(model, derivatives, AutogradModel, cache_dir=cache_dir)
    with open(derivatives, encoding="utf-8") as handle:
        text = handle.read()
    assert counts.read == [text[:text.index("- name: maximum(")].count("\n") + 1]
    monkeypatch.undo()
    assert_same(probed, AutogradModel(model, load_derivatives(derivatives, model)))


def test_pytorch_one_formula_edit_reads_one_entry(real_data_dir, tmp_path, monkeypatch):
    """On PyTorch 2.13's yaml: sin's formula edited reads sin's entry alone, decides nothing again
    and fingerprints sin and _foreach_sin (whose formulas are derived from sin's)."""
    cache_dir = str(tmp_path / "cache")
    derivatives = str(tmp_path / "derivatives.yaml")
    shutil.copy(os.path.join(real_data_dir, "derivatives.yaml"), derivatives)
    model = load_model_cached(os.path.join(real_data_dir, "native_functions.yaml"), os.path.join(real_data_dir, "tags.yaml"),
                              cache_dir=cache_dir)
    before = load_autograd_cached(model, derivatives, AutogradModel, cache_dir=cache_dir)
    head = "- name: sin(Tensor self) -> Tensor\n  self: "
    rewrite(derivatives, lambda t: t.replace(head, head + "2 * ", 1))
    counts = Counts(monkeypatch)
    edited = load_autograd_cached(model, derivatives, AutogradModel, cache_dir=cache_dir)
    assert (len(counts.read), counts.decided, sorted(counts.fingerprinted)) == (1, [], ["_foreach_sin", "sin"])
    changed = sorted(g.name for g in model.operator_groups if edited.fingerprint(g) != before.fingerprint(g))
    assert changed == ["_foreach_sin", "sin"]
    monkeypatch.undo()
    assert_same(edited, AutogradModel(model, load_derivatives(derivatives, model)))
