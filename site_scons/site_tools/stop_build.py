"""Stopping the build on bad input: ``scons: *** MESSAGE`` on stderr, exit status 2, no traceback.

Not a tool itself; SCons puts site_tools on sys.path while it loads a tool, so tools import it.
It imports nothing of opgen: the ccache tool also runs in projects without it.
"""
import sys

import SCons.Script


def fail(message):
    """Stops the build with exit status 2 (bad input), without a traceback."""
    print(f"scons: *** {message}", file=sys.stderr)
    SCons.Script.Exit(2)
