"""SCons tool: objects depend on the compiler's version, not on the compiler binary's bytes.

SCons normally scans every command line and makes its first word (the compiler) an implicit
dependency of the target; that costs about a quarter of a no-op build. This tool turns it off
(IMPLICIT_COMMAND_DEPENDENCIES=0) and instead makes every C/C++ object depend on
``Value("<compiler path>: <first line of --version> <digest of the whole output>")``, so
installing another compiler version rebuilds the objects and nothing else changes.

Apply it after the compiler tools (e.g. ``tools=["default", "compiler_version"]``).
"""
import SCons.Builder
import SCons.Tool.cc
import SCons.Tool.cxx
import SCons.Util

from opgen.scons.toolset.programs import compiler_identity

# Which construction variable names the compiler, per builder and source language.
COMPILER_VARIABLE = {
    ("StaticObject", "c"): "CC",
    ("StaticObject", "c++"): "CXX",
    ("SharedObject", "c"): "SHCC",
    ("SharedObject", "c++"): "SHCXX",
}


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
