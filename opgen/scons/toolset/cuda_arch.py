"""Which GPU architectures nvcc compiles for: `--cuda-arch=native|all|LIST` parsed, resolved
against what nvcc supports and the GPUs present, and rendered as nvcc's --generate-code flags.

Pure logic (no SCons, no processes): the nvcc tool feeds it nvcc's and nvidia-smi's answers
(cuda_probes.py), and its tests feed it fakes.

    native  SASS for each GPU present (nvidia-smi) plus PTX of the newest; with no GPU, SASS for
            sm_80 (Ampere and Ada) plus PTX of the oldest of Volta to Hopper nvcc supports
    all     SASS for every architecture nvcc lists from sm_70 on, plus PTX of the newest
    LIST    SASS for each one ("80,90", "sm_80 sm_90", "8.0;9.0"), plus PTX of the newest

The result is sorted and deduplicated, so the command line (and ccache's keys) only change when
the choice does.
"""
import re
from typing import NamedTuple, Optional, Sequence

# Without a GPU to ask, the build covers Volta to Hopper (NO_GPU_ARCHS, as far as nvcc supports
# them) at the cost of about one architecture: SASS for sm_80, which every Ampere and Ada GPU
# runs (SASS runs on its major version at the same or a higher minor: 8.0 to 8.9), and PTX of
# the oldest, which the driver compiles once for any other GPU. One SASS for each of them made
# the CUDA compiles 37% of a cold build, and 75,80,90 29%; this makes them 20%, against 18% for
# the sm_75 alone that nvcc compiled when given no architecture (docs/cuda.md).
NO_GPU_ARCHS = (70, 75, 80, 86, 89, 90)
NO_GPU_SASS = 80
OLDEST_OF_ALL = 70  # `all` starts at Volta, as the no-GPU list does
MODES = ("native", "all")
_NUMBER = re.compile(r"^(?:sm_|compute_)?(\d{2,3})$")
_DOTTED = re.compile(r"^(\d{1,2})\.(\d)$")


class ArchError(ValueError):
    """A --cuda-arch value that cannot be built: its message says why, for the user."""


class Request(NamedTuple):
    """A parsed --cuda-arch: a mode ("native", "all") or a list of architectures."""
    mode: str
    archs: tuple[int, ...] = ()


class Architectures(NamedTuple):
    """What nvcc compiles: SASS for each of ``sass``, PTX of ``ptx``; ``notes`` say what was
    left out and why (for the build's notices)."""
    sass: tuple[int, ...]
    ptx: int
    notes: tuple[str, ...] = ()

    def gencode_flags(self) -> list[str]:
        # The long spelling of -gencode: ccache (4.7) takes any flag starting with -g for debug
        # info and then hashes the working directory, so no other checkout (a fresh clone in CI)
        # hit an nvcc compile, a minute each for the pointwise kernels.
        flags = [f"--generate-code=arch=compute_{arch},code=sm_{arch}" for arch in self.sass]
        return flags + [f"--generate-code=arch=compute_{self.ptx},code=compute_{self.ptx}"]

    def describe(self) -> str:
        return ", ".join([f"sm_{arch}" for arch in self.sass] + [f"compute_{self.ptx}"])


def parse_arch(token: str) -> int:
    """80, sm_80, compute_80 or 8.0 -> 80."""
    text = token.strip().lower()
    number = _NUMBER.match(text)
    if number:
        return int(number.group(1))
    dotted = _DOTTED.match(text)
    if dotted:
        return int(dotted.group(1)) * 10 + int(dotted.group(2))
    if re.match(r"^(sm_|compute_)?\d+\.?\d*[a-z]$", text):
        raise ArchError(f"'{token}': architecture-specific targets (sm_90a) are not supported; give 90")
    raise ArchError(f"'{token}' is not a GPU architecture (80, sm_80 or 8.0)")


def parse(value: str) -> Request:
    """native, all, or a list of architectures separated by commas, semicolons or spaces."""
    text = str(value).strip().lower()
    if text in MODES:
        return Request(text)
    tokens = [t for t in re.split(r"[,;\s]+", text) if t]
    if not tokens:
        raise ArchError("it is empty: give native, all or a list such as 80,90")
    try:
        return Request("list", tuple(sorted({parse_arch(token) for token in tokens})))
    except ArchError as exc:
        raise ArchError(f"{exc}: give native, all or a list such as 80,90") from None


