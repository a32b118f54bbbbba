"""SCons tool: link with the fastest linker the C++ compiler driver can use.

An operator library built from PyTorch's yaml is a 44 MB shared object linked from ~300 MB of
archives; GNU ld (bfd) takes ~2.3 s to link it on two cores, lld ~0.6 s, mold ~0.7 s
(docs/benchmarks.md). Every operator edit relinks it, so the linker is a fixed cost of the edit loop.

Construction variables:
  LINKER_MODE   "auto" (default: the first of AUTO_ORDER the compiler accepts, else its own
                default), or one of LINKERS ("lld", "mold", "gold", "bfd"): stop the build with exit
                status 2 when the compiler cannot use it. scons --linker=MODE sets it.
  LINKER_PROBE_CACHE  where the answers are kept between builds (default: .sconsign.probes.json
                beside SConstruct, the nvcc tool's file; "" keeps them for one run only).
  LINKER        set by this tool: the linker chosen, "" for the compiler's default.

``-fuse-ld=NAME`` goes into LINKFLAGS (SHLINKFLAGS includes it), so every program and shared
library the environment links uses it. Which linker links does not change what objects compile to (ccache
keys are untouched), and each of them writes the same bytes for the same inputs.
"""
import os

from opgen.scons.toolset import probe_cache
from opgen.scons.toolset.messages import fail

LINKERS = ("lld", "mold", "gold", "bfd")
# Measured on the library built from PyTorch's yaml, two cores: lld 0.56 s, mold 0.69 s, gold
# 1.3 s, bfd 2.3 s (lld and mold trade places from run to run; mold's threads need more cores).
AUTO_ORDER = ("lld", "mold", "gold")
MODES = ("auto", *LINKERS)


def _compiler(env) -> str:
    command = env.subst("$CXX").split()
    return (env.WhereIs(command[-1]) or command[-1]) if command else ""


def accepts(env, compiler: str, linker: str) -> bool:
    """Whether ``compiler -fuse-ld=linker`` links (it runs the linker's --version)."""
    if not compiler:
        return False
    cache_path = env.subst("$LINKER_PROBE_CACHE") or None
    found = env.WhereIs(f"ld.{linker}") or ""
    argv = [compiler, f"-fuse-ld={linker}", "-Wl,--version"]
    key = probe_cache.program_key(compiler, *argv[1:], also=[found] if found else [])
    return probe_cache.run(cache_path, argv, key) is not None


def choose(env, mode: str) -> str:
    """The linker for ``mode``: "" (the compiler's default) when auto finds none of AUTO_ORDER."""
    if mode not in MODES:
        fail(f"--linker={mode} is not one of {', '.join(MODES)}")
    compiler = _compiler(env)
    if mode == "auto":
        return next((linker for linker in AUTO_ORDER if accepts(env, compiler, linker)), "")
    if not accepts(env, compiler, mode):
        fail(f"--linker={mode}: {compiler or '$CXX'} cannot link with -fuse-ld={mode} "
             f"(is ld.{mode} installed? on Debian: apt install {'binutils' if mode in ('bfd', 'gold') else mode})")
    return mode


def exists(env):
    return True


def generate(env):
    env.SetDefault(LINKER_MODE="auto", LINKER_PROBE_CACHE="#.sconsign.probes.json")
    path = env.subst("$LINKER_PROBE_CACHE")
    if path.startswith("#"):
        env["LINKER_PROBE_CACHE"] = os.path.join(env.Dir("#").abspath, path[1:])
    env["LINKER"] = choose(env, str(env.subst("$LINKER_MODE")).strip().lower())
    if env["LINKER"]:
        env.Append(LINKFLAGS=[f"-fuse-ld={env['LINKER']}"])
