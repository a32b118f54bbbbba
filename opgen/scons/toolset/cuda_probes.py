"""What the nvcc tool asks the machine: nvcc's version and architectures, and the compute
capabilities of the GPUs present. Answers are remembered across builds (probe_cache.py).

Not a tool, and no SCons: the nvcc tool uses it.
"""
import glob
import os
from typing import Optional

from opgen.scons.toolset import cuda_arch, probe_cache

BOOT_ID = "/proc/sys/kernel/random/boot_id"


def _nvcc_key(nvcc: str, argument: str, cuda_home: str) -> str:
    # nvcc on PATH may be a wrapper script: the toolkit's own nvcc is part of the key.
    return probe_cache.program_key(nvcc, argument, also=[os.path.join(cuda_home, "bin", "nvcc")] if cuda_home else [])


def nvcc_version(nvcc: str, cache_path: Optional[str], cuda_home: str = "") -> str:
    """"13.0" ("?" when nvcc does not say)."""
    text = probe_cache.run(cache_path, [nvcc, "--version"], _nvcc_key(nvcc, "--version", cuda_home))
    return cuda_arch.parse_nvcc_version(text or "")


def nvcc_architectures(nvcc: str, cache_path: Optional[str], cuda_home: str = "") -> Optional[tuple[int, ...]]:
    """The sm_XX nvcc compiles (from `--list-gpu-code`), or None when it cannot list them."""
    text = probe_cache.run(cache_path, [nvcc, "--list-gpu-code"], _nvcc_key(nvcc, "--list-gpu-code", cuda_home))
    codes = cuda_arch.parse_gpu_codes(text or "")
    return codes or None


def gpu_set() -> str:
    """What changes when GPUs come or go: the boot, and the device nodes of this container."""
    try:
        with open(BOOT_ID, encoding="utf-8") as handle:
            boot = handle.read().strip()
    except OSError:
        boot = "?"
    devices = sorted(os.path.basename(p) for p in glob.glob("/dev/nvidia[0-9]*"))
    return f"boot {boot} devices {','.join(devices)}"


def gpu_compute_caps(nvidia_smi: str, cache_path: Optional[str]) -> Optional[tuple[int, ...]]:
    """The compute capabilities of the GPUs present ((90,) for H100s), or None: no nvidia-smi,
    or it failed (no driver, no GPU)."""
    if not nvidia_smi:
        return None
    command = [nvidia_smi, "--query-gpu=compute_cap", "--format=csv,noheader"]
    text = probe_cache.run(cache_path, command, probe_cache.program_key(*command) + " " + gpu_set(), timeout=60)
    return (cuda_arch.parse_compute_caps(text) or None) if text is not None else None
