"""Shared by the ccache and nvcc tools: an optional program chosen by an auto|on|off option.

Not a tool itself; SCons puts site_tools on sys.path while it loads a tool, so they import it.
"""
from stop_build import fail

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
