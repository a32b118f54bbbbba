"""The remote-tier tests build real checkouts with the SCons tests' helpers (tests/scons)."""
import os
import sys

SCONS_TESTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scons")
if SCONS_TESTS not in sys.path:
    sys.path.insert(0, SCONS_TESTS)
