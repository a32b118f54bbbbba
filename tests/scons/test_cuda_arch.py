"""--cuda-arch's logic (opgen/scons/toolset/cuda_arch.py) and its probes (cuda_probes.py,
probe_cache.py) on fake answers of nvcc and nvidia-smi: no GPU, no nvcc needed."""
import os
import stat

import pytest

from opgen.scons.toolset import cuda_arch, cuda_probes, probe_cache
from opgen.scons.toolset.cuda_arch import ArchError, Request, parse, resolve

# `nvcc --list-gpu-code` of CUDA 13.0 (no sm_70: Volta left with CUDA 12) and of CUDA 12.4.
NVCC_13 = (75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121)
NVCC_12 = (50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90)


@pytest.mark.parametrize("value, expected", [
    ("native", Request("native")),
    (" ALL ", Request("all")),
    ("80,90", Request("list", (80, 90))),
    ("90,80,80", Request("list", (80, 90))),                 # sorted, deduplicated
    ("sm_90 sm_80", Request("list", (80, 90))),
    ("9.0;8.6", Request("list", (86, 90))),
    ("compute_75, 10.0", Request("list", (75, 100))),
    ("120", Request("list", (120,))),
])
def test_parse(value, expected):
    assert parse(value) == expected


@pytest.mark.parametrize("value, message", [
    ("banana", "'banana' is not a GPU architecture (80, sm_80 or 8.0): give native, all or a list such as 80,90"),
    ("", "it is empty"),
    (" , ", "it is empty"),
    ("80,nine", "'nine' is not a GPU architecture"),
    ("sm_90a", "architecture-specific targets (sm_90a) are not supported; give 90"),
    ("8", "'8' is not a GPU architecture"),
    ("8.10", "'8.10' is not a GPU architecture"),
])
def test_parse_rejects_with_a_message(value, message):
    with pytest.raises(ArchError) as error:
        parse(value)
    assert message in str(error.value)


def test_a_list_gives_sass_of_each_and_ptx_of_the_newest():
    chosen = resolve(parse("90,80"), NVCC_13, gpus=None)
    assert chosen.sass == (80, 90) and chosen.ptx == 90
    assert chosen.gencode_flags() == ["--generate-code=arch=compute_80,code=sm_80", "--generate-code=arch=compute_90,code=sm_90",
                                      "--generate-code=arch=compute_90,code=compute_90"]
    # No flag starts with -g: ccache would take it for debug info and hash the working directory.
    assert not any(flag.startswith("-g") for flag in chosen.gencode_flags())
    assert chosen.describe() == "sm_80, sm_90, compute_90"


def test_a_list_nvcc_cannot_compile_is_an_error():
    with pytest.raises(ArchError, match=r"nvcc does not support sm_70 \(it compiles sm_75, sm_80"):
        resolve(parse("70,80"), NVCC_13, gpus=None)
    assert resolve(parse("70,80"), NVCC_12, gpus=None).sass == (70, 80)
    assert resolve(parse("70"), None, gpus=None).sass == (70,)  # nvcc cannot say: nothing to check against


def test_native_builds_for_the_gpus_present():
    chosen = resolve(parse("native"), NVCC_13, gpus=(90, 86, 90))
    assert chosen.sass == (86, 90) and chosen.ptx == 90 and not chosen.notes
    assert chosen.describe() == "sm_86, sm_90, compute_90"


def test_native_without_a_gpu_covers_volta_to_hopper_as_far_as_nvcc_goes():
    """SASS for Ampere and Ada (sm_80), PTX of the oldest nvcc compiles (CUDA 13 dropped Volta)."""
    for gpus in (None, ()):
        chosen = resolve(parse("native"), NVCC_13, gpus)
        assert chosen.sass == (80,) and chosen.ptx == 75
        assert chosen.gencode_flags() == ["--generate-code=arch=compute_80,code=sm_80",
                                          "--generate-code=arch=compute_75,code=compute_75"]
        assert chosen.notes == ("no GPU found: sm_80, compute_75 (Volta to Hopper: SASS for Ampere and Ada, PTX for "
                                "the others; --cuda-arch=LIST for more SASS)",)
    older = resolve(parse("native"), NVCC_12, None)
    assert older.sass == (80,) and older.ptx == 70
    only_hopper = resolve(parse("native"), (90, 100), None)
    assert only_hopper.sass == (90,) and only_hopper.ptx == 90
    with pytest.raises(ArchError, match="nvcc supports none of sm_70"):
        resolve(parse("native"), (100, 120), None)


