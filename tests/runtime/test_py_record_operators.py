"""opdispatch.record_operators: the operators a block calls, roots marked, written as torchgen's
selection yaml (byte for byte what opgen.selection.dump writes), deterministically, from every
thread, only inside the block; one recording at a time; a bad path fails before the block runs.
The C++ recorder itself: csrc/tests/test_operator_recorder.cpp."""
import inspect
import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from opgen.model import load_model
from opgen.selection.dump import selection_yaml as opgen_selection_yaml
from opgen.selection.load import TORCHGEN_FORMAT, load_selection

from helpers import REPO_ROOT

OUR_YAML = os.path.join(REPO_ROOT, "yaml", "native_functions.yaml")
OUR_TAGS = os.path.join(REPO_ROOT, "yaml", "tags.yaml")

# The MLP's calls (tests/bench/bench_autograd.py's training step, smaller): what the program
# calls, and what the kernels, composites and the autograd engine call inside.
MLP_ROOTS = {"aten::addmm", "aten::relu", "aten::log_softmax.int", "aten::nll_loss"}
MLP_CALLEES = {
    "aten::_log_softmax",                # log_softmax's decomposition (CompositeImplicitAutograd)
    "aten::nll_loss_forward",            # nll_loss's (CompositeImplicitAutograd)
    "aten::mm", "aten::t",               # addmm's backward
    "aten::_log_softmax_backward_data",  # _log_softmax's backward
    "aten::nll_loss_backward",           # nll_loss_forward's backward
    "aten::ones_like",                   # backward()'s default gradient
}


def _mlp(od):
    """step(): a two-layer classifier's forward and backward on fixed data, made here (outside a recording).
    mlp_program.py is the same classifier as a program, for builds other than the checkout's."""
    rng = np.random.default_rng(0)
    x = od.tensor(rng.standard_normal((8, 6)))
    labels = od.tensor(rng.integers(0, 3, 8))
    w1, b1, w2, b2 = [od.tensor(rng.standard_normal(s) * 0.1, requires_grad=True) for s in [(6, 5), (5,), (5, 3), (3,)]]

    def step():
        logits = od.addmm(b2, od.addmm(b1, x, w1).relu(), w2)
        loss = od.nll_loss(od.log_softmax(logits, 1), labels)
        loss.backward()
        return loss
    return step


@pytest.fixture(scope="module")
def our_model():
    return load_model(OUR_YAML, OUR_TAGS)


def test_mlp_roots_are_the_programs_calls_and_the_rest_what_kernels_call(opdispatch, our_model, tmp_path):
    step = _mlp(opdispatch)
    path = tmp_path / "ops.yaml"
    with opdispatch.record_operators(path) as recorded:
        step()
    roots = {name for name, root in recorded.operators.items() if root}
    callees = {name for name, root in recorded.operators.items() if not root}
    assert roots == MLP_ROOTS
    assert MLP_CALLEES <= callees, sorted(MLP_CALLEES - callees)
    assert list(recorded.operators) == sorted(recorded.operators)
    assert recorded.written and path.read_bytes() == opgen_selection_yaml(recorded.operators.items()).encode()

    # opgen reads it against the model without a complaint, roots as recorded
    selection = load_selection(str(path), our_model)
    assert selection.format == TORCHGEN_FORMAT and selection.warnings == ()
    assert {("aten::" + op.keys[0], op.is_root) for op in selection.operators} == set(recorded.operators.items())


@pytest.mark.parametrize("pairs", [
    [],
    [("aten::mm", False)],
    [("aten::add.Tensor", False), ("mm", True), ("aten::add.Tensor", True), ("myops::scale", False),
     ("aten::__iadd__.Tensor", False), ("_log_softmax", False), ("aten::mm", False), ("aten::Z", True)],
])
def test_the_writer_is_opgens_byte_for_byte(opdispatch, pairs):
    from opdispatch.recording import selection_yaml
    assert selection_yaml(pairs) == opgen_selection_yaml(pairs)
    assert selection_yaml(reversed(pairs)) == opgen_selection_yaml(pairs)
    assert selection_yaml(pairs, training=False) == opgen_selection_yaml(pairs, training=False)


