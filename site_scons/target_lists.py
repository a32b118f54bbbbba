"""$TARGETS and $SOURCES iterate in linear time.

An executor's ``TSList`` (SCons/Executor.py) stands for its targets or sources and builds the
list anew on every access; it has no ``__iter__``, so iterating it goes through
``Sequence.__iter__``, one ``__getitem__`` (one new list of substitution proxies) per element:
quadratic in the number of targets. The taskmaster iterates every executor's $TARGETS to find its
side effects; for many codegen steps of several files each that builds proxies by the hundred
thousand per no-op (and a link of N objects is N² the same way: design.md). ``__iter__`` and ``__len__`` here
build the list once, as every other TSList method does.
"""
import SCons.Executor


def _iter(self):
    return iter(self.func())


def _len(self) -> int:
    return len(self.func())


def install():
    SCons.Executor.TSList.__iter__ = _iter
    SCons.Executor.TSList.__len__ = _len
