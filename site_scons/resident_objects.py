"""Keep Python's cyclic garbage collector off the objects an SCons run keeps until it exits.

A PyTorch-sized build holds its nodes with their executors, build and node infos, and the
.sconsign's stored entries and signatures, all alive until the process exits. Every full
collection (generation 2) walks all of them, and the allocations of the walk trigger them: a
no-op over PyTorch's groups spent more time in full collections than in any part of SCons
itself (docs/benchmarks.md, "Figures behind the code").

Two moments make most of those objects: reading the SConscripts (the nodes) and loading each
directory's .sconsign entries. Neither collects (the collector is paused from site_init until
the SConscripts are read, and while a directory's entries are unpickled), and after each
``gc.freeze()`` moves everything alive to the permanent generation, which collections never
walk. Garbage made afterwards is collected as before. Frozen objects are never freed: they live
until the end of the run anyway, and the few cycles the SConscripts drop (a discarded
environment) stay as the price of not walking the rest. (opgen's own model gets the same
treatment: opgen/collector.py.)
"""
import gc

import SCons.SConsign
import SCons.Script.Main

_build_targets = SCons.Script.Main._build_targets
_db_init = SCons.SConsign.DB.__init__


_enabled = True  # whether the collector ran before install() paused it


def _build_targets_frozen(*args, **kwargs):
    gc.freeze()  # the SConscripts are read: their nodes and environments are here to stay
    if _enabled:
        gc.enable()
    return _build_targets(*args, **kwargs)


def _db_init_frozen(self, dir) -> None:
    enabled = gc.isenabled()
    gc.disable()
    try:
        _db_init(self, dir)
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def install():
    """Pause the collector until the SConscripts are read (call it before they are)."""
    global _enabled
    _enabled = gc.isenabled()
    gc.disable()
    SCons.Script.Main._build_targets = _build_targets_frozen
    SCons.SConsign.DB.__init__ = _db_init_frozen