def parse_gpu_codes(text: str) -> tuple[int, ...]:
    """`nvcc --list-gpu-code` (sm_75\\nsm_80...) -> (75, 80, ...); variants such as sm_90a are left out."""
    return tuple(sorted({int(m) for m in re.findall(r"^\s*sm_(\d+)\s*$", text, re.MULTILINE)}))


def parse_compute_caps(text: str) -> tuple[int, ...]:
    """`nvidia-smi --query-gpu=compute_cap --format=csv,noheader` (one 9.0 a GPU) -> (90,)."""
    caps = set()
    for line in text.splitlines():
        match = _DOTTED.match(line.strip())
        if match:
            caps.add(int(match.group(1)) * 10 + int(match.group(2)))
    return tuple(sorted(caps))


def parse_nvcc_version(text: str) -> str:
    """`nvcc --version` -> "13.0" ("?" when it says no release)."""
    match = re.search(r"release (\d+\.\d+)", text)
    return match.group(1) if match else "?"


def _names(archs: Sequence[int]) -> str:
    return ", ".join(f"sm_{arch}" for arch in archs)


def resolve(request: Request, supported: Optional[Sequence[int]], gpus: Optional[Sequence[int]]) -> Architectures:
    """The architectures to build. ``supported``: what nvcc lists (None: it could not say, so
    nothing is checked); ``gpus``: the compute capabilities present (None or empty: no GPU)."""
    if request.mode == "list":
        unknown = [arch for arch in request.archs if supported is not None and arch not in supported]
        if unknown:
            raise ArchError(f"nvcc does not support {_names(unknown)} (it compiles {_names(supported)})")
        return Architectures(request.archs, max(request.archs))
    if request.mode == "all":
        if supported is None:
            raise ArchError("all: nvcc does not list its architectures (--list-gpu-code); give a list such as 80,90")
        archs = tuple(arch for arch in supported if arch >= OLDEST_OF_ALL)
        if not archs:
            raise ArchError(f"all: nvcc compiles nothing from sm_{OLDEST_OF_ALL} on ({_names(supported)})")
        return Architectures(archs, max(archs))
    if gpus:
        present = _for_gpus(tuple(sorted(set(gpus))), supported)
        if present is not None:
            return present
        return _without_gpu(supported, f"nvcc cannot compile for the GPUs' {_names(sorted(set(gpus)))}")
    return _without_gpu(supported, "no GPU found")


def _for_gpus(gpus: tuple[int, ...], supported: Optional[Sequence[int]]) -> Optional[Architectures]:
    """SASS of each GPU nvcc can compile for; a GPU newer than nvcc's newest runs the PTX of
    that newest (JIT-compiled once). None when nvcc can build for none of them."""
    if supported is None:
        return Architectures(gpus, max(gpus))
    sass = tuple(gpu for gpu in gpus if gpu in supported)
    older = [arch for arch in supported if arch <= max(gpus)]
    if not older:
        return None
    notes = tuple(f"nvcc {('cannot compile for' if gpu < min(supported) else 'has no SASS for')} the GPU's "
                  f"sm_{gpu}" for gpu in gpus if gpu not in supported)
    return Architectures(sass, max(older), notes)


def _without_gpu(supported: Optional[Sequence[int]], why: str) -> Architectures:
    archs = tuple(arch for arch in NO_GPU_ARCHS if supported is None or arch in supported)
    if not archs:
        raise ArchError(f"nvcc supports none of {_names(NO_GPU_ARCHS)} (it compiles {_names(supported)}); "
                        f"give a list such as --cuda-arch={supported[-1] if supported else 90}")
    sass = NO_GPU_SASS if NO_GPU_SASS in archs else archs[-1]
    chosen = Architectures((sass,), archs[0])
    return Architectures(chosen.sass, chosen.ptx,
                         (f"{why}: {chosen.describe()} (Volta to Hopper: SASS for Ampere and Ada, PTX for the others; "
                          "--cuda-arch=LIST for more SASS)",))
