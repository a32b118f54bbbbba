"""The autograd model carried across an edit of the operator yaml (cache/autograd_cache.py, with
model/model_tokens.py): for each kind of edit of native_functions.yaml, the autograd model the cache
derives from the previous run's equals a fresh ``AutogradModel(model, derivatives)`` of the edited
model: its derivatives (lines included), decisions, what each function found, generation sources,
every group's fingerprint and the callees each fingerprint read (what the next edit carries). An
edit of one operator that nothing calls looks up, decides and fingerprints that operator alone and
reads no derivatives entry. On PyTorch 2.13's yaml (skipped where absent) and on the repository's."""
import os
import shutil

import pytest

from opgen.cache.autograd_cache import load_autograd_cached
from opgen.cache.parse_cache import load_model_cached
from opgen.gen.layers.autograd_kernels import AutogradModel
from opgen.model.derivatives import load_derivatives

from load_counts import Counts

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAMES = {"native_functions.yaml": "native_functions.yaml", "tags.yaml": "tags.yaml", "derivatives.yaml": "derivatives.yaml"}


def replaced(old, new):
    def change(text):
        assert text.count(old) == 1, old
        return text.replace(old, new, 1)
    return change


def entry(text, head):
    start = text.index(head)
    end = text.find("\n- func:", start)
    return text[start:end + 1] if end >= 0 else text[start:]


def removed(head):
    return lambda text: text.replace(entry(text, head), "", 1)


def moved_to_end(head):
    def change(text):
        moving = entry(text, head)
        return text.replace(moving, "", 1).rstrip("\n") + "\n\n" + moving
    return change


def added(entries):
    """``entries`` before the first entry: no other entry's text changes (an entry runs to the next,
    so one added at the end would add a line to the last)."""
    def change(text):
        first = text.index("- func:")
        return text[:first] + entries + "\n" + text[first:]
    return change


def both(*changes):
    def change(text):
        for one in changes:
            text = one(text)
        return text
    return change


PROBE = "- func: opgen_carry_probe(Tensor self) -> Tensor\n  variants: function\n"
MUL_PROBE = "- func: mul.opgen_probe(Tensor self, int times) -> Tensor\n  variants: function\n"
# A group the formulas name (a C++ helper in them): new, it becomes a callee of every group they are in.
MAYBE_MULTIPLY = "- func: maybe_multiply(Tensor self, Scalar other) -> Tensor\n  variants: function\n"
ZEROS_LIKE = ("- func: zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
              "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor")
ZEROS_LIKE_FALSE = ZEROS_LIKE.replace("bool? pin_memory=None", "bool? pin_memory=False")
ADDCMUL = "addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor"

