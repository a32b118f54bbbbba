"""What the SCons side says: stopping the build on bad input, and the lines a build prints.

Not a tool: the toolset's tools and opgen's builders import it. Its state (the build's one
step printer) lives on the SCons.Script module, so every copy of a tool shares it.
"""
import sys

import SCons.Script


def fail(message):
    """Stops the build with exit status 2 (bad input), without a traceback."""
    print(f"scons: *** {message}", file=sys.stderr)
    SCons.Script.Exit(2)


def verbose() -> bool:
    """--verbose (the build_output tool's option): full command lines, as SCons prints them by default."""
    return bool(option("build_output_verbose"))


def shown(env, short, full):
    """What a Python action prints: ``short`` where the build_output tool shortens step lines, else ``full``."""
    return short if env.get("BUILD_OUTPUT_SHORT") else full


def notice(text):
    """An informational line about what the SConscripts found; quiet with -Q or -s."""
    if not (option("silent") or option("no_progress")):
        _print(text)


def report(text):
    """What the build did, or where its work goes; quiet with -s only (-Q still shows what was built)."""
    if not option("silent"):
        _print(text)


def _print(text):
    steps = getattr(SCons.Script, "_build_output_steps", None)
    if steps is not None:
        steps.finish()  # a line updated in place ends before the message
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def option(name):
    """SCons' option ``name``, or None when it is not added (yet)."""
    try:
        return SCons.Script.GetOption(name)
    except AttributeError:
        return None
