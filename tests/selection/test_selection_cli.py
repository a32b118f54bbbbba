"""``opgen select``: the summary, --explain, --report, and bad input (FILE:LINE, exit status 2)."""
import os
import subprocess
import sys

import pytest

from opgen import cli
from opgen.selection.sizes import Measured, ObjectSizes, write_object_sizes

from helpers import REPO_ROOT

OUR_YAML = os.path.join(REPO_ROOT, "yaml", "native_functions.yaml")
MLP = "addmm\nrelu\n_log_softmax\nnll_loss\nsum\n"


@pytest.fixture
def mlp(tmp_path):
    path = tmp_path / "ops.txt"
    path.write_text(MLP)
    return str(path)


def select(capsys, *args):
    status = cli.main(["select", *args, "--yaml", OUR_YAML])
    out, err = capsys.readouterr()
    return status, out, err


def test_summary(capsys, mlp):
    status, out, err = select(capsys, mlp)
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == f"{mlp}: 5 operators selected (a list), in 5 operator groups"
    assert lines[1].startswith("closure: ") and " of 91 operator groups" in lines[1]
    assert "  csrc/native/loss_ops.cpp: implements nll_loss" in lines
    assert any(line.startswith("hand-written sources: ") for line in lines)


def test_explain(capsys, tmp_path):
    path = tmp_path / "ops.txt"
    path.write_text("matmul\n")
    status, out, _ = select(capsys, str(path), "--explain", "mm", "--explain", "aten::matmul.out")
    assert status == 0
    assert out.splitlines()[0] == f"mm: called by csrc/native/matmul.cpp, which implements matmul; matmul: selected at {path}:1"
    assert f"matmul.out: same group as matmul; matmul: selected at {path}:1" in out.splitlines()
    status, out, _ = select(capsys, str(path), "--explain", "arange")
    assert status == 1 and out == "arange: not in the build: nothing selected needs it\n"


def test_report_without_and_with_recorded_sizes(capsys, mlp, tmp_path):
    cache = tmp_path / "cache"
    status, out, _ = select(capsys, mlp, "--report", "--cache-dir", str(cache))
    assert status == 0
    assert f"library size: unknown until a full build records object sizes ({cache / 'object_sizes.json'})" in out
    assert "group units + " in out
    write_object_sizes(str(cache), ObjectSizes(groups={"addmm": 1000, "relu": 1000, "arange": 2000},
                                               sources={"csrc/native/loss_ops.cpp": 1000}, library_bytes=100000,
                                               yaml="yaml/native_functions.yaml"))
    status, out, _ = select(capsys, mlp, "--report", "--cache-dir", str(cache))
    assert status == 0
    assert "library size: ~" in out and "of 97.7 KiB for the full library" in out
    assert "objects without a recorded size, counted at the mean" in out


def test_report_counts_the_library_objects_a_build_has(capsys, mlp, tmp_path):
    """The Python extension's sources are not the library's; a recorded object the selection does
    not judge (CUDA loops: csrc/native/cuda is not read) is in every build, as the build compiles it."""
    cache = tmp_path / "cache"
    status, out, _ = select(capsys, mlp, "--report", "--cache-dir", str(cache))
    objects = next(line for line in out.splitlines() if line.startswith("  objects: "))
    assert "csrc/python" not in out
    write_object_sizes(str(cache), ObjectSizes(groups={"addmm": 1000}, sources={"csrc/native/cuda/loops.cu": 5000},
                                               library_bytes=100000, yaml="yaml/native_functions.yaml",
                                               selections={mlp: 90000}))
    status, out, _ = select(capsys, mlp, "--report", "--cache-dir", str(cache))
    assert status == 0
    count = int(objects.split()[1])
    with_cuda = next(line for line in out.splitlines() if line.startswith("  objects: "))
    assert int(with_cuda.split()[1]) == count + 1
    assert f"built: 87.9 KiB (a selective build of {mlp} recorded it; the estimate is " in out
    assert "measured from its link map" not in out  # no map was recorded


