"""SCons tool: find cuBLAS for the CUDA objects that call it (load it after the nvcc tool).

Construction variables:
  CUBLAS_MODE        "auto" (default: use cuBLAS when CUDA is built and cuBLAS is found), "on"
                     (required: stop the build with exit status 2 without it) or "off".
  CUBLAS_HOME        a cuBLAS of your choice (include/cublas_v2.h, lib64/ or lib/libcublas.so*):
                     when set (or the CUBLAS_HOME environment variable is), the only place looked.
                     Otherwise the CUDA toolkit ($CUDA_HOME, from the nvcc tool), then pip's
                     nvidia-cublas in the Python running SCons (cublas_discovery.py).
  CUBLAS             set by this tool: what was found, for a build's notice line
                     ("cuBLAS 13.1.0 (pip: /path/nvidia/cu13/lib)"), or "" when cuBLAS is not used.
  CUBLAS_OFF_REASON  set by this tool: why it is not used ("--cublas=off", "CUDA is off", where it looked).
  CUBLAS_INCLUDE_DIR, CUBLAS_LIB_DIR, CUBLAS_LIB  set by this tool: the header directory, the
                     library's directory and its link name ("cublas", or ":libcublas.so.13" when
                     only the versioned file is there, as in the wheels).

``env.CublasActive()`` tells whether cuBLAS is used. ``env.CublasCompile(other)`` gives the
environment ``other`` (a clone the caller owns) the header directory, for g++ and nvcc alike;
``env.CublasLink(other)`` the library, with an rpath to its directory. The define that turns
the calls on is the caller's (this repository's is OP_WITH_CUBLAS), as with the blas tool.
"""
import importlib.util
import os

from opgen.scons.toolset.cublas_discovery import find_cublas
from opgen.scons.toolset.messages import fail
from opgen.scons.toolset.programs import MODES, mode_of


def _nvidia_dirs():
    """The directories of the `nvidia` namespace package (pip's CUDA wheels), found without
    importing anything of it."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return []
    return list(spec.submodule_search_locations or []) if spec else []


def _active(env):
    return bool(env.get("CUBLAS"))


def _compile(env, other):
    if _active(env):
        other.Append(CCFLAGS=["-isystem", env["CUBLAS_INCLUDE_DIR"]], NVCCFLAGS=["-isystem", env["CUBLAS_INCLUDE_DIR"]])
    return other


def _link(env, other):
    if _active(env):
        other.Append(LIBS=[env["CUBLAS_LIB"]], LIBPATH=[env["CUBLAS_LIB_DIR"]], RPATH=[env["CUBLAS_LIB_DIR"]])
    return other


def _search(env):
    """(Cublas or None, why not)."""
    cuda_active = getattr(env, "CudaActive", None)
    if not (cuda_active and cuda_active()):
        return None, "CUDA is off"
    home = env.subst("$CUBLAS_HOME") or os.environ.get("CUBLAS_HOME", "")
    search = find_cublas(cublas_home=home, cuda_home=env.get("CUDA_HOME", ""),
                         nvidia_dirs=[] if home else _nvidia_dirs(), cuda_version=env.get("CUDA_VERSION", ""))
    return search.found, search.why_not()


def exists(env):
    return True


def generate(env):
    env.SetDefault(CUBLAS_MODE="auto", CUBLAS_HOME="")
    mode = mode_of(env, "CUBLAS_MODE")
    if mode not in MODES:
        fail(f"--cublas={mode} is not one of {', '.join(MODES)}")
    found, why_not = _search(env) if mode != "off" else (None, "--cublas=off")
    if found is None and mode == "on":
        fail(f"--cublas=on but {why_not} (pip install nvidia-cublas, or set CUBLAS_HOME=DIR)"
             if why_not != "CUDA is off" else "--cublas=on but CUDA is off (--cuda=off, or nvcc was not found)")
    env["CUBLAS"] = found.describe() if found else ""
    env["CUBLAS_OFF_REASON"] = "" if found else why_not
    env["CUBLAS_INCLUDE_DIR"], env["CUBLAS_LIB_DIR"], env["CUBLAS_LIB"] = \
        (found.include_dir, found.lib_dir, found.link_name) if found else ("", "", "")
    env.AddMethod(_active, "CublasActive")
    env.AddMethod(_compile, "CublasCompile")
    env.AddMethod(_link, "CublasLink")
