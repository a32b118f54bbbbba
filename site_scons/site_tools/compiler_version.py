"""SCons tool: objects depend on the compiler's version, not on the compiler binary's bytes.

SCons normally scans every command line and makes its first word (the compiler) an implicit
dependency of the target; that costs about a quarter of a no-op build. This tool turns it off
(IMPLICIT_COMMAND_DEPENDENCIES=0) and instead makes every C/C++ object depend on
``Value("<compiler path>: <first line of --version> <digest of the whole output>")``, so
installing another compiler version rebuilds the objects and nothing else changes.

Apply it after the compiler tools (e.g. ``tools=["default", "compiler_version"]``).
"""
import functools
import hashlib
import os
import subprocess

import SCons.Builder
import SCons.Tool.cc
import SCons.Tool.cxx
import SCons.Util

# Which construction variable names the compiler, per builder and source language.
COMPILER_VARIABLE = {
    ("StaticObject", "c"): "CC",
    ("StaticObject", "c++"): "CXX",
    ("SharedObject", "c"): "SHCC",
    ("SharedObject", "c++"): "SHCXX",
}


@functools.lru_cache(maxsize=None)
def _identity(path, mtime_ns, size):
    """One `--version` run per compiler binary and process.

    The Value keeps a digest instead of the whole text: SCons stores a Value's text in
    .sconsign once per object that depends on it.
    """
    try:
        result = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
        text = result.stdout + result.stderr
    except (OSError, subprocess.SubprocessError) as exc:
        text = f"cannot run --version: {exc}"
    first_line = text.strip().splitlines()[0] if text.strip() else ""
    return f"{path}: {first_line} [{hashlib.sha256(text.encode()).hexdigest()[:16]}]"


@functools.lru_cache(maxsize=None)
def _resolve(program, search_path):
    """Memoized: otherwise every object would search PATH again (most of an emitter call's cost)."""
    return SCons.Util.WhereIs(program, search_path) or program


def compiler_identity(env, variable):
    """The text of the Value that objects compiled with ``$<variable>`` depend on."""
    command = env.subst(f"${variable}").split()
    if not command:
        return f"${variable} is empty"
    search_path = env["ENV"].get("PATH", "")
    if not isinstance(search_path, str):
        search_path = os.pathsep.join(search_path)
    path = _resolve(command[0], search_path)
    try:
        stat = os.stat(path)
    except OSError:
        return f"{path}: not found"
    return _identity(path, stat.st_mtime_ns, stat.st_size)


def _emitter_for(variable):
    def depend_on_compiler(target, source, env):
        env.Depends(target, env.Value(compiler_identity(env, variable)))
        return target, source

    depend_on_compiler.compiler_variable = variable
    return depend_on_compiler


def _add_emitter(builder, suffix, variable):
    current = builder.emitter.get(suffix)
    if current is None:
        return  # no compiler tool handles this suffix in this environment
    chain = list(current) if isinstance(current, SCons.Builder.ListEmitter) else [current]
    if any(getattr(e, "compiler_variable", None) for e in chain):
        return  # the tool was applied to this builder already
    builder.add_emitter(suffix, SCons.Builder.ListEmitter(chain + [_emitter_for(variable)]))


def exists(env):
    return True


def generate(env):
    env["IMPLICIT_COMMAND_DEPENDENCIES"] = 0
    suffixes = {"c": SCons.Tool.cc.CSuffixes, "c++": SCons.Tool.cxx.CXXSuffixes}
    for (builder_name, language), variable in COMPILER_VARIABLE.items():
        builder = env["BUILDERS"].get(builder_name)
        if builder is None:
            continue
        for suffix in suffixes[language]:
            _add_emitter(builder, suffix, variable)
    # Ask the compilers once up front; every object's emitter then reuses the answer.
    for variable in ("CC", "CXX"):
        if env.get(variable):
            compiler_identity(env, variable)
