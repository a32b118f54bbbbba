"""The CUDA build (scons --cuda=auto|on|off, opgen/scons/toolset/nvcc.py).

Cheap checks run in a temp copy of the build inputs with --codegen-only or -n (nothing is
compiled): which translation units each mode generates, the nvcc command line, and the exit
status when nvcc is required but missing. The real compile and link reuse the checkout's own
build (the default build is --cuda=auto, so with nvcc installed this is the build every other
test uses; ccache makes it cheap after the first time). Needs nvcc; skips without it.
"""
import glob
import os
import re
import shutil
import subprocess

import pytest

from helpers import REPO_ROOT, copy_project, run_scons_loud

LIBRARY = os.path.join("build", "lib", "libopdispatch.so")
GEN_OPS = os.path.join("build", "gen", "ops")
CUDA_SOURCES = sorted(os.path.basename(p) for p in glob.glob(os.path.join(REPO_ROOT, "csrc", "native", "cuda", "*.cu")))
MISSING_NVCC = "/nonexistent/bin/nvcc"

NVCC = os.environ.get("NVCC") or shutil.which("nvcc")
pytestmark = pytest.mark.skipif(not NVCC or not os.access(NVCC, os.X_OK), reason="nvcc is not installed")


def scons(root, *args, timeout=900, **env_overrides):
    """SCons without the caller's NVCC (a test names its own in ``env_overrides``)."""
    return run_scons_loud(root, "--verbose", *args, env={"NVCC": None, **env_overrides}, timeout=timeout)


def ok(result):
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    return result


def generated_cuda_units(root):
    return sorted(os.path.basename(p) for p in glob.glob(os.path.join(root, GEN_OPS, "*_CUDA.cpp")))


def expected_cuda_units():
    """The CUDA-key files opgen's own layout names: one per group with a CUDA kernel."""
    from opgen.gen.engine.config import DEFAULT_KEYS, CodegenConfig
    from opgen.gen.group import GroupCodegen
    from opgen.model import load_model
    from opgen.model.dispatch_keys import DispatchKey

    model = load_model(os.path.join(REPO_ROOT, "yaml", "native_functions.yaml"),
                       os.path.join(REPO_ROOT, "yaml", "tags.yaml"))
    config = CodegenConfig(keys=DEFAULT_KEYS + (DispatchKey.CUDA,))
    files = [f for g in model.operator_groups for f in GroupCodegen(g, model.indices, config).files()]
    return sorted(os.path.basename(f) for f in files if f.endswith("_CUDA.cpp"))


@pytest.fixture(scope="module")
def inputs_copy(tmp_path_factory):
    """SConstruct, site_scons, opgen, yaml and csrc in a temp dir: enough to generate and to
    print (-n) every compile command."""
    return copy_project(tmp_path_factory.mktemp("cuda_project"))


# ----- generation per mode (temp copy, --codegen-only) -----

def test_cuda_off_generates_no_cuda_units(inputs_copy):
    result = ok(scons(inputs_copy, "--cuda=off", "--codegen-only"))
    assert "[opgen] CUDA: off" in result.stdout
    assert generated_cuda_units(inputs_copy) == []
    assert os.path.isfile(inputs_copy / GEN_OPS / "add_CPU.cpp")


def test_cuda_on_generates_the_cuda_unit_of_every_cuda_kernel(inputs_copy):
    result = ok(scons(inputs_copy, "--cuda=on", "--codegen-only"))
    assert "[opgen] CUDA: on" in result.stdout
    units = generated_cuda_units(inputs_copy)
    assert units == expected_cuda_units()
    assert {"add_CUDA.cpp", "empty_CUDA.cpp", "sum_CUDA.cpp", "mm_CUDA.cpp"} <= set(units)
    text = (inputs_copy / GEN_OPS / "empty_CUDA.cpp").read_text()
    assert "OP_LIBRARY_IMPL(aten, CUDA, m)" in text and "native::empty_cuda(" in text
    # Switching back removes them again: the CUDA units belong to the CUDA configuration only.
    ok(scons(inputs_copy, "--cuda=off", "--codegen-only"))
    assert generated_cuda_units(inputs_copy) == []


def test_cuda_auto_follows_nvcc(inputs_copy):
    found = ok(scons(inputs_copy, "--cuda=auto", "--codegen-only", "-n", NVCC=NVCC))
    assert re.search(r"\[opgen\] CUDA: on \(nvcc \d+\.\d+; (sm_\d+, )*compute_\d+\)\n", found.stdout), found.stdout
    missing = ok(scons(inputs_copy, "--cuda=auto", "--codegen-only", "-n", NVCC=MISSING_NVCC))
    assert f"CUDA is off: NVCC={MISSING_NVCC} is not an executable file" in missing.stdout
    assert "[opgen] CUDA: off" in missing.stdout