# name -> (the edit of native_functions.yaml, of derivatives.yaml or None, (functions decided,
# groups fingerprinted) when the edit touches few, else None).
PYTORCH_EDITS = {
    "a default changed (cov's correction)": (
        replaced("cov(Tensor self, *, int correction=1,", "cov(Tensor self, *, int correction=2,"), None, (["cov"], ["cov"])),
    "a comment added above every entry (no function changed)": (lambda text: "# a note\n" + text, None, ([], [])),
    "a function added in a new group": (added(PROBE), None, (["opgen_carry_probe"], ["opgen_carry_probe"])),
    "a function added to a group formulas call (mul)": (added(MUL_PROBE), None, None),
    "a group added that formulas name (maybe_multiply)": (added(MAYBE_MULTIPLY), None, None),
    "a function removed (cov)": (removed("- func: cov("), None, ([], [])),
    "a function removed from a group formulas call (mul_.Scalar, with its autogen'd out=)":
        (removed("- func: mul_.Scalar("), None, None),
    "a dispatch entry changed (mul.out's MPS kernel)": (
        replaced("    CPU, CUDA, MPS, MTIA: mul_out\n", "    CPU, CUDA, MTIA: mul_out\n    MPS: mul_out_mps\n"), None, None),
    "the schema of a callee changed (zeros_like's default, with its autogen'd out=)":
        (replaced(ZEROS_LIKE, ZEROS_LIKE_FALSE), None, None),
    "the schema of a callee with formulas changed (mul.Scalar's, both files)": (
        replaced("- func: mul.Scalar(Tensor self, Scalar other) -> Tensor", "- func: mul.Scalar(Tensor self, Scalar other=2) -> Tensor"),
        replaced("- name: mul.Scalar(Tensor self, Scalar other) -> Tensor", "- name: mul.Scalar(Tensor self, Scalar other=2) -> Tensor"),
        None),
    "a default of a function with formulas changed (addcmul's, both files)": (
        replaced("- func: " + ADDCMUL, "- func: " + ADDCMUL.replace("value=1", "value=2")),
        replaced("- name: " + ADDCMUL, "- name: " + ADDCMUL.replace("value=1", "value=2")), None),
    "a function becoming abstract (cov gets a kernel)": (
        replaced("- func: cov(Tensor self, *, int correction=1, Tensor? fweights=None, Tensor? aweights=None) -> Tensor\n"
                 "  variants: function, method\n",
                 "- func: cov(Tensor self, *, int correction=1, Tensor? fweights=None, Tensor? aweights=None) -> Tensor\n"
                 "  variants: function, method\n  dispatch:\n    CompositeExplicitAutograd: cov\n"), None, (["cov"], ["cov"])),
    "a function becoming CompositeImplicit (zeros_like, losing its autogen'd out=)": (
        replaced("    CompositeExplicitAutograd, CompositeImplicitAutogradNestedTensor: zeros_like\n",
                 "    CompositeImplicitAutograd, CompositeImplicitAutogradNestedTensor: zeros_like\n"), None, None),
    "a tag added (transpose_copy.int: a view copy with an info and an autogen'd out=)": (
        replaced("    CompositeExplicitAutogradNonFunctional: transpose_copy_int\n  tags: view_copy\n",
                 "    CompositeExplicitAutogradNonFunctional: transpose_copy_int\n  tags: [view_copy, pt2_compliant_tag]\n"),
        None, None),
    "a _foreach_ function's kernel changed": (
        replaced("    CUDA: foreach_tensor_sin_cuda\n", "    CUDA: foreach_tensor_sin_cuda_v2\n"), None, None),
    "an entry moved (the functions' order changed: nothing carried)": (moved_to_end("- func: cov("), None, None),
}

REPO_EDITS = {
    "a default changed (arange.start_step's step)": (
        replaced("Scalar end, Scalar step=1, *, ScalarType? dtype=None", "Scalar end, Scalar step=2, *, ScalarType? dtype=None"),
        None, (["arange.start_step"], ["arange"])),
    "a function added in a new group": (added(PROBE), None, (["opgen_carry_probe"], ["opgen_carry_probe"])),
    "a function added to a group formulas call (mul)": (added(MUL_PROBE), None, None),
    "a group added that formulas name (maybe_multiply)": (added(MAYBE_MULTIPLY), None, None),
    "a function removed (ones_like, with its autogen'd out=)": (removed("- func: ones_like("), None, None),
    "a dispatch entry changed (mul.Scalar's kernel)": (
        replaced("    CompositeExplicitAutograd: mul_scalar\n", "    CompositeExplicitAutograd: mul_scalar_v2\n"), None, None),
    "the schema of a callee changed (zeros_like's default)": (replaced(ZEROS_LIKE, ZEROS_LIKE_FALSE), None, None),
    "the schema of a callee with formulas changed (mul.Scalar's, both files)": (
        replaced("- func: mul.Scalar(Tensor self, Scalar other) -> Tensor", "- func: mul.Scalar(Tensor self, Scalar other=2) -> Tensor"),
        replaced("- name: mul.Scalar(Tensor self, Scalar other) -> Tensor", "- name: mul.Scalar(Tensor self, Scalar other=2) -> Tensor"),
        None),
    "a function becoming abstract (nll_loss_nd gets a kernel)": (
        replaced("ignore_index=-100) -> Tensor\n  python_module: nn\n\n- func: nll_loss(",
                 "ignore_index=-100) -> Tensor\n  python_module: nn\n  dispatch:\n    CompositeExplicitAutograd: nll_loss_nd\n\n"
                 "- func: nll_loss("), None, None),
    "a function becoming CompositeImplicit (mul_.Scalar, which mul.Scalar's formulas serve)": (
        replaced("  dispatch:\n    CompositeExplicitAutograd: mul_scalar_\n", ""), None, None),
    "a tag added (transpose_copy.int: a view copy with an info and an autogen'd out=)": (
        replaced("    CompositeExplicitAutogradNonFunctional: transpose_copy\n  tags: view_copy\n",
                 "    CompositeExplicitAutogradNonFunctional: transpose_copy\n  tags: [nondeterministic_seeded, view_copy]\n"),
        None, None),
    "an entry moved (the functions' order changed: nothing carried)": (moved_to_end("- func: mm("), None, None),
}


