"""Messages for operator names a yaml lacks (opgen/model/operator_set.py) and when a suggestion is
close enough to make (opgen/errors.py)."""
import os

import pytest

from opgen.errors import OPERATOR_NAME_RATIO, close_match, one_edit_apart
from opgen.model.operator_set import describe_operator_set, pytorch_version, unknown_operator_hint
from opgen.model.schema import OperatorName


def test_version_from_a_pytorch_checkout(tmp_path):
    native = tmp_path / "aten" / "src" / "ATen" / "native"
    native.mkdir(parents=True)
    (tmp_path / "version.txt").write_text("2.13.0a0\n", encoding="utf-8")
    yaml = str(native / "native_functions.yaml")
    assert pytorch_version(yaml) == "2.13"
    assert describe_operator_set(yaml) == f"{yaml} (PyTorch 2.13's set)"


def test_version_from_a_versioned_folder_and_none_otherwise(tmp_path):
    assert pytorch_version(os.path.join(tmp_path, "pytorch-2.9", "native_functions.yaml")) == "2.9"
    assert pytorch_version(os.path.join(tmp_path, "yaml", "native_functions.yaml")) is None
    assert describe_operator_set("yaml/native_functions.yaml") == "yaml/native_functions.yaml"


NAMES = [OperatorName.parse(n) for n in ("add.Tensor", "add.out", "_pdist_backward", "sign", "maximum", "relu",
                                         "nll_loss_backward", "_softmax_backward_data", "log_softmax.int")]


@pytest.mark.parametrize("text, ending", [
    ("kl_div_backward", ": renamed or removed?"),     # 0.80 alike '_pdist_backward': a removed operator
    ("symeig", ": renamed or removed?"),              # 0.60 alike 'sign'
    ("maximun", "; did you mean 'maximum'?"),         # one letter changed
    ("rleu", "; did you mean 'relu'?"),               # two letters swapped in a short name
    ("add", "; its overloads there: add.Tensor, add.out"),
    ("add.Tensr", "; did you mean 'add.Tensor'?"),
    ("l1_loss_backward", ": renamed or removed?"),    # 0.91 alike 'nll_loss_backward', but another word
    ("_softmx_backward_dta", "; did you mean '_softmax_backward_data'?"),  # one typo in each of two words
    ("logsoftmax.int", "; did you mean 'log_softmax.int'?"),               # one edit in all
])
def test_unknown_operator_hint(text, ending):
    assert unknown_operator_hint(text, NAMES, "pytorch-2.13/native_functions.yaml") == \
        f"'{text}' is not an operator of pytorch-2.13/native_functions.yaml (PyTorch 2.13's set){ending}"


@pytest.mark.parametrize("a, b, expected", [
    ("rleu", "relu", True), ("maximun", "maximum", True), ("ad", "add", True), ("add", "ad", True),
    ("abcd", "abdc", True), ("relu", "relu", False), ("abc", "abcde", False), ("abcd", "badc", False), ("eig", "neg", False),
])
def test_one_edit_apart(a, b, expected):
    assert one_edit_apart(a, b) is expected


def test_close_match_cutoffs():
    assert close_match("kl_div_backward", ["_pdist_backward"]) == "_pdist_backward"  # difflib's default, for small sets
    assert close_match("kl_div_backward", ["_pdist_backward"], OPERATOR_NAME_RATIO) is None
    assert close_match("ge", ["gt", "ger"], OPERATOR_NAME_RATIO) == "ger"  # both one edit away: the more alike wins
    assert close_match("cpu", ["CPU"], OPERATOR_NAME_RATIO) == "CPU"
