"""opgen: incremental, cached, reproducible operator code generation.

    import opgen.scons
    env = Environment(tools=["default", opgen.scons.tool])

opgen.scons is the SCons plugin (the only subpackage that imports SCons); the rest is a library
any front end (the command line, the plugin) drives.
"""
import os

__version__ = "0.19.0"


def scons_toolpath() -> str:
    """The directory of the generic SCons toolset (ccache, distcc, nvcc, ...), loadable by name."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "scons", "toolset")