class Tree:
    """Copies of the three yaml files and a cache, loaded under fixed names (so a copy elsewhere
    finds the same cache entries)."""

    def __init__(self, root):
        self.root = root
        self.cache = os.path.join(root, "cache")

    def path(self, name):
        return os.path.join(self.root, name)

    def model(self):
        return load_model_cached(self.path("native_functions.yaml"), self.path("tags.yaml"), cache_dir=self.cache,
                                 display_name="native_functions.yaml", tags_display_name="tags.yaml")

    def autograd(self, model):
        return load_autograd_cached(model, self.path("derivatives.yaml"), AutogradModel, cache_dir=self.cache,
                                    display_name="derivatives.yaml")

    def fresh(self, model):
        return AutogradModel(model, load_derivatives(self.path("derivatives.yaml"), model, display_name="derivatives.yaml"))

    def edit(self, name, change):
        with open(self.path(name), encoding="utf-8") as handle:
            text = handle.read()
        edited = change(text)
        assert edited != text
        with open(self.path(name), "w", encoding="utf-8") as handle:
            handle.write(edited)


def warm_tree(root, sources) -> Tree:
    """A tree of ``sources``' yaml whose cache holds the unedited model and autograd model."""
    os.makedirs(root)
    for name in NAMES:
        shutil.copy(os.path.join(sources, name), os.path.join(root, name))
    tree = Tree(str(root))
    tree.autograd(tree.model())  # which fingerprints every group
    return tree


def assert_equal_to_fresh(carried: AutogradModel, fresh: AutogradModel) -> None:
    model = fresh.model
    assert carried.model is model
    assert carried.derivatives == fresh.derivatives
    assert [(i.location, [f.location for f in i.formulas]) for i in carried.derivatives.infos] == \
        [(i.location, [f.location for f in i.formulas]) for i in fresh.derivatives.infos]
    assert carried.decisions == fresh.decisions and list(carried.decisions) == list(fresh.decisions)
    assert carried.plan.found == fresh.plan.found
    functions = {f.key: f for f in model.functions}
    assert {k: s.key for k, s in carried.plan.sources.items()} == {k: s.key for k, s in fresh.plan.sources.items()}
    assert all(s is functions[s.key] for s in carried.plan.sources.values())  # this model's functions
    assert carried.infos == fresh.infos
    assert [carried.fingerprint(g) for g in model.operator_groups] == [fresh.fingerprint(g) for g in model.operator_groups]
    assert carried._callees == fresh._callees
    assert carried.tokens == fresh.tokens