def test_warnings_go_to_stderr(capsys, tmp_path):
    path = tmp_path / "ops.yaml"
    path.write_text("operators:\n  aten::relu: {}\nkernel_metadata:\n  relu_kernel: [Float]\n")
    status, _, err = select(capsys, str(path))
    assert status == 0
    assert err.startswith(f"{path}:3: warning: kernel_metadata is not supported")


def test_bad_input_is_located_and_exits_2(tmp_path):
    path = tmp_path / "ops.txt"
    path.write_text("addmm\nad.Tensor\naddmm\n")
    run = subprocess.run([sys.executable, "-m", "opgen", "select", str(path), "--yaml", OUR_YAML],
                         cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.splitlines() == [
        f"{path}:2: error: unknown operator 'ad.Tensor'; did you mean 'add.Tensor'?",
        f"{path}:3: error: duplicate: addmm is already selected at line 1; remove one of them",
    ]


def test_missing_files_exit_2(capsys, tmp_path):
    status, _, err = select(capsys, str(tmp_path / "nope.txt"))
    assert status == 2 and err == f"{tmp_path / 'nope.txt'}: error: no such file\n"
    status, _, err = select(capsys, str(tmp_path / "nope.txt"), "--csrc", str(tmp_path / "nothing"))
    assert status == 2


def test_backends_kernels_are_compiled_whole_so_what_they_call_is_in(capsys, mlp, tmp_path):
    from opgen.selection import read_csrc

    csrc = os.path.join(REPO_ROOT, "csrc")
    _, runtime = read_csrc(csrc)
    _, with_backends = read_csrc(csrc, backends=["xla", "lazy"])
    backend_sources = with_backends - runtime
    assert "csrc/backends/xla/compute_kernels.cpp" in backend_sources
    assert "csrc/backends/lazy/kernels.cpp" in backend_sources
    assert all(p.startswith(("csrc/backends/xla/", "csrc/backends/lazy/")) for p in backend_sources)
    status, without, _ = select(capsys, mlp)
    assert status == 0
    status, out, err = select(capsys, mlp, "--backend", "xla,lazy")
    assert status == 0 and err == ""
    groups = lambda text: int(text.splitlines()[1].split(" of ")[0].split()[-1])  # "closure: N of 90 operator groups"
    assert groups(out) >= groups(without)
    status, _, err = select(capsys, mlp, "--backend", "tpu")
    assert status == 2 and err.startswith("error: --backend=tpu: no such backend; available: lazy, xla ")


def test_after_a_measured_build_the_report_gives_its_link_maps_figures_and_the_family_files(capsys, mlp, tmp_path):
    cache = tmp_path / "cache"
    measured = Measured(groups={"addmm": 3000, "relu": 1000}, sources={"csrc/native/unary_ops.cpp": 700},
                        linker_bytes=5300, library_bytes=10000)
    write_object_sizes(str(cache), ObjectSizes(groups={"addmm": 4000, "relu": 2000}, sources={"csrc/native/unary_ops.cpp": 900},
                                               library_bytes=20000, yaml="yaml/native_functions.yaml",
                                               selections={mlp: 10000}, measured={mlp: measured}))
    status, out, _ = select(capsys, mlp, "--report", "--cache-dir", str(cache))
    assert status == 0
    assert ("measured from its link map: 3.9 KiB of group units + 700 B of hand-written sources + 5.2 KiB the "
            "linker's own (dynamic symbols, relocations, symbol table, headers) = 9.8 KiB") in out
    family = next(line for line in out.splitlines() if line.startswith("    csrc/native/unary_ops.cpp: "))
    assert family.endswith(": 900 B / 700 B") and " groups, " in family and " in the build" in family
    assert "operator groups' bytes, in the built library, largest first: addmm 2.9 KiB, relu 1000 B" in out
