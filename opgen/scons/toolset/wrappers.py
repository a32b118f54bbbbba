"""Compiler wrappers (ccache, distcc, icecream) in compile commands: which commands they wrap,
their prefixes and the settings they read. Not a tool: the ccache and distcc tools import it.
"""
import os

COMPILE_COMMANDS = ("CCCOM", "CXXCOM", "SHCCCOM", "SHCXXCOM")
# $( ... $) drops a wrapper from the command's signature: switching ccache or distcc on or off
# changes how objects are produced, never which objects SCons considers up to date.
CCACHE_PREFIX = "$( $CCACHE $)"
DISTCC_PREFIX = "$( $DISTCC $)"


def pass_through(env, prefix):
    """Copies the user's ``prefix``* variables into the compiles' environment: compiler wrappers
    (ccache, distcc, icecc) read their settings there, and SCons builds it from scratch."""
    for name, value in sorted(os.environ.items()):
        if name.startswith(prefix):
            env["ENV"][name] = value
