"""opgen's SCons plugin: the public builders a project builds its operators with, the same ones
this repository builds its own runtime and backends with. The only part of opgen that imports
SCons.

    import opgen.scons
    env = Environment(tools=["default", opgen.scons.tool])
    lib = env.OpgenOperatorLibrary("myops", yaml="myops.yaml", kernels=Glob("kernels/*.cpp"))

``tool`` loads, from the generic toolset (opgen.scons.toolset, which knows nothing of
operators): build_output (one short numbered line per step; --verbose for full commands), ccache
(CCACHE_MODE, default auto), distcc (DISTCC_HOSTS, default none), compiler_version (objects depend
on the compiler's version), precompiled_header (PCH_MODE, default auto) and linker (LINKER_MODE,
default auto: lld, mold or gold when the compiler can use one); then opgen's builders:

    env.OpgenModel(yaml, tags=None) / OpgenModelJson        model.py
    env.OpgenCodegen(model, dir) / OpgenBackendCodegen      codegen.py   (one node per operator group)
    env.OpgenSelection(ops, model, config)                  selection.py (a selective build's groups)
    env.OpgenBackendYaml(model, path) / OpgenCheckDefinitions  backend.py
    env.OpgenOperatorLibrary / OpgenBackendLibrary          library.py   (the pipeline)
    env.OpgenMissingKernels                                 missing_kernels.py (stop or stub)
    env.OpgenPythonExtension                                python_extension.py
    env.OpgenInstallRuntime                                 sdk.py       (the runtime as an SDK)

It also puts the environment under opgen's rebuild policy (rebuild.py). Apply it after the
compiler tools. ``codegen_tool`` registers only what generating needs (no
compiler tools), for builds that compile nothing.
"""
import os

# The generic toolset's directory (opgen.scons.toolset), the one place that names it; computed
# without importing the toolset or opgen's builders: the tools import this package, which must
# stay light. (opgen.scons_toolpath() gives the same path without importing opgen.scons.)
TOOLPATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "toolset")
# Order matters: distcc wraps what ccache leaves; the precompiled header asks whether either compiles.
COMPILE_TOOLS = ("build_output", "ccache", "distcc", "compiler_version", "precompiled_header", "linker")


def codegen_tool(env):
    from opgen.scons import backend, codegen, model, selection
    from opgen.scons.rebuild import apply_rebuild_policy

    apply_rebuild_policy(env)
    env.Tool("build_output", toolpath=[TOOLPATH])
    for module in (model, codegen, backend, selection):
        module.register(env)


def tool(env):
    from opgen.scons import backend, codegen, library, missing_kernels, model, python_extension, sdk, selection
    from opgen.scons.rebuild import apply_rebuild_policy

    apply_rebuild_policy(env)
    for name in COMPILE_TOOLS:
        env.Tool(name, toolpath=[TOOLPATH])
    for module in (model, codegen, backend, selection, missing_kernels, library, python_extension, sdk):
        module.register(env)
