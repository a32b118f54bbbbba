"""Selective builds: a library of only the operators a program uses (issue 31's pure-Python core).

- ``names``      operator names as selections write them (aten::add.Tensor), resolved against a Model
- ``selection``  ``Selection``: the operators a file selects, each with its FILE:LINE
- ``load``       ``load_selection``: torchgen's selection yaml or a plain list, validated
- ``dump``       ``write_selection``: (operator, is_root) pairs as torchgen's selection yaml, deterministic
- ``includes``   ``#include`` lines and the group a per-group header names
- ``sources``    hand-written C++: the groups each source implements and calls; reading csrc/
- ``callees``    ``GeneratedCallees``: the groups a group's generated files call (rendered, scanned)
- ``closure``    ``close_selection``: the selection plus what it needs, each group with its reasons
- ``sizes``      ``object_sizes.json``: per-group and per-source object sizes a full build records
- ``report``     the text ``opgen select`` prints: summary and size report
"""
from .callees import GeneratedCallees, generated_callees
from .closure import Closure, Reason, ReasonKind, SourceReason, close_selection
from .dump import selection_yaml, write_selection
from .load import load_selection
from .selection import SelectedOperator, Selection
from .sources import HandWritten, index_sources, read_csrc

__all__ = ["Closure", "GeneratedCallees", "HandWritten", "Reason", "ReasonKind", "SelectedOperator", "Selection",
           "SourceReason", "close_selection", "generated_callees", "index_sources", "load_selection", "read_csrc",
           "selection_yaml", "write_selection"]