def test_native_on_a_gpu_newer_than_nvcc_runs_the_newest_ptx():
    chosen = resolve(parse("native"), NVCC_12, gpus=(100,))
    assert chosen.sass == () and chosen.ptx == 90
    assert chosen.gencode_flags() == ["--generate-code=arch=compute_90,code=compute_90"]
    assert chosen.notes == ("nvcc has no SASS for the GPU's sm_100",)


def test_native_on_a_gpu_older_than_nvcc_falls_back_to_the_default_list():
    chosen = resolve(parse("native"), NVCC_13, gpus=(60,))
    assert chosen.sass == (80,) and chosen.ptx == 75
    assert chosen.notes[0].startswith("nvcc cannot compile for the GPUs' sm_60: sm_80, compute_75")


def test_all_is_every_architecture_from_volta_on():
    chosen = resolve(parse("all"), NVCC_12, gpus=None)
    assert chosen.sass == (70, 72, 75, 80, 86, 87, 89, 90) and chosen.ptx == 90
    assert resolve(parse("all"), NVCC_13, gpus=None).sass == NVCC_13
    with pytest.raises(ArchError, match="does not list its architectures"):
        resolve(parse("all"), None, gpus=None)


def test_parsing_nvcc_and_nvidia_smi_answers():
    assert cuda_arch.parse_gpu_codes("sm_75\nsm_80\nsm_90a\nsm_90\n") == (75, 80, 90)
    assert cuda_arch.parse_compute_caps("9.0\n9.0\n8.6\n") == (86, 90)
    assert cuda_arch.parse_compute_caps("No devices were found\n") == ()
    assert cuda_arch.parse_nvcc_version("Cuda compilation tools, release 13.0, V13.0.88") == "13.0"


# ----- the probes: fake programs, answers kept between builds -----

def fake_program(path, script):
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_probes_read_fake_programs_and_remember_their_answers(tmp_path):
    calls = tmp_path / "calls"
    nvcc = fake_program(tmp_path / "nvcc", f'echo "$1" >> {calls}\n'
                        'case "$1" in --version) echo "Cuda compilation tools, release 12.4, V12.4.1";;\n'
                        '  --list-gpu-code) printf "sm_80\\nsm_90\\n";; esac\n')
    smi = fake_program(tmp_path / "nvidia-smi", f'echo smi >> {calls}\necho 9.0\n')
    cache = str(tmp_path / "probes.json")
    for _ in range(2):
        assert cuda_probes.nvcc_version(nvcc, cache) == "12.4"
        assert cuda_probes.nvcc_architectures(nvcc, cache) == (80, 90)
        assert cuda_probes.gpu_compute_caps(smi, cache) == (90,)
    assert calls.read_text().split() == ["--version", "--list-gpu-code", "smi"]  # once each
    # A later build (a fresh process) reads the file instead of running them.
    probe_cache._loaded.cache_clear()
    assert cuda_probes.gpu_compute_caps(smi, cache) == (90,)
    assert calls.read_text().split() == ["--version", "--list-gpu-code", "smi"]
    # A changed program is asked again.
    fake_program(tmp_path / "nvidia-smi", f'echo smi >> {calls}\necho 8.6; echo 9.0\n')
    assert cuda_probes.gpu_compute_caps(smi, cache) == (86, 90)


def test_a_failing_nvidia_smi_means_no_gpu(tmp_path):
    smi = fake_program(tmp_path / "nvidia-smi", 'echo "NVIDIA-SMI has failed" >&2; exit 9\n')
    assert cuda_probes.gpu_compute_caps(smi, str(tmp_path / "probes.json")) is None
    assert cuda_probes.gpu_compute_caps("", None) is None
    assert cuda_probes.gpu_compute_caps(str(tmp_path / "missing"), None) is None


def test_an_unwritable_cache_still_answers(tmp_path):
    nvcc = fake_program(tmp_path / "nvcc", 'printf "sm_90\\n"\n')
    os.chmod(tmp_path, 0o500)
    try:
        assert cuda_probes.nvcc_architectures(nvcc, str(tmp_path / "sub" / "probes.json")) == (90,)
    finally:
        os.chmod(tmp_path, 0o700)
