"""opgen: incremental, cached, reproducible operator code generation.

    import opgen
    env = Environment(tools=["default", "opgen"], toolpath=[opgen.scons_toolpath()])

``scons_toolpath()`` is the directory of opgen's SCons tools; opgen itself never imports SCons.
"""
import os

__version__ = "0.19.0"

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
# An installed wheel carries the tools inside the package (pyproject.toml maps
# site_scons/site_tools there); a checkout, or an editable install of one, has them beside it.
_TOOL_DIRS = (
    os.path.join(_PACKAGE_DIR, "site_tools"),
    os.path.join(os.path.dirname(_PACKAGE_DIR), "site_scons", "site_tools"),
)


def scons_toolpath() -> str:
    """The directory holding opgen's SCons tools (the ``opgen`` tool and those it loads)."""
    for directory in _TOOL_DIRS:
        if os.path.isfile(os.path.join(directory, "opgen.py")):
            return directory
    raise FileNotFoundError(f"opgen's SCons tools are not installed (looked in {', '.join(_TOOL_DIRS)})")
