"""write_selection: recorded (operator, is_root) pairs as torchgen's selection yaml, read back the
same, byte-identical whatever the input order or PYTHONHASHSEED."""
import os
import random
import subprocess
import sys

from opgen.selection import load_selection, selection_yaml, write_selection
from opgen.selection.load import TORCHGEN_FORMAT

from helpers import REPO_ROOT

RECORDED = [("add.Tensor", True), ("mm", False), ("relu", True), ("aten::sum.dim_IntList", True), ("mm", True),
            ("add.Tensor", False), ("_log_softmax", False), ("empty.memory_format", False)]


def test_written_selection_reads_back(our_model, tmp_path):
    path = tmp_path / "ops.yaml"
    assert write_selection(str(path), RECORDED)
    selection = load_selection(str(path), our_model)
    assert selection.format == TORCHGEN_FORMAT and selection.warnings == ()
    assert {op.keys[0]: op.is_root for op in selection.operators} == {
        "_log_softmax": False, "add.Tensor": True, "empty.memory_format": False, "mm": True, "relu": True,
        "sum.dim_IntList": True}
    assert all(op.is_used_for_training and not op.include_all_overloads for op in selection.operators)


def test_the_format_is_torchgens(tmp_path):
    text = selection_yaml([("add.Tensor", True), ("mm", False)])
    assert text.splitlines()[1:] == [
        "operators:",
        "  aten::add.Tensor:",
        "    is_root_operator: true",
        "    is_used_for_training: true",
        "    include_all_overloads: false",
        "  aten::mm:",
        "    is_root_operator: false",
        "    is_used_for_training: true",
        "    include_all_overloads: false",
    ]
    assert text.startswith("#") and text.endswith("\n")
    assert selection_yaml([]).endswith("operators: {}\n")


def test_input_order_does_not_matter_and_rewriting_the_same_is_a_no_op(tmp_path):
    path = str(tmp_path / "ops.yaml")
    write_selection(path, RECORDED)
    first = open(path, "rb").read()
    for seed in range(5):
        shuffled = RECORDED[:]
        random.Random(seed).shuffle(shuffled)
        assert not write_selection(path, shuffled)  # same bytes: not written, mtime kept
    assert open(path, "rb").read() == first


def test_bytes_are_the_same_under_every_hash_seed(tmp_path):
    program = ("import sys; from opgen.selection import write_selection; "
               f"write_selection(sys.argv[1], {RECORDED!r})")
    outputs = []
    for seed in ("0", "1", "4242"):
        path = tmp_path / f"ops-{seed}.yaml"
        subprocess.run([sys.executable, "-c", program, str(path)], cwd=REPO_ROOT, check=True,
                       env=dict(os.environ, PYTHONHASHSEED=seed))
        outputs.append(path.read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]
    assert b"\r" not in outputs[0]
