"""Builders whose targets can have no implicit dependencies skip SCons' scan of them.

A codegen step's only source is a Value and its action is a Python function: there is nothing
to scan, and no command whose program would be a dependency, so SCons' scan always finds no
implicit dependency. Yet with --implicit-cache, ``Node.scan`` still looks each target's stored
implicit dependencies up in the .sconsign, adds them (none) to every target of the step (a
quadratic loop over the step's ~10 files) and asks whether the target is up to date, for each
of the 12,733 files of PyTorch's 1,342 groups.

``unscanned(builder)`` marks a builder of such steps; a target of a marked builder gets its
empty list of implicit dependencies directly. Nothing else changes: the target is still asked
whether it is up to date when its children are done, as every target is.
"""
import SCons.Action
import SCons.Node

_MARK = "opgen_unscanned"
_scan = SCons.Node.Node.scan


def _scan_unless_unscanned(self) -> None:
    if self.implicit is None and getattr(getattr(self, "builder", None), _MARK, False):
        self.implicit = []
        self.implicit_set = set()
        self._children_reset()
        return
    _scan(self)


def unscanned(builder):
    """``builder``, marked: its action must be Python functions only, its sources Values, and it
    must have no scanners (what its targets could depend on implicitly is then nothing)."""
    actions = builder.action.list if isinstance(builder.action, SCons.Action.ListAction) else [builder.action]
    if not all(isinstance(a, SCons.Action.FunctionAction) for a in actions) or builder.source_scanner or builder.target_scanner:
        raise ValueError("only a builder of Python function actions without scanners has no implicit dependencies")
    setattr(builder, _MARK, True)
    if SCons.Node.Node.scan is not _scan_unless_unscanned:
        SCons.Node.Node.scan = _scan_unless_unscanned
    return builder