def test_an_inference_program_records_no_training(opdispatch, tmp_path):
    """record_operators(training=False): every entry says is_used_for_training: false, so its
    selective build generates no autograd kernels for them (tests/scons/test_selective_by_operator.py)."""
    path = tmp_path / "ops.yaml"
    with opdispatch.record_operators(path, training=False) as recorded:
        opdispatch.tensor([1.0, -2.0]).neg()
    text = path.read_text()
    assert "is_used_for_training: false" in text and "is_used_for_training: true" not in text
    assert text == opgen_selection_yaml(recorded.operators.items(), training=False)
    with opdispatch.record_operators(path) as recorded:
        opdispatch.tensor([1.0, -2.0]).neg()
    assert "is_used_for_training: true" in path.read_text()


def test_same_program_same_bytes_and_an_unchanged_file_is_not_rewritten(opdispatch, tmp_path):
    # fresh leaves each time: a second backward into the same leaves accumulates (another program)
    first, second = tmp_path / "first.yaml", tmp_path / "second.yaml"
    with opdispatch.record_operators(first):
        _mlp(opdispatch)()
    with opdispatch.record_operators(second):
        _mlp(opdispatch)()
    assert first.read_bytes() == second.read_bytes()
    os.utime(first, (1_000_000_000, 1_000_000_000))
    with opdispatch.record_operators(first) as again:
        _mlp(opdispatch)()
    assert again.written is False and os.stat(first).st_mtime == 1_000_000_000


