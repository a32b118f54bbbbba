"""SCons tool: compile CUDA sources (.cu) into shared objects with nvcc.

Construction variables:
  CUDA_MODE       "auto" (default: build CUDA when nvcc is found), "on" (required: stop the
                  build with exit status 2 when nvcc is missing) or "off".
  NVCC            set by this tool: nvcc's absolute path, or "" when CUDA is not built. An NVCC
                  environment variable (or construction variable) names the binary to use.
  CUDA_HOME       the toolkit root (include/, lib64/): $CUDA_HOME, else the directory above the
                  real nvcc, else /usr/local/cuda.
  NVCCFLAGS       flags for every .cu compile (-Xcompiler -fPIC -std=c++17 -O2).
  CUDA_SHOBJCOM   the command: ``env.SharedObject("x.cu")`` (and SharedLibrary sources) use it.

``env.CudaActive()`` tells whether CUDA is built. Compiles go through ccache like C++ ones
(``$( $CCACHE $)``, set by the ccache tool), and .cu files get SCons' C scanner, so editing a
header they include rebuilds them.
"""
import os

import SCons.Action
import SCons.Builder
import SCons.Defaults
import SCons.Scanner.C
import SCons.Tool

from opgen.scons.toolset.programs import compiler_identity, find_program, mode_of

SUFFIX = ".cu"
DEFAULT_CUDA_HOME = "/usr/local/cuda"


def _find_nvcc(env, mode):
    requested = env.get("NVCC") or os.environ.get("NVCC", "")
    if requested:  # a name on PATH or a path (WhereIs takes absolute paths as they are)
        problem = f"NVCC={requested} is not an executable file"
    else:
        problem = "nvcc was not found on PATH (set NVCC=/path/to/nvcc)"
    path = find_program(env, "cuda", mode, requested or "nvcc", problem)
    if not path and requested and mode == "auto":
        print(f"[opgen] CUDA is off: {problem}")
    return path


def _cuda_home(nvcc):
    """Where cuda_runtime.h and libcudart live (nvcc may be a wrapper script elsewhere)."""
    candidates = [os.environ.get("CUDA_HOME", ""), os.path.dirname(os.path.dirname(os.path.realpath(nvcc))),
                  DEFAULT_CUDA_HOME]
    for root in candidates:
        if root and os.path.isfile(os.path.join(root, "include", "cuda_runtime.h")):
            return root
    return DEFAULT_CUDA_HOME


def _depend_on_nvcc(target, source, env):
    # .cu objects depend on nvcc's version, as C/C++ objects do on their compiler's.
    env.Depends(target, env.Value(compiler_identity(env, "NVCC")))
    return target, source


def _active(env):
    return bool(env.get("NVCC"))


def exists(env):
    return True


def generate(env):
    env.SetDefault(CUDA_MODE="auto")
    env["NVCC"] = _find_nvcc(env, mode_of(env, "CUDA_MODE"))
    env.AddMethod(_active, "CudaActive")
    if not env["NVCC"]:
        return
    env["CUDA_HOME"] = _cuda_home(env["NVCC"])
    env.SetDefault(NVCCFLAGS=["-Xcompiler", "-fPIC", "-std=c++17", "-O2"])
    # $( $) keeps ccache out of the signature, exactly as the ccache tool does for C++.
    env["CUDA_SHOBJCOM"] = "$( $CCACHE $) $NVCC -o $TARGET -c $NVCCFLAGS $_CPPDEFFLAGS $_CPPINCFLAGS $SOURCES"
    _, shared_obj = SCons.Tool.createObjBuilders(env)
    shared_obj.add_action(SUFFIX, SCons.Action.Action("$CUDA_SHOBJCOM", "$CUDA_SHOBJCOMSTR"))
    shared_obj.add_emitter(SUFFIX, SCons.Builder.ListEmitter([SCons.Defaults.SharedObjectEmitter, _depend_on_nvcc]))
    # #include lines in .cu files are ordinary C++ includes.
    SCons.Tool.SourceFileScanner.add_scanner(SUFFIX, SCons.Scanner.C.CScanner())