def test_cuda_on_without_nvcc_fails_clearly_with_status_2(inputs_copy):
    result = scons(inputs_copy, "--cuda=on", "--codegen-only", NVCC=MISSING_NVCC)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"--cuda=on but NVCC={MISSING_NVCC} is not an executable file" in result.stderr
    assert "Traceback" not in result.stderr


def test_cuda_option_is_in_the_help(inputs_copy):
    result = ok(scons(inputs_copy, "-h"))
    for option in ("--cuda=auto|on|off", "--cuda-arch=native|all|LIST", "--cublas=auto|on|off"):
        assert option in result.stdout, option


def test_nvcc_command_line(inputs_copy):
    """-n prints what a cold build would run: every .cu through nvcc (and ccache when it is
    installed), with the project's flags, include paths and OP_WITH_CUDA."""
    result = ok(scons(inputs_copy, "--cuda=on", "-n", LIBRARY))
    lines = {}
    for line in result.stdout.splitlines():
        match = re.search(r"nvcc -o build/obj/native/cuda/(\w+)\.os -c ", line)
        if match:
            lines[match.group(1)] = line
    assert sorted(f"{name}.cu" for name in lines) == CUDA_SOURCES
    ccache = shutil.which("ccache")
    for name, line in lines.items():
        for flag in ("-Xcompiler -fPIC", "-std=c++17", "-O2", "-DOP_WITH_CUDA", "-Icsrc", "-Ibuild/gen"):
            assert flag in line, (flag, line)
        assert line.endswith(f"csrc/native/cuda/{name}.cu")
        if ccache:
            assert line.startswith(f"{ccache} "), line
    link = next(line for line in result.stdout.splitlines() if f"-o {LIBRARY}" in line)
    assert "-lcudart" in link and "-Wl,-rpath=" in link and "native/cuda/pointwise_kernels.os" in link


# ----- the real build (the checkout's own build/) -----

@pytest.fixture(scope="module")
def cuda_library():
    """build/lib/libopdispatch.so of the checkout, built with --cuda=on: the same build as the
    default (auto) one on this machine, so usually up to date already."""
    ok(scons(REPO_ROOT, "-j2", "--cuda=on", LIBRARY))
    return os.path.join(REPO_ROOT, LIBRARY)


def test_every_cuda_source_compiles_to_an_object(cuda_library):
    for name in CUDA_SOURCES + ["cuda_allocator.cpp", "cuda_context.cpp", "empty.cpp"]:
        obj = os.path.join(REPO_ROOT, "build", "obj", "native", "cuda", os.path.splitext(name)[0] + ".os")
        assert os.path.getsize(obj) > 0, obj
    assert generated_cuda_units(REPO_ROOT) == expected_cuda_units()


def test_library_links_cudart_and_holds_the_cuda_kernels(cuda_library):
    dynamic = subprocess.run(["readelf", "-d", cuda_library], capture_output=True, text=True, check=True).stdout
    assert re.search(r"NEEDED.*\[libcudart\.so", dynamic)
    symbols = subprocess.run(["nm", "-C", cuda_library], capture_output=True, text=True, check=True).stdout
    assert "op::cuda::is_available()" in symbols and "op::native::empty_cuda(" in symbols
    # One fat binary registration per .cu file, and the kernels of each file.
    assert symbols.count("__sti____cudaRegisterAll()") == len(CUDA_SOURCES)
    for kernel in ("elementwise_kernel", "reduce_kernel", "gemm_kernel", "write_kernel"):
        assert kernel in symbols, kernel


def test_every_stub_has_a_cuda_loop():
    """Each stub declared in stubs.h is registered for CUDA by some .cu file."""
    with open(os.path.join(REPO_ROOT, "csrc", "native", "stubs.h"), encoding="utf-8") as handle:
        declared = set(re.findall(r"OP_DECLARE_STUB\((\w+),", handle.read()))
    registered = set()
    for path in glob.glob(os.path.join(REPO_ROOT, "csrc", "native", "cuda", "*.cu")):
        with open(path, encoding="utf-8") as handle:
            registered |= set(re.findall(r"OP_REGISTER_STUB\((\w+), CUDA,", handle.read()))
    assert declared and declared == registered


def test_cuda_objects_depend_on_the_headers_they_include(cuda_library):
    """The .cu scanner: editing loops.cuh or a core header rebuilds the CUDA objects."""
    target = os.path.join("build", "obj", "native", "cuda", "pointwise_kernels.os")
    result = ok(scons(REPO_ROOT, "--cuda=on", "-n", "--tree=prune", target))
    for header in ("csrc/native/cuda/loops.cuh", "csrc/core/tensor_iterator.h", "csrc/native/stubs.h"):
        assert header in result.stdout, header
