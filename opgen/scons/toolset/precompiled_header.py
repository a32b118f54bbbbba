"""SCons tool: a GCC precompiled header for the objects of one environment.

Construction variables:
  PCH_MODE   "auto" (default: precompile when neither ccache nor distcc compiles), "on" or "off".

``env.UsePrecompiledHeader(source, name, build_dir)`` compiles the header ``source``, which the
sources include as ``name`` (e.g. "dispatch/precompiled.h"), with this environment's C++ flags
into ``build_dir/<name>.gch``; while precompiling is active, every later C++ object of ``env``
force-includes it. GCC looks for ``<name>.gch`` in each include directory before the header
itself, so ``build_dir`` is put first in CPPPATH; when the .gch does not fit (other flags or
defines) GCC says so (-Winvalid-pch) and parses the header instead. Returns whether the objects
force-include it (``env.PrecompiledHeaderActive()``).

Why not always: ccache cannot hash a .gch portably (it needs pch sloppiness and the .gch embeds
the checkout's paths) and distcc cannot ship one, so with either, objects are compiled without it
and the cache does the saving. Sources include their own headers too, so the objects are the same
either way: the -include flags sit between $( $), outside build signatures, and every object
depends on the .gch in every mode (it is built even when unused). So switching ccache,
distcc or --pch on or off rebuilds nothing, as with the ccache wrapper, while an edit to a header
the .gch includes rebuilds every object compiled with it.
"""
import os

import SCons.Action
import SCons.Builder
import SCons.Scanner.C
import SCons.Tool

from opgen.scons.toolset.messages import fail
from opgen.scons.toolset.programs import MODES, mode_of

CXX_SUFFIXES = (".cpp", ".cc", ".cxx")
# The header's own flags: the object flags of this environment, as a header, never forcing itself.
GCH_COMMAND = "$SHCXX -o $TARGET -x c++-header -c $SHCXXFLAGS $SHCCFLAGS $_CCCOMCOM $SOURCES"


def _active(env):
    mode = mode_of(env, "PCH_MODE")
    if mode not in MODES:
        fail(f"--pch={mode} is not one of {', '.join(MODES)}")
    if mode == "off":
        return False
    wrapped = bool(env.get("CCACHE")) or bool(env.get("DISTCC"))
    if mode == "on" and wrapped:
        fail("--pch=on cannot be used with ccache or distcc; pass --ccache=off (and no --distcc)")
    return not wrapped


def _use(env, source, name, build_dir):
    # Built from a copy of the environment as it is now: the header never force-includes itself.
    active = _active(env)
    header_env = env.Clone()
    if not active and header_env.get("PCHCOMSTR"):
        # Built all the same (switching modes then rebuilds nothing), and its step says so.
        header_env["PCHCOMSTR"] = f"{header_env['PCHCOMSTR']} (built, not used: ccache, distcc or --pch=off)"
    gch = header_env.PrecompiledHeaderFile(os.path.join(build_dir, name + ".gch"), source)
    env.Prepend(CPPPATH=[build_dir])
    env["PCH_NODE"] = gch
    if active:
        env.Append(CCFLAGS=["$(", "-Winvalid-pch", "-include", name, "$)"])
    return active


def _depend_on_pch(target, source, env):
    if env.get("PCH_NODE"):
        env.Depends(target, env["PCH_NODE"])
    return target, source


def _add_emitter(env):
    """Every environment shares the object builders; the emitter acts only where PCH_NODE is set."""
    for builder in SCons.Tool.createObjBuilders(env):
        if getattr(builder, "_opgen_pch", False):
            continue
        builder._opgen_pch = True
        for suffix in CXX_SUFFIXES:
            current = builder.emitter.get(suffix)
            builder.add_emitter(suffix, SCons.Builder.ListEmitter([current, _depend_on_pch]) if current else _depend_on_pch)


def exists(env):
    return True


def generate(env):
    env.SetDefault(PCH_MODE="auto", PCH_NODE=None)
    env["BUILDERS"]["PrecompiledHeaderFile"] = SCons.Builder.Builder(
        action=SCons.Action.Action(GCH_COMMAND, "$PCHCOMSTR"), source_scanner=SCons.Scanner.C.CScanner()
    )
    env.AddMethod(_use, "UsePrecompiledHeader")
    env.AddMethod(_active, "PrecompiledHeaderActive")
    _add_emitter(env)
