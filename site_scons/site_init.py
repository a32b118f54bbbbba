"""Make the opgen package (next to SConstruct) importable from SConscripts and site tools, and
install this repository's patches of SCons' functions (scons_patches.py: no-op speed; each only
on the SCons versions it is tested on)."""
import os
import sys

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

import scons_patches  # noqa: E402  (site_scons is on sys.path while this file runs)

scons_patches.install()
