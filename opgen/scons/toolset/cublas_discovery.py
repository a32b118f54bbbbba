"""Where cuBLAS is: $CUBLAS_HOME, the CUDA toolkit, or pip's nvidia-cublas wheel.

Pure (no SCons, no imports of the wheel): the cublas tool passes the directories to look in,
and the tests pass fake trees. Each place needs include/cublas_v2.h and a libcublas.so beside
a lib directory; the wheels ship only the versioned libcublas.so.13 (no unversioned link), which
is then linked by its name (``-l:libcublas.so.13``).

Wheel layouts: CUDA 13's nvidia-cublas puts nvidia/cu13/{include,lib}, CUDA 12's
nvidia-cublas-cu12 nvidia/cublas/{include,lib}.
"""
import os
import re
from typing import NamedTuple, Optional, Sequence

HEADER = "cublas_v2.h"
_VERSIONED = re.compile(r"^libcublas\.so\.(\d+)$")


class Cublas(NamedTuple):
    """A cuBLAS to compile and link against."""
    version: str        # "13.10.0", from cublas_api.h ("?" when it does not say)
    origin: str         # "CUDA toolkit", "CUBLAS_HOME", "pip"
    include_dir: str
    lib_dir: str
    link_name: str      # for LIBS: "cublas", or ":libcublas.so.13" where only the versioned file is

    def describe(self) -> str:
        return f"cuBLAS {self.version} ({self.origin}: {self.lib_dir})"


class Search(NamedTuple):
    """What find_cublas found (None: nothing usable) and, place by place, where it looked."""
    found: Optional[Cublas]
    looked: tuple[str, ...]

    def why_not(self) -> str:
        return "cuBLAS was not found; looked in " + "; ".join(self.looked)


def header_version(include_dir: str) -> str:
    """CUBLAS_VER_MAJOR.MINOR.PATCH of cublas_api.h ("?" when it does not say)."""
    try:
        with open(os.path.join(include_dir, "cublas_api.h"), encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return "?"
    parts = [re.search(rf"#define\s+CUBLAS_VER_{part}\s+(\d+)", text) for part in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(p.group(1) for p in parts) if all(parts) else "?"


def link_name(lib_dir: str) -> Optional[str]:
    """How to link the library in ``lib_dir``: "cublas" (libcublas.so), ":libcublas.so.N" (only
    the versioned file, the newest N), or None."""
    if os.path.exists(os.path.join(lib_dir, "libcublas.so")):
        return "cublas"
    try:
        names = os.listdir(lib_dir)
    except OSError:
        return None
    versions = sorted((int(m.group(1)), name) for name in names if (m := _VERSIONED.match(name)))
    return f":{versions[-1][1]}" if versions else None


def _in_tree(origin: str, include_dir: str, lib_dirs: Sequence[str], cuda_major: Optional[str]):
    """(Cublas or None, what was wrong)."""
    if not os.path.isfile(os.path.join(include_dir, HEADER)):
        return None, f"no {HEADER}"
    for lib_dir in lib_dirs:
        name = link_name(lib_dir)
        if name is None:
            continue
        version = header_version(include_dir)
        if cuda_major and version != "?" and version.split(".")[0] != cuda_major:
            return None, f"cuBLAS {version} needs CUDA {version.split('.')[0]}, nvcc is CUDA {cuda_major}"
        return Cublas(version, origin, include_dir, lib_dir, name), ""
    return None, "no libcublas.so in " + " or ".join(lib_dirs)


def _wheel_trees(nvidia_dir: str) -> list[str]:
    """nvidia/cu13, nvidia/cu12, ... (newest first), then nvidia/cublas."""
    try:
        names = os.listdir(nvidia_dir)
    except OSError:
        return []
    cuda = sorted((n for n in names if re.match(r"^cu\d+$", n)), key=lambda n: int(n[2:]), reverse=True)
    return [os.path.join(nvidia_dir, name) for name in cuda + (["cublas"] if "cublas" in names else [])]


def find_cublas(cublas_home: str = "", cuda_home: str = "", nvidia_dirs: Sequence[str] = (),
                cuda_version: str = "") -> Search:
    """The first usable cuBLAS of: ``cublas_home`` (when set, the only place looked), the toolkit
    at ``cuda_home``, the wheels under ``nvidia_dirs`` (the ``nvidia`` package's directories of
    the Python running the build). ``cuda_version`` ("13.0") rejects a cuBLAS of another major."""
    major = cuda_version.split(".")[0] if cuda_version and cuda_version[0].isdigit() else None
    if cublas_home:
        places = [("CUBLAS_HOME", cublas_home)]
    else:
        places = ([("CUDA toolkit", cuda_home)] if cuda_home else []) + \
                 [("pip", tree) for nvidia_dir in nvidia_dirs for tree in _wheel_trees(nvidia_dir)]
    looked = []
    for origin, root in places:
        found, problem = _in_tree(origin, os.path.join(root, "include"),
                                  [os.path.join(root, "lib64"), os.path.join(root, "lib")], major)
        if found:
            return Search(found, tuple(looked))
        looked.append(f"{root} ({origin}: {problem})")
    if not cublas_home and not any(origin == "pip" for origin, _ in places):
        looked.append("pip's nvidia-cublas (not installed in the Python running SCons)")
    return Search(None, tuple(looked))
