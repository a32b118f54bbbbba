"""--cuda-arch and --cublas on the real build, printed with -n on a copy of the build's inputs
(nothing compiles): the --generate-code flags of every nvcc command, the configure line, a bad value's
exit status 2, the GPUs a fake nvidia-smi reports, and cuBLAS's flags from a fake tree named by
CUBLAS_HOME. Needs nvcc; skips without it."""
import os
import re
import shutil
import stat

import pytest

from helpers import REPO_ROOT, copy_project, run_scons_loud
from opgen.scons.toolset.cuda_arch import NO_GPU_ARCHS

LIBRARY = os.path.join("build", "lib", "libopdispatch.so")
NVCC = os.environ.get("NVCC") or shutil.which("nvcc")
pytestmark = pytest.mark.skipif(not NVCC or not os.access(NVCC, os.X_OK), reason="nvcc is not installed")


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return copy_project(tmp_path_factory.mktemp("cuda_arch_project"))


@pytest.fixture(scope="module")
def no_gpu(tmp_path_factory):
    """A nvidia-smi that fails as it does on a machine without a driver."""
    return fake_nvidia_smi(tmp_path_factory.mktemp("no_gpu"), 'echo "NVIDIA-SMI has failed" >&2; exit 9')


def fake_nvidia_smi(directory, script):
    path = directory / "nvidia-smi"
    path.write_text("#!/bin/sh\n" + script + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def scons(project, *args, **env):
    """-n: what a cold build of the library would run, with --verbose command lines."""
    return run_scons_loud(project, "--verbose", "-n", *args, LIBRARY, timeout=600,
                          env={"NVCC": None, "CUBLAS_HOME": None, **env})


def nvcc_lines(result):
    return [line for line in result.stdout.splitlines() if re.search(r"nvcc -o \S+\.os -c ", line)]


def gencode(line):
    return re.findall(r"--generate-code=(\S+)", line)


def test_a_list_puts_exactly_its_gencode_flags_on_every_nvcc_command(project, no_gpu):
    result = scons(project, "--cuda-arch=90,sm_80", NVIDIA_SMI=no_gpu)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = nvcc_lines(result)
    assert lines
    for line in lines:
        assert gencode(line) == ["arch=compute_80,code=sm_80", "arch=compute_90,code=sm_90", "arch=compute_90,code=compute_90"]
    assert re.search(r"\[opgen\] CUDA: on \(nvcc \d+\.\d+; sm_80, sm_90, compute_90\)\n", result.stdout)


def test_the_default_without_a_gpu_covers_volta_to_hopper(project, no_gpu):
    """SASS for sm_80, PTX of the oldest of Volta to Hopper that nvcc compiles (cuda_arch.py)."""
    result = scons(project, NVIDIA_SMI=no_gpu)
    assert result.returncode == 0, result.stderr[-3000:]
    flags = gencode(nvcc_lines(result)[0])
    oldest = re.fullmatch(r"arch=compute_(\d+),code=compute_\1", flags[-1])
    assert flags[:-1] == ["arch=compute_80,code=sm_80"] and oldest and int(oldest.group(1)) in NO_GPU_ARCHS
    assert "[opgen] CUDA architectures: no GPU found: sm_80, compute_" in result.stdout


def test_native_builds_for_the_gpus_nvidia_smi_reports(project, tmp_path):
    smi = fake_nvidia_smi(tmp_path, "echo 9.0; echo 8.6; echo 9.0")
    result = scons(project, "--cuda-arch=native", NVIDIA_SMI=smi)
    assert result.returncode == 0, result.stderr[-3000:]
    assert gencode(nvcc_lines(result)[0]) == ["arch=compute_86,code=sm_86", "arch=compute_90,code=sm_90",
                                              "arch=compute_90,code=compute_90"]
    assert re.search(r"\[opgen\] CUDA: on \(nvcc \d+\.\d+; sm_86, sm_90, compute_90\)\n", result.stdout)


@pytest.mark.parametrize("value, message", [
    ("banana", "--cuda-arch=banana: 'banana' is not a GPU architecture (80, sm_80 or 8.0): "
               "give native, all or a list such as 80,90"),
    ("80,12", "nvcc does not support sm_12 (it compiles sm_"),
])
def test_a_bad_value_stops_with_status_2(project, value, message):
    result = scons(project, f"--cuda-arch={value}")
    assert result.returncode == 2, result.stdout[-2000:] + result.stderr
    assert f"scons: *** --cuda-arch={value}: " in result.stderr and message in result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_a_bad_value_stops_without_cuda_too(project):
    result = scons(project, "--cuda-arch=banana", "--cuda=off")
    assert result.returncode == 2 and "'banana' is not a GPU architecture" in result.stderr


# ----- --cublas -----

def fake_cublas(root):
    """A cuBLAS laid out as CUDA 13's wheel: nvidia/cu13/{include,lib}, only libcublas.so.13."""
    (root / "include").mkdir(parents=True)
    (root / "include" / "cublas_v2.h").write_text("")
    (root / "lib").mkdir()
    (root / "lib" / "libcublas.so.13").write_bytes(b"")
    return root


def test_cublas_found_compiles_the_cuda_objects_with_it_and_links_it(project, tmp_path):
    home = fake_cublas(tmp_path / "cu13")
    result = scons(project, "--cublas=on", CUBLAS_HOME=str(home))
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"[opgen] cuBLAS: cuBLAS ? (CUBLAS_HOME: {home / 'lib'})" in result.stdout
    for line in nvcc_lines(result):
        assert "-DOP_WITH_CUBLAS" in line and f"-isystem {home / 'include'}" in line
    link = next(line for line in result.stdout.splitlines() if f"-o {LIBRARY}" in line)
    assert "-l:libcublas.so.13" in link and f"-L{home / 'lib'}" in link and f"-Wl,-rpath={home / 'lib'}" in link
    # Only the CUDA objects see it.
    cpu = next(line for line in result.stdout.splitlines() if "-o build/obj/core/tensor.os" in line)
    assert "OP_WITH_CUBLAS" not in cpu and str(home) not in cpu


def test_cublas_off_and_auto_without_one(project, tmp_path):
    off = scons(project, "--cublas=off")
    assert off.returncode == 0 and "[opgen] cuBLAS: off (--cublas=off)" in off.stdout
    assert not any("OP_WITH_CUBLAS" in line for line in nvcc_lines(off))
    empty = tmp_path / "empty"
    empty.mkdir()
    auto = scons(project, CUBLAS_HOME=str(empty))
    assert auto.returncode == 0
    assert f"[opgen] cuBLAS: off (cuBLAS was not found; looked in {empty} (CUBLAS_HOME: no cublas_v2.h))" in auto.stdout


def test_cublas_on_without_one_stops_with_status_2_saying_where_it_looked(project, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = scons(project, "--cublas=on", CUBLAS_HOME=str(empty))
    assert result.returncode == 2
    assert (f"scons: *** --cublas=on but cuBLAS was not found; looked in {empty} (CUBLAS_HOME: no cublas_v2.h) "
            "(pip install nvidia-cublas, or set CUBLAS_HOME=DIR)") in result.stderr
    without_cuda = scons(project, "--cublas=on", "--cuda=off")
    assert without_cuda.returncode == 2 and "--cublas=on but CUDA is off" in without_cuda.stderr


# ----- cuda_arch= on the plugin's builders (a downstream project against this checkout's runtime) -----

DOWNSTREAM_SCONSTRUCT = """\
import os
import opgen.scons

env = Environment(tools=["default", opgen.scons.tool, "nvcc"], toolpath=[opgen.scons.TOOLPATH],
                  ENV={"PATH": os.environ["PATH"]}, CUDA_ARCH="80")
arch = ARGUMENTS.get("ARCH")
Default(env.OpgenOperatorLibrary("myops", yaml="myops.yaml", kernels=["kernels/scale.cu"],
                                 **({"cuda_arch": arch} if arch else {})))
"""


@pytest.fixture(scope="module")
def downstream(tmp_path_factory):
    if not os.path.isfile(os.path.join(REPO_ROOT, LIBRARY)):
        pytest.skip("the checkout is not built (its runtime is the downstream project's)")
    root = tmp_path_factory.mktemp("cuda_downstream")
    (root / "SConstruct").write_text(DOWNSTREAM_SCONSTRUCT)
    (root / "myops.yaml").write_text("- func: myops::scale(Tensor x, float f=2.0) -> Tensor\n"
                                     "  dispatch:\n    CUDA: scale_cuda\n")
    (root / "kernels").mkdir()
    (root / "kernels" / "scale.cu").write_text("// compiled with nvcc\n")
    return root


def downstream_scons(root, *args):
    return run_scons_loud(root, "--verbose", "-n", *args, timeout=600,
                          env={"NVCC": None, "OPGEN_RUNTIME": REPO_ROOT, "PYTHONPATH": REPO_ROOT, "NVIDIA_SMI": "off"})


def kernel_gencode(result):
    line = next(line for line in result.stdout.splitlines() if "nvcc -o" in line and "kernels/scale.cu" in line)
    return gencode(line)


def test_the_builders_cuda_arch_wins_over_the_environments(downstream):
    own = downstream_scons(downstream, "ARCH=sm_90")
    assert own.returncode == 0, own.stdout[-2000:] + own.stderr[-3000:]
    assert kernel_gencode(own) == ["arch=compute_90,code=sm_90", "arch=compute_90,code=compute_90"]
    environments = downstream_scons(downstream)
    assert environments.returncode == 0, environments.stderr[-3000:]
    assert kernel_gencode(environments) == ["arch=compute_80,code=sm_80", "arch=compute_80,code=compute_80"]


def test_a_bad_cuda_arch_on_a_builder_stops_with_status_2(downstream):
    result = downstream_scons(downstream, "ARCH=banana")
    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-2000:]
    assert "scons: *** OpgenOperatorLibrary('myops'): cuda_arch=banana: 'banana' is not a GPU architecture" in result.stderr
    assert "Traceback" not in result.stderr


# ----- a real cuBLAS, where one is found ($CUBLAS_HOME, the toolkit or pip's wheel) -----

TINY_CUBLAS_SCONSTRUCT = """\
import os
import opgen.scons

env = Environment(tools=["default", "nvcc", "cublas"], toolpath=[opgen.scons.TOOLPATH],
                  ENV={"PATH": os.environ["PATH"]}, CUBLAS_MODE="on", CUDA_ARCH="80")
print("[tiny] " + env["CUBLAS"])
cuda = env.Clone()
env.CublasCompile(cuda)
env.CublasLink(cuda)
cuda.Append(LIBS=["cudart"], LIBPATH=[env["CUDA_HOME"] + "/lib64"])
Default(cuda.SharedLibrary("tiny", ["tiny.cu"]))
"""
TINY_CUBLAS_SOURCE = """\
#include <cublas_v2.h>
extern "C" int tiny_cublas() {
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return 1;
  return cublasDestroy(handle) == CUBLAS_STATUS_SUCCESS ? 0 : 2;
}
"""


def test_a_tiny_cu_calling_cublas_compiles_and_links_against_the_cublas_found(tmp_path):
    """Where the Python running SCons sees a cuBLAS (pip's nvidia-cublas, or $CUBLAS_HOME); skips
    otherwise. Nothing runs: the library is linked and its NEEDED and RUNPATH read."""
    import subprocess
    import sys

    from opgen.scons.toolset.cublas import _nvidia_dirs
    from opgen.scons.toolset.cublas_discovery import find_cublas
    from opgen.scons.toolset.nvcc import _cuda_home

    search = find_cublas(cublas_home=os.environ.get("CUBLAS_HOME", ""), cuda_home=_cuda_home(NVCC),
                         nvidia_dirs=_nvidia_dirs())
    if search.found is None:
        pytest.skip(search.why_not())
    (tmp_path / "SConstruct").write_text(TINY_CUBLAS_SCONSTRUCT)
    (tmp_path / "tiny.cu").write_text(TINY_CUBLAS_SOURCE)
    result = subprocess.run([sys.executable, "-m", "SCons", "-Q"], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [REPO_ROOT, os.environ.get("PYTHONPATH")]))})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    dynamic = subprocess.run(["readelf", "-d", str(tmp_path / "libtiny.so")], capture_output=True, text=True).stdout
    assert re.search(r"NEEDED.*\[libcublas\.so", dynamic), dynamic
    assert search.found.lib_dir in dynamic  # the rpath to cuBLAS's directory
