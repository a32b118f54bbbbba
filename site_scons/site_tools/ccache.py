"""SCons tool: compile through ccache without disturbing build signatures.

Construction variables:
  CCACHE_MODE  "auto" (default: use ccache when it is on the ENV PATH), "on" (required: stop
               the build with exit status 2 when it is missing) or "off".
  CCACHE       set by this tool: ccache's absolute path, or "" when it is not used.

``env.CcacheActive()`` (or a non-empty ``env["CCACHE"]``) tells whether compiles go through ccache.
"""
import os

from optional_program import find_program, mode_of

COMPILE_COMMANDS = ("CCCOM", "CXXCOM", "SHCCCOM", "SHCXXCOM")
# $( ... $) drops the wrapper from the command's signature: switching ccache on or off
# changes how objects are produced, never which objects SCons considers up to date.
PREFIX = "$( $CCACHE $)"


def _pass_environment(env):
    """ccache reads its settings from the compiler's environment, which SCons builds from scratch."""
    for name, value in sorted(os.environ.items()):
        if name.startswith("CCACHE_"):
            env["ENV"][name] = value
    # Paths under the base dir are hashed relative to it, so a second checkout elsewhere hits.
    # A CCACHE_BASEDIR the user exported wins (e.g. a parent of several checkouts).
    env["ENV"].setdefault("CCACHE_BASEDIR", env.Dir("#").abspath)
    # CCACHE_NOHASHDIR is deliberately not set. ccache hashes the working directory only when
    # compiling with -g, because the object's debug info then names that directory; setting it
    # would hand one checkout's paths to another. With -g, add -fdebug-prefix-map=<root>=. and
    # ccache leaves the directory out of the hash by itself (tests/scons/test_ccache_tools.py).


def _active(env):
    return bool(env.get("CCACHE"))


def exists(env):
    return True


def generate(env):
    env.SetDefault(CCACHE_MODE="auto")
    env["CCACHE"] = find_program(env, "ccache", mode_of(env, "CCACHE_MODE"), "ccache", "ccache was not found on PATH")
    for command in COMPILE_COMMANDS:
        current = env.get(command)
        if current and not str(current).startswith(PREFIX):
            env[command] = f"{PREFIX} {current}"
    if env["CCACHE"]:
        _pass_environment(env)
    env.AddMethod(_active, "CcacheActive")
