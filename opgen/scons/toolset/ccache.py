"""SCons tool: compile through ccache without disturbing build signatures.

Construction variables:
  CCACHE_MODE    "auto" (default: use ccache when it is on the ENV PATH), "on" (required: stop
                 the build with exit status 2 when it is missing) or "off".
  CCACHE_REMOTE  ccache remote storage URL(s) shared by several machines ("" default: none), e.g.
                 redis://cache.example:6379 (scons --ccache-remote=URL). Exported to ccache as
                 CCACHE_REMOTE_STORAGE, over one the user exported; needs ccache to be active.
  CCACHE_STATS_LOG  where ccache logs this project's compiles (its stats_log, as CCACHE_STATSLOG;
                 default #build/ccache-stats.log; "" for none): ccache's own counters are the
                 whole machine's, this log is the project's (`opgen cache stats` reads both).
  CCACHE         set by this tool: ccache's absolute path, or "" when it is not used.

``env.CcacheActive()`` (or a non-empty ``env["CCACHE"]``) tells whether compiles go through ccache.
"""
import re

from opgen.scons.toolset.messages import fail, report
from opgen.scons.toolset.programs import find_program, mode_of
from opgen.scons.toolset.wrappers import CCACHE_PREFIX as PREFIX, COMPILE_COMMANDS, pass_through
# The remote storage backends of ccache 4.7 (manual, "Remote storage backends"). It has no
# https (the manual suggests a local reverse proxy in front of an https server).
REMOTE_SCHEMES = ("redis://", "redis+unix:", "http://", "file:")
USER_INFO = re.compile(r"^([a-z+]+://)[^/@]*@")
SECRET_ATTRIBUTE = re.compile(r"^(bearer-token)=.*$")
# The project's compile log (opgen/cache_cli.py reads it at the same path).
STATS_LOG = "#build/ccache-stats.log"


def shown_remote(url):
    """The remote storage setting for the build log: passwords and bearer tokens masked.

    A setting is space-separated backends, each ``URL|attribute|...``."""
    shown = []
    for backend in url.split():
        location, *attributes = backend.split("|")
        location = USER_INFO.sub(r"\1***@", location)
        shown.append("|".join([location] + [SECRET_ATTRIBUTE.sub(r"\1=***", a) for a in attributes]))
    return " ".join(shown)


def _check_remote(env, url):
    """Stops the build (exit 2) when the URL cannot work: an unknown scheme, or ccache is not used."""
    for backend in url.split():
        location = backend.split("|", 1)[0]
        if not location.startswith(REMOTE_SCHEMES):
            fail(f"--ccache-remote: {shown_remote(location)} is not a ccache remote storage URL "
                 f"(ccache 4.7 takes {', '.join(REMOTE_SCHEMES)}; no https)")
    if not env["CCACHE"]:
        why = "--ccache=off" if mode_of(env, "CCACHE_MODE") == "off" else "ccache was not found on PATH"
        fail(f"--ccache-remote needs ccache, but {why}")


def _pass_environment(env):
    pass_through(env, "CCACHE_")
    # Paths under the base dir are hashed relative to it, so a second checkout elsewhere hits.
    # A CCACHE_BASEDIR the user exported wins (e.g. a parent of several checkouts).
    env["ENV"].setdefault("CCACHE_BASEDIR", env.Dir("#").abspath)
    # ccache's own counters are its cache directory's, shared by every build on the machine; this
    # project's compiles are also logged here, one line per counter, for `opgen cache stats`.
    # A CCACHE_STATSLOG the user exported wins.
    if env.get("CCACHE_STATS_LOG"):
        env["ENV"].setdefault("CCACHE_STATSLOG", env.File(env["CCACHE_STATS_LOG"]).abspath)
    # CCACHE_NOHASHDIR is deliberately not set. ccache hashes the working directory only when
    # compiling with -g, because the object's debug info then names that directory; setting it
    # would hand one checkout's paths to another. With -g, add -fdebug-prefix-map=<root>=. and
    # ccache leaves the directory out of the hash by itself (tests/scons/test_ccache_tools.py).


def _use_remote(env, url):
    """The option's remote storage wins over an exported CCACHE_REMOTE_STORAGE; either is announced."""
    if url:
        env["ENV"]["CCACHE_REMOTE_STORAGE"] = url
        report(f"[opgen] ccache remote storage: {shown_remote(url)}")
    elif env["ENV"].get("CCACHE_REMOTE_STORAGE"):
        report(f"[opgen] ccache remote storage: {shown_remote(env['ENV']['CCACHE_REMOTE_STORAGE'])}"
               " (from $CCACHE_REMOTE_STORAGE)")


def _active(env):
    return bool(env.get("CCACHE"))


def exists(env):
    return True


def generate(env):
    env.SetDefault(CCACHE_MODE="auto", CCACHE_REMOTE="", CCACHE_STATS_LOG=STATS_LOG)
    env["CCACHE"] = find_program(env, "ccache", mode_of(env, "CCACHE_MODE"), "ccache", "ccache was not found on PATH")
    remote = str(env.subst("$CCACHE_REMOTE")).strip()
    if remote:
        _check_remote(env, remote)
    for command in COMPILE_COMMANDS:
        current = env.get(command)
        if current and not str(current).startswith(PREFIX):
            env[command] = f"{PREFIX} {current}"
    if env["CCACHE"]:
        _pass_environment(env)
        _use_remote(env, remote)
    env.AddMethod(_active, "CcacheActive")
