"""Programs the toolset's tools run: an optional one chosen by an auto|on|off option (ccache,
nvcc, the precompiled header's mode), and a compiler's identity (compiler_version, nvcc).

Not a tool: the toolset's tools import it.
"""
import functools
import hashlib
import os
import subprocess

import SCons.Util

from opgen.scons.toolset.messages import fail

MODES = ("auto", "on", "off")


def find_program(env, option, mode, program, missing):
    """The program's path for `--<option>=<mode>`: "" when off or (auto) not found; stops the
    build when the mode is unknown or `on` cannot be met (`missing` says why)."""
    if mode not in MODES:
        fail(f"--{option}={mode} is not one of {', '.join(MODES)}")
    if mode == "off":
        return ""
    path = env.WhereIs(program) or ""
    if not path and mode == "on":
        fail(f"--{option}=on but {missing}")
    return path


def mode_of(env, variable):
    """The construction variable's mode, normalised ("AUTO " -> "auto")."""
    return str(env.subst(f"${variable}")).strip().lower()


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
