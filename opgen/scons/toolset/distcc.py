"""SCons tool: spread C/C++ compiles over distccd hosts (scons --distcc=HOSTS).

Construction variables:
  DISTCC_HOSTS    the hosts in distcc's syntax ("10.0.0.2/8 10.0.0.3:3632/4,lzo localhost/2"); a
                  comma may separate hosts too, so ``--distcc=a/8,b/4`` needs no quoting. "": off.
  DISTCC_PROGRAM  set by this tool: distcc's absolute path, or "" when distcc is off.
  DISTCC          set by this tool: the compile commands' distcc prefix. It is distcc itself only
                  when ccache is off; with ccache, ccache runs distcc on its misses (CCACHE_PREFIX),
                  so a cache hit never costs a trip to a host.
  DISTCC_JOBS     set by this tool: how many compiles the hosts take at once (``distcc -j``: each
                  host's /LIMIT, else 4 per TCP host and 2 for localhost).

Apply it after the ccache tool. Only C and C++ compiles are distributed; links and nvcc stay
local. Unless -j was given (on the command line or in SCONSFLAGS, which SCons lets win over
SetOption), -j becomes DISTCC_JOBS. ICECC_* variables always pass through to the compiles, for
icecream used instead of distcc (README, "Builds beyond one machine").
"""
import os
import re
import subprocess

import SCons.Script

from opgen.scons.toolset.messages import fail, report
from opgen.scons.toolset.wrappers import CCACHE_PREFIX, COMPILE_COMMANDS, DISTCC_PREFIX as PREFIX, pass_through

# Inside $( $) like ccache: switching distcc on or off never changes a build signature.
# What may follow a host after a comma in distcc's syntax; any other comma starts a new host.
HOST_OPTION = re.compile(r"^(lzo|cpp|auth(=.*)?)$")
DISTCC_MESSAGE = re.compile(r"^distcc\[\d+\] (?:\([^)]*\) )?(?:ERROR|CRITICAL!|Warning): (.*)$")


def normalized_hosts(text):
    """distcc's host list with spaces between hosts: "a/4,lzo,b/2" -> "a/4,lzo b/2"."""
    hosts = []
    for word in text.split():
        first, *rest = word.split(",")
        hosts.append(first)
        for part in filter(None, rest):
            if HOST_OPTION.match(part) and hosts[-1]:
                hosts[-1] += "," + part
            else:
                hosts.append(part)
    return " ".join(filter(None, hosts))


def _slots(program, hosts, environment):
    """How many jobs the hosts take, as distcc itself counts them; stops the build when distcc
    cannot read the host list (it then prints why and no number)."""
    try:
        result = subprocess.run([program, "-j"], env=dict(environment, DISTCC_HOSTS=hosts),
                                capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        fail(f"--distcc: cannot run {program} -j: {exc}")
    if result.stdout.strip().isdigit():
        return int(result.stdout)
    reasons = [m.group(1) for m in map(DISTCC_MESSAGE.match, result.stderr.splitlines()) if m]
    fail(f"--distcc={hosts}: {reasons[0] if reasons else 'distcc -j failed: ' + result.stderr.strip()}")


def _pass_environment(env, hosts):
    pass_through(env, "DISTCC_")
    env["ENV"]["DISTCC_HOSTS"] = hosts
    # distcc keeps its slot locks and host back-off state there; without HOME (SCons passes
    # none) or this directory, it gives up distributing and compiles locally.
    state = env["ENV"].setdefault("DISTCC_DIR", os.path.expanduser("~/.distcc"))
    try:
        os.makedirs(state, exist_ok=True)
    except OSError as exc:
        fail(f"--distcc: cannot create DISTCC_DIR {state}: {exc.strerror}")


def _prefix_compiles(env):
    """Puts the distcc prefix after ccache's (ccache must see the real compiler), never twice."""
    for command in COMPILE_COMMANDS:
        current = str(env.get(command, ""))
        if not current or PREFIX in current:
            continue
        if current.startswith(CCACHE_PREFIX):
            env[command] = f"{CCACHE_PREFIX} {PREFIX} {current[len(CCACHE_PREFIX):].lstrip()}"
        else:
            env[command] = f"{PREFIX} {current}"


def _raise_jobs(slots):
    SCons.Script.SetOption("num_jobs", slots)
    return SCons.Script.GetOption("num_jobs")


def _active(env):
    return bool(env.get("DISTCC_PROGRAM"))


def exists(env):
    return True


def generate(env):
    env.SetDefault(DISTCC_HOSTS="")
    env["DISTCC_PROGRAM"] = env["DISTCC"] = ""
    env.AddMethod(_active, "DistccActive")
    _prefix_compiles(env)
    # icecream needs no option (CCACHE_PREFIX=icecc, or its compiler symlinks first on PATH), only its settings.
    pass_through(env, "ICECC_")
    requested = str(env.subst("$DISTCC_HOSTS")).strip()
    if not requested:
        return
    hosts = normalized_hosts(requested)
    if not hosts:
        fail(f"--distcc={requested}: no hosts")
    program = env.WhereIs("distcc")
    if not program:
        fail("--distcc needs distcc, which was not found on PATH (apt-get install distcc)")
    env["DISTCC_PROGRAM"] = program
    _pass_environment(env, hosts)
    env["DISTCC_JOBS"] = _slots(program, hosts, env["ENV"])
    if env.get("CCACHE"):
        env["ENV"]["CCACHE_PREFIX"] = program
    else:
        env["DISTCC"] = program
    jobs = _raise_jobs(env["DISTCC_JOBS"])
    note = "" if jobs == env["DISTCC_JOBS"] else f"; the hosts take {env['DISTCC_JOBS']}"
    report(f"[opgen] distcc: {hosts} (-j {jobs}{note})")
