"""Stopping an opgen build on bad input: the FILE:LINE diagnostics, one summary line, exit status 2."""
import sys

from opgen.scons.toolset.messages import fail


def stop(error, summary: str) -> None:
    """Ends the build with exit status 2: the input's FILE:LINE diagnostics, then one summary line."""
    for diagnostic in getattr(error, "diagnostics", ()):
        print(str(diagnostic), file=sys.stderr)
    fail(f"[opgen] {summary}")
