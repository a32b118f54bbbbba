"""The garbage collector around a model that lives as long as the process (CLI or SCons)."""
from __future__ import annotations

import contextlib
import gc
from typing import Iterator


@contextlib.contextmanager
def paused_for_resident_objects() -> Iterator[None]:
    """No collection while the model is built, and its objects (alive until the process exits)
    out of the collector's reach afterwards: full collections kept re-walking them, a visible
    share of a no-op on PyTorch's yaml (docs/benchmarks.md, "Figures behind the code").
    A collector its caller had paused stays paused (SCons' site_scons/scons_patches.py, resident_objects, pauses it
    while the SConscripts are read)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
