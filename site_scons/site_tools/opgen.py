"""SCons tool "opgen": everything a project needs to build its own operator library.

    import opgen
    env = Environment(tools=["default", "opgen"], toolpath=[opgen.scons_toolpath()])
    lib = env.OpgenOperatorLibrary("myops", yaml="myops.yaml", kernels=Glob("kernels/*.cpp"))

Loads, from this directory: build_output (one short numbered line per build step; --verbose
for the full commands), ccache (CCACHE_MODE, default auto) and compiler_version (objects
depend on the compiler's version), then opgen_model, opgen_codegen, opgen_backend and
opgen_library (OpgenOperatorLibrary, OpgenBackendLibrary).  Apply it after the compiler tools.
"""
import importlib
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _restore_opgen_package():
    """SCons registers a tool module in sys.modules under the tool's name, so while this file
    runs, 'opgen' is this tool rather than the opgen package every other tool imports from.
    Import the package again, with this directory off sys.path, and put it back; the
    subpackages already loaded (the SConstruct's own `import opgen`, ...) are attached to it."""
    if getattr(sys.modules.get("opgen"), "__path__", None) is not None:
        return  # loaded by some other name: 'opgen' is still the package
    sys.modules.pop("opgen", None)
    saved_path = sys.path
    sys.path = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
    try:
        package = importlib.import_module("opgen")
    finally:
        sys.path = saved_path
    for name, module in list(sys.modules.items()):
        parent, _, child = name.rpartition(".")
        if parent == "opgen" and module is not None:
            setattr(package, child, module)


_restore_opgen_package()

TOOLS = ("build_output", "ccache", "compiler_version", "opgen_model", "opgen_codegen", "opgen_backend", "opgen_library")


def exists(env):
    return True


def generate(env):
    for tool in TOOLS:
        env.Tool(tool, toolpath=[_HERE])