def check_edit(tree: Tree, edit, monkeypatch) -> None:
    native, derivatives, few = edit
    tree.edit("native_functions.yaml", native)
    if derivatives is not None:
        tree.edit("derivatives.yaml", derivatives)
    model = tree.model()
    counts = Counts(monkeypatch)
    carried = tree.autograd(model)
    monkeypatch.undo()
    if few is not None:
        assert (counts.read, sorted(counts.decided), sorted(set(counts.fingerprinted))) == ([], *few)
    fresh = tree.fresh(model)
    assert_equal_to_fresh(carried, fresh)
    stored = tree.autograd(model)  # the entry the carry stored, read back
    assert stored is not carried
    assert_equal_to_fresh(stored, fresh)


@pytest.fixture(scope="module")
def pytorch_tree(real_data_dir, tmp_path_factory):
    return warm_tree(tmp_path_factory.mktemp("carry") / "pytorch", real_data_dir)


@pytest.fixture(scope="module")
def repo_tree(tmp_path_factory):
    return warm_tree(tmp_path_factory.mktemp("carry") / "repo", os.path.join(REPO_ROOT, "yaml"))


def copy_of(tree: Tree, root) -> Tree:
    shutil.copytree(tree.root, root)
    return Tree(str(root))


@pytest.mark.parametrize("edit", sorted(PYTORCH_EDITS))
def test_pytorch_edit_carries_exactly_what_a_fresh_model_derives(pytorch_tree, tmp_path, monkeypatch, edit):
    check_edit(copy_of(pytorch_tree, tmp_path / "tree"), PYTORCH_EDITS[edit], monkeypatch)


@pytest.mark.parametrize("edit", sorted(REPO_EDITS))
def test_repo_edit_carries_exactly_what_a_fresh_model_derives(repo_tree, tmp_path, monkeypatch, edit):
    check_edit(copy_of(repo_tree, tmp_path / "tree"), REPO_EDITS[edit], monkeypatch)


def test_a_chain_of_edits_carries_what_each_stored(repo_tree, tmp_path, monkeypatch):
    """Each edit starts from the entry the one before stored (its tokens, basis and callees)."""
    tree = copy_of(repo_tree, tmp_path / "tree")
    for name in ("a function added in a new group", "a group added that formulas name (maybe_multiply)",
                 "a function removed (ones_like, with its autogen'd out=)", "a dispatch entry changed (mul.Scalar's kernel)",
                 "the schema of a callee changed (zeros_like's default)", "a default changed (arange.start_step's step)"):
        native, derivatives, _ = REPO_EDITS[name]
        check_edit(tree, (native, derivatives, None), monkeypatch)


def test_pytorch_a_chain_of_default_edits(pytorch_tree, tmp_path, monkeypatch):
    """cov's default edited three times (as the benchmark does): each carries from the last."""
    tree = copy_of(pytorch_tree, tmp_path / "tree")
    before = 1
    for value in (3, 4, 5):
        check_edit(tree, (replaced(f"int correction={before},", f"int correction={value},"), None, (["cov"], ["cov"])), monkeypatch)
        before = value


def test_a_moved_entry_carries_nothing(repo_tree, tmp_path, monkeypatch):
    """The functions' order is part of what the derivatives read (families, _foreach_ infos): an
    entry moved plans every function again rather than reason about the new order."""
    tree = copy_of(repo_tree, tmp_path / "tree")
    tree.edit("native_functions.yaml", moved_to_end("- func: mm("))
    model = tree.model()
    counts = Counts(monkeypatch)
    tree.autograd(model)
    assert len(counts.decided) == len(model.functions)


def test_an_operator_edit_after_a_formula_edit_carries_from_it(repo_tree, tmp_path, monkeypatch):
    """A formula edit stores its entry with the basis of the same model's read before it; an edit of
    the operator yaml then carries from that entry: its derivatives whole, one function decided."""
    tree = copy_of(repo_tree, tmp_path / "tree")
    tree.edit("derivatives.yaml", lambda text: text.replace("  self: grad * other\n", "  self: grad * other * 2\n", 1))
    model = tree.model()
    assert_equal_to_fresh(tree.autograd(model), tree.fresh(model))
    check_edit(tree, REPO_EDITS["a default changed (arange.start_step's step)"], monkeypatch)
