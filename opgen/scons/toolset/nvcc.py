"""SCons tool: compile CUDA sources (.cu) into shared objects with nvcc.

Construction variables:
  CUDA_MODE       "auto" (default: build CUDA when nvcc is found), "on" (required: stop the
                  build with exit status 2 when nvcc is missing) or "off".
  NVCC            set by this tool: nvcc's absolute path, or "" when CUDA is not built. An NVCC
                  environment variable (or construction variable) names the binary to use.
  CUDA_HOME       the toolkit root (include/, lib64/): $CUDA_HOME, else the directory above the
                  real nvcc, else /usr/local/cuda.
  NVCCFLAGS       flags for every .cu compile (-Xcompiler -fPIC -std=c++17 -O2).
  CUDA_ARCH       the GPU architectures: "native" (default: SASS for the GPUs present plus PTX
                  of the newest; with no GPU, Volta to Hopper as far as nvcc supports them), "all"
                  (every architecture nvcc lists from sm_70 on) or a list ("80,90", "sm_80",
                  "8.0"): cuda_arch.py. Read when a .cu command is expanded, so a clone may set its
                  own (the builders' ``cuda_arch=``); a bad value stops the build with exit status 2.
  NVIDIA_SMI      the program asked for the GPUs present (default: nvidia-smi on PATH, or the
                  NVIDIA_SMI environment variable); "off": never ask (as if there were no GPU).
  CUDA_PROBE_CACHE  where nvcc's and nvidia-smi's answers are kept between builds (default:
                  .sconsign.probes.json beside SConstruct; "" keeps them for one run only).
  CUDA_VERSION    set by this tool: nvcc's release ("13.0").
  CUDA_SHOBJCOM   the command: ``env.SharedObject("x.cu")`` (and SharedLibrary sources) use it.

``env.CudaActive()`` tells whether CUDA is built; ``env.CudaArchitectures(value=None)`` the
architectures ``value`` (default: $CUDA_ARCH) resolves to (cuda_arch.Architectures: SASS, PTX,
notes), stopping the build when it is bad; ``env.CudaDescription()`` says what was chosen
("nvcc 13.0; sm_80, sm_90, compute_90"). Compiles go through ccache like C++ ones
(``$( $CCACHE $)``, set by the ccache tool), and .cu files get SCons' C scanner, so editing a
header they include rebuilds them.
"""
import functools
import os

import SCons.Action
import SCons.Builder
import SCons.Defaults
import SCons.Scanner.C
import SCons.Tool
import SCons.Util

from opgen.scons.toolset import cuda_arch, cuda_probes
from opgen.scons.toolset.messages import fail, notice, option
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


def _probe_cache(env):
    path = env.subst("$CUDA_PROBE_CACHE")
    if not path:
        return None
    # A path, not a File node: the cache is no part of the build's graph.
    return os.path.join(env.Dir("#").abspath, path[1:]) if path.startswith("#") else os.path.abspath(path)


@functools.lru_cache(maxsize=None)
def _where(program, search_path):
    return SCons.Util.WhereIs(program, search_path) or ""


def _nvidia_smi(env):
    requested = env.subst("$NVIDIA_SMI") or os.environ.get("NVIDIA_SMI", "") or "nvidia-smi"
    if requested.lower() == "off":
        return ""
    search_path = env["ENV"].get("PATH", "")  # memoized: every .cu command asks
    return _where(requested, search_path if isinstance(search_path, str) else os.pathsep.join(search_path))


@functools.lru_cache(maxsize=None)
def _resolve(value, nvcc, cuda_home, nvidia_smi, cache_path):
    """Memoized: every .cu command expands $_CUDA_GENCODE."""
    request = cuda_arch.parse(value)
    supported = cuda_probes.nvcc_architectures(nvcc, cache_path, cuda_home)
    gpus = cuda_probes.gpu_compute_caps(nvidia_smi, cache_path) if request.mode == "native" else None
    return cuda_arch.resolve(request, supported, gpus)


def _architectures(env, value=None, what=None):
    """``value`` (default $CUDA_ARCH) resolved; a bad one stops the build, named as ``what`` says."""
    value = str(env.subst("$CUDA_ARCH") if value is None else value).strip()
    try:
        if not _active(env):
            cuda_arch.parse(value)  # no nvcc to ask: the spelling is still checked
            return None
        return _resolve(value, env["NVCC"], env["CUDA_HOME"], _nvidia_smi(env), _probe_cache(env))
    except cuda_arch.ArchError as exc:
        fail(f"{what or '--cuda-arch'}={value}: {exc}")


@functools.lru_cache(maxsize=None)
def _notice_once(text):
    if not option("help"):  # once per build, however many environments load the tool; not in `scons -h`
        notice(text)


def _gencode(env):
    chosen = _architectures(env)
    return chosen.gencode_flags() if chosen else []


def _description(env):
    chosen = _architectures(env)
    return f"nvcc {env['CUDA_VERSION']}; {chosen.describe()}" if chosen else "off"


def exists(env):
    return True


def generate(env):
    env.SetDefault(CUDA_MODE="auto", CUDA_ARCH="native", NVIDIA_SMI="", CUDA_PROBE_CACHE="#.sconsign.probes.json")
    env["NVCC"] = _find_nvcc(env, mode_of(env, "CUDA_MODE"))
    env.AddMethod(_active, "CudaActive")
    env.AddMethod(_architectures, "CudaArchitectures")
    env.AddMethod(_description, "CudaDescription")
    if env["NVCC"]:
        env["CUDA_HOME"] = _cuda_home(env["NVCC"])
    chosen = _architectures(env)  # a bad --cuda-arch stops the build now, CUDA or not
    if not env["NVCC"]:
        return
    for note in chosen.notes:
        _notice_once(f"[opgen] CUDA architectures: {note}")
    env["CUDA_VERSION"] = cuda_probes.nvcc_version(env["NVCC"], _probe_cache(env), env["CUDA_HOME"])
    env.SetDefault(NVCCFLAGS=["-Xcompiler", "-fPIC", "-std=c++17", "-O2"])
    # The architectures come first and sorted: the same choice, the same command (and ccache key).
    env["_cuda_gencode"] = _gencode
    env["_CUDA_GENCODE"] = "${_cuda_gencode(__env__)}"
    # $( $) keeps ccache out of the signature, exactly as the ccache tool does for C++.
    env["CUDA_SHOBJCOM"] = "$( $CCACHE $) $NVCC -o $TARGET -c $_CUDA_GENCODE $NVCCFLAGS $_CPPDEFFLAGS $_CPPINCFLAGS $SOURCES"
    _, shared_obj = SCons.Tool.createObjBuilders(env)
    shared_obj.add_action(SUFFIX, SCons.Action.Action("$CUDA_SHOBJCOM", "$CUDA_SHOBJCOMSTR"))
    shared_obj.add_emitter(SUFFIX, SCons.Builder.ListEmitter([SCons.Defaults.SharedObjectEmitter, _depend_on_nvcc]))
    # #include lines in .cu files are ordinary C++ includes.
    SCons.Tool.SourceFileScanner.add_scanner(SUFFIX, SCons.Scanner.C.CScanner())
