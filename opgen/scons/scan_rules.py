"""Two rules for what SCons' scan of a target yields, for targets whose dependencies opgen knows.

**Unscanned codegen steps.** A codegen step's only source is a Value and its action is a Python
function: there is nothing to scan, and no command whose program would be a dependency, so SCons'
scan always finds no implicit dependency. Yet with --implicit-cache, ``Node.scan`` still looks
each target's stored implicit dependencies up in the .sconsign, adds them (none) to every target
of the step (a quadratic loop over the step's ~10 files) and asks whether the target is up to
date, for each of the 12,733 files of PyTorch's 1,342 groups. ``unscanned(builder)`` marks a
builder of such steps; a target of a marked builder gets its empty list of implicit dependencies
directly. The target is still asked whether it is up to date when its children are done, as
every target is.

**Folded sources.** A group's unit includes the group's schema and key sources, and names each
one's digest (templates/group_unit.cpp.j2), so the unit's bytes change whenever one of theirs
does. ``fold_included_sources(objects, paths)`` makes those sources no dependencies of the units'
objects: the scan still reads them (the headers they include stay dependencies), then leaves them
out of the object's implicit dependencies. With the codegen steps declaring them only when they
are missing (codegen.py), they are no build nodes at all: 6,700 of PyTorch's 14,300, each of which
a no-op walked, decided and recorded.
"""
import SCons.Action
import SCons.Node

_UNSCANNED = "opgen_unscanned"
_FOLDED = "opgen_folded_sources"  # an object's attribute: the absolute paths its scan leaves out
_scan = SCons.Node.Node.scan


def _scan_by_rules(self) -> None:
    if self.implicit is None and getattr(getattr(self, "builder", None), _UNSCANNED, False):
        self.implicit = []
        self.implicit_set = set()
        self._children_reset()
        return
    _scan(self)
    folded = getattr(self.attributes, _FOLDED, None)
    if folded and self.implicit:
        kept = [node for node in self.implicit
                if not getattr(node, "name", "").endswith(".cpp") or node.get_abspath() not in folded]
        if len(kept) != len(self.implicit):
            self.implicit = kept
            self.implicit_set = set(kept)
            self._children_reset()


def _install() -> None:
    if SCons.Node.Node.scan is not _scan_by_rules:
        SCons.Node.Node.scan = _scan_by_rules


def unscanned(builder):
    """``builder``, marked: its action must be Python functions only, its sources Values, and it
    must have no scanners (what its targets could depend on implicitly is then nothing)."""
    actions = builder.action.list if isinstance(builder.action, SCons.Action.ListAction) else [builder.action]
    if not all(isinstance(a, SCons.Action.FunctionAction) for a in actions) or builder.source_scanner or builder.target_scanner:
        raise ValueError("only a builder of Python function actions without scanners has no implicit dependencies")
    setattr(builder, _UNSCANNED, True)
    _install()
    return builder


def fold_included_sources(objects, paths) -> None:
    """Leaves the files at ``paths`` (absolute; C++ sources whose digests the objects' source
    names) out of ``objects``' implicit dependencies."""
    folded = frozenset(paths)
    if not folded:
        return
    for node in objects:
        setattr(node.attributes, _FOLDED, folded)
    _install()