def test_bytes_do_not_depend_on_the_hash_seed_and_the_runtime_needs_no_opgen(opdispatch, tmp_path):
    program = "\n".join([
        "import sys",
        f"sys.path.insert(0, {os.path.dirname(os.path.dirname(opdispatch.__file__))!r})",
        "import numpy as np, opdispatch as od",
        inspect.getsource(_mlp),
        "step = _mlp(od)",
        "with od.record_operators(sys.argv[1]):",
        "    step()",
        "assert not [m for m in sys.modules if m == 'opgen' or m.startswith('opgen.')], 'opdispatch imported opgen'",
    ])
    outputs = []
    for seed in ("0", "1", "4242"):
        path = tmp_path / f"seed{seed}.yaml"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        env.pop("PYTHONPATH", None)
        run = subprocess.run([sys.executable, "-c", program, str(path)], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr[-3000:]
        outputs.append(path.read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]
    with opdispatch.record_operators(tmp_path / "here.yaml"):
        _mlp(opdispatch)()
    assert (tmp_path / "here.yaml").read_bytes() == outputs[0]


def test_calls_from_another_thread_are_recorded(opdispatch, tmp_path):
    x = opdispatch.tensor([1.0, 2.0])
    failures = []

    def worker():
        try:
            opdispatch.exp(x)
        except BaseException as error:  # pragma: no cover - reported below
            failures.append(error)
    with opdispatch.record_operators(tmp_path / "ops.yaml") as recorded:
        thread = threading.Thread(target=worker)
        thread.start()
        opdispatch.neg(x)
        thread.join()
    assert not failures
    assert recorded.operators == {"aten::exp": True, "aten::neg": True}


def test_nothing_is_recorded_outside_the_block(opdispatch, tmp_path):
    x = opdispatch.tensor([1.0, 2.0])
    opdispatch.exp(x)
    with opdispatch.record_operators(tmp_path / "ops.yaml") as recorded:
        opdispatch.neg(x)
    opdispatch.sin(x)
    assert recorded.operators == {"aten::neg": True}
    with opdispatch.record_operators(tmp_path / "empty.yaml") as nothing:
        pass
    assert nothing.operators == {}
    assert (tmp_path / "empty.yaml").read_bytes() == opgen_selection_yaml([]).encode()


def test_an_exception_in_the_block_still_writes_and_propagates(opdispatch, tmp_path):
    x = opdispatch.tensor([1.0, 2.0])
    path = tmp_path / "ops.yaml"
    with pytest.raises(ZeroDivisionError):
        with opdispatch.record_operators(path) as recorded:
            opdispatch.neg(x)
            1 / 0
    assert recorded.operators == {"aten::neg": True}
    assert path.read_bytes() == opgen_selection_yaml([("aten::neg", True)]).encode()
    # an operator that fails is recorded too: it was called
    with pytest.raises(opdispatch.Error, match="size of tensor"):
        with opdispatch.record_operators(path) as recorded:
            opdispatch.add(x, opdispatch.tensor([1.0, 2.0, 3.0]))
    assert recorded.operators["aten::add.Tensor"] is True


def test_one_recording_at_a_time(opdispatch, tmp_path):
    x = opdispatch.tensor([1.0])
    with opdispatch.record_operators(tmp_path / "outer.yaml") as outer:
        with pytest.raises(opdispatch.Error, match="another recording of operators is active"):
            with opdispatch.record_operators(tmp_path / "inner.yaml"):
                pass  # pragma: no cover - never runs
        errors = []
        thread = threading.Thread(target=lambda: _start_and_catch(opdispatch, tmp_path / "thread.yaml", errors))
        thread.start()
        thread.join()
        assert [type(e) for e in errors] == [opdispatch.Error]
        opdispatch.neg(x)
    assert outer.operators == {"aten::neg": True}
    assert not (tmp_path / "inner.yaml").exists() and not (tmp_path / "thread.yaml").exists()
    with opdispatch.record_operators(tmp_path / "after.yaml"):  # free again
        pass


def _start_and_catch(od, path, errors):
    try:
        with od.record_operators(path):
            pass
    except Exception as error:
        errors.append(error)


def test_a_missing_directory_fails_before_the_block_runs(opdispatch, tmp_path):
    ran = []
    target = tmp_path / "no" / "such" / "ops.yaml"
    message = r"record_operators: cannot write .*ops\.yaml: the directory .*such does not exist"
    with pytest.raises(FileNotFoundError, match=message):
        with opdispatch.record_operators(target):
            ran.append(True)  # pragma: no cover
    assert not ran and not (tmp_path / "no").exists()
    with pytest.raises(IsADirectoryError, match="it is a directory"):
        with opdispatch.record_operators(tmp_path):
            pass  # pragma: no cover


def test_a_directory_removed_during_the_block_raises_and_leaves_nothing(opdispatch, tmp_path):
    directory = tmp_path / "out"
    directory.mkdir()
    with pytest.raises(FileNotFoundError, match="does not exist"):
        with opdispatch.record_operators(directory / "ops.yaml") as recorded:
            opdispatch.neg(opdispatch.tensor([1.0]))
            directory.rmdir()
    assert recorded.operators == {"aten::neg": True} and not directory.exists()
    # a failed write leaves neither the file nor a temp beside it
    directory.mkdir()
    os.chmod(directory, 0o500)
    try:
        if os.access(directory, os.W_OK):
            return  # root ignores the mode
        with pytest.raises(PermissionError):
            with opdispatch.record_operators(directory / "ops.yaml"):
                pass
        assert os.listdir(directory) == []
    finally:
        os.chmod(directory, 0o700)


def test_a_decorated_function_records_each_call(opdispatch, tmp_path):
    path = tmp_path / "ops.yaml"

    @opdispatch.record_operators(path)
    def program(x):
        return opdispatch.neg(x)
    assert program(opdispatch.tensor([1.0])).tolist() == [-1.0]
    assert path.read_bytes() == opgen_selection_yaml([("aten::neg", True)]).encode()


def test_operators_of_any_namespace_and_python_kernels_callees(opdispatch, make_lib, ns, tmp_path):
    lib = make_lib(ns, "DEF")
    lib.define("scale(Tensor x) -> Tensor")
    lib.impl("scale", "CPU", lambda x: opdispatch.mul(x, 2.0))  # a Python kernel calling an operator
    with opdispatch.record_operators(tmp_path / "ops.yaml") as recorded:
        result = getattr(opdispatch.ops, ns).scale(opdispatch.tensor([1.0, 2.0]))
    assert result.tolist() == [2.0, 4.0]
    assert recorded.operators[f"{ns}::scale"] is True
    assert recorded.operators["aten::mul.Scalar"] is False  # called inside the kernel
    assert f"  {ns}::scale:\n    is_root_operator: true\n" in (tmp_path / "ops.yaml").read_text()



def test_the_mlp_programs_inference_records_the_forward_alone(opdispatch, tmp_path):
    """mlp_program.py --inference (bench_selective.py's inference build): the same roots and loss,
    none of the backward's operators."""
    program = os.path.join(REPO_ROOT, "tests", "runtime", "mlp_program.py")
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(opdispatch.__file__))}

    def run(*args):
        result = subprocess.run([sys.executable, program, *args], capture_output=True, text=True, timeout=120, env=env,
                                cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout.splitlines()[-1])

    inference, training = run("--inference", "--record", "inference.yaml"), run()
    assert {name for name, root in inference["operators"].items() if root} == MLP_ROOTS
    assert not (MLP_CALLEES - {"aten::_log_softmax", "aten::nll_loss_forward"}) & set(inference["operators"])
    assert inference["grads"] == [] and inference["loss"] == training["loss"]
