"""Three rules for what SCons' scan of a target yields, for targets whose dependencies opgen knows.

**Unscanned codegen steps.** A codegen step's only source is a Value and its action is a Python
function: there is nothing to scan, and no command whose program would be a dependency, so SCons'
scan always finds no implicit dependency. Yet with --implicit-cache, ``Node.scan`` still looks
each target's stored implicit dependencies up in the .sconsign, adds them (none) to every target
of the step (a quadratic loop over the step's ~10 files) and asks whether the target is up to
date, for each file of every group. ``unscanned(builder)`` marks a
builder of such steps; a target of a marked builder gets its empty list of implicit dependencies
directly. The target is still asked whether it is up to date when its children are done, as
every target is.

**Folded sources.** A group's unit includes the group's schema and key sources, and names each
one's digest (templates/group_unit.cpp.j2), so the unit's bytes change whenever one of theirs
does. ``fold_included_sources(objects, paths)`` makes those sources no dependencies of the units'
objects: the scan still reads them (the headers they include stay dependencies), then leaves them
out of the object's implicit dependencies. With the codegen steps declaring them only when they
are missing (codegen.py), they are no build nodes at all: nodes each of which a no-op would
walk, decide and record.

**Header closures.** Every group unit includes the runtime's registration header, and with it
the same runtime headers; most also include the autograd support header and its own. On
PyTorch's yaml those were most of the edges a no-op walked, each stored, looked up, decided and
recorded again (docs/benchmarks.md, "Figures behind the code"). ``header_closures(env, roots, dir)``
declares, for each root header, a stamp listing the content signature of the root and of every
header the C scanner finds under it (the stamp's own scan, with the objects' CPPPATH);
``fold_header_closures(objects, closures)`` makes an object whose scan finds a root depend on
that root's stamp instead of on the root and the headers under it. Exact: the object's scan is
transitive, so it found every header under the root too, and any of them changing changes the
stamp's bytes.
"""
import os

import SCons.Action
import SCons.Tool

from opgen.scons import patches
from opgen.scons.patches import CLOSURES as _CLOSURES, FOLDED as _FOLDED, UNSCANNED as _UNSCANNED
from opgen.scons.toolset.messages import shown
from opgen.writer import write_if_changed

_CLOSURE_BASE = "opgen_closure_base"  # a stamp's attribute: the include directory its root was found in


def _install() -> None:
    """The rules are applied by a patch of SCons' ``Node.scan`` (patches.py: ``scan``); where it
    is left off, SCons scans as it does: the same build, with more nodes and edges to walk."""
    patches.install("scan")


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


def _write_closure(target, source, env):
    """The stamp's bytes: each header it covers (its children: the root and what the root's
    scan found) with its content signature, one a line, sorted; paths from the include directory
    the root was found in, so the bytes are the same in every checkout and install."""
    base = getattr(target[0].attributes, _CLOSURE_BASE)
    lines = sorted(f"{os.path.relpath(child.get_abspath(), base)} {child.get_csig()}\n" for child in target[0].children())
    write_if_changed(target[0].get_abspath(), "".join(lines))
    return 0


def _describe_closure(target, source, env):
    return shown(env, f"HEADERS {source[0]}", f"[opgen] the headers under {source[0]}: {target[0]}")


def header_closures(env, roots, stamp_dir) -> list:
    """[(root, stamp)] for each of ``roots`` (header names found on ``env``'s CPPPATH; those not
    found are left out): the stamp at <stamp_dir>/<root>.closure, scanned as the objects built
    with ``env`` are."""
    closures = []
    search = [env.Dir(d) for d in env.Flatten(env.get("CPPPATH", []))]
    for name in roots:
        root = env.FindFile(name, search)
        if root is None:
            continue
        stamp = env.Command(os.path.join(stamp_dir, name + ".closure"), root,
                            env.Action(_write_closure, strfunction=_describe_closure), source_scanner=SCons.Tool.CScanner)
        setattr(stamp[0].attributes, _CLOSURE_BASE, root.get_abspath()[:-len(name)].rstrip(os.sep) or os.sep)
        closures.append((root, stamp[0]))
    return closures


def fold_header_closures(objects, closures) -> None:
    """``objects`` whose scan finds one of the roots of ``closures`` (header_closures) depend on
    its stamp instead of on the root and the headers under it."""
    if not closures:
        return
    closures = tuple(closures)
    for node in objects:
        setattr(node.attributes, _CLOSURES, closures)
    _install()
