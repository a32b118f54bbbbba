"""Every change opgen's plugin makes to SCons' own functions, in one place, and the check that
keeps them to the SCons versions they are tested on.

A patch replaces one SCons function (named in its entry below) with one that does what SCons
does and something more or less, for a reason its docstring gives. Each depends on SCons
internals, which change between releases (SCons 4.5's ``File.get_max_drift_csig`` returned None
for "no stored signature", 4.11's returns ""; a patch written for one made every object built in
a run look changed in the next under the other). So a patch is installed only when the running
SCons lies in its tested range (``TESTED``, what pyproject.toml accepts and CI runs the SCons
tests on, oldest and newest); outside it SCons' own behaviour stays, and the build says so in one
notice line per patch (``[opgen] SCons X is outside the tested range A..B: <patch> left off``).
``OPGEN_SCONS_PATCHES_OFF`` (patch names, comma-separated, or ``all``) leaves patches off too:
to compare a build with and without one.

The shipped patches:

* ``scan`` (``SCons.Node.Node.scan``): scan_rules.py's three rules for what a target's scan
  yields (unscanned codegen steps, folded sources, header closures); builds are correct without
  it, with more nodes and edges to walk.
* ``command_signature`` (``SCons.Executor.Executor.get_contents``): a group unit's compile
  command signed from one expansion per environment (command_signatures.py); always the bytes
  SCons' own expansion gives.
* ``max_drift_csig`` (``SCons.Node.FS.File.get_max_drift_csig``): a file built in this run is
  never given the previous build's content signature (rebuild.py): a correctness patch; without
  it a generated header rewritten within the second of the build before can leave stale objects.

site_scons/scons_patches.py, this repository's own (not shipped), gates its patches the same way.
"""
import os
import re

import SCons
import SCons.Executor
import SCons.Node
import SCons.Node.FS

from opgen.scons.toolset.messages import notice

# The oldest and the newest SCons the shipped patches are tested on: pyproject.toml accepts
# exactly this range, and CI runs the SCons tests on both ends.
TESTED = ("4.5.2", "4.11.1")
OFF_VARIABLE = "OPGEN_SCONS_PATCHES_OFF"


# ----- the version check -----

def version_tuple(text: str) -> tuple:
    """(4, 6, 0) from "4.6.0" or "4.6.0.post1": the leading numeric parts."""
    match = re.match(r"\d+(?:\.\d+)*", str(text))
    return tuple(int(part) for part in match.group().split(".")) if match else ()


def in_range(version: str, tested=TESTED) -> bool:
    oldest, newest = (version_tuple(v) for v in tested)
    return oldest <= version_tuple(version) <= newest


def switched_off(name: str, environ=None) -> bool:
    """Whether OPGEN_SCONS_PATCHES_OFF names ``name`` (or is ``all``)."""
    names = {n.strip() for n in (os.environ if environ is None else environ).get(OFF_VARIABLE, "").split(",")}
    return name in names or "all" in names


def in_tested_range(names, tested=TESTED, told=None) -> bool:
    """Whether the running SCons lies in ``tested`` (oldest, newest), where the patches ``names``
    are tested; when it does not, says so in one notice line (once per name in ``told``)."""
    if in_range(SCons.__version__, tested):
        return True
    untold = [name for name in names if told is None or name not in told]
    if untold:
        notice(f"[opgen] SCons {SCons.__version__} is outside the tested range {tested[0]}..{tested[1]}: "
               f"{', '.join(untold)} left off")
        if told is not None:
            told.update(untold)
    return False


def allowed(name: str, tested=TESTED, told=None) -> bool:
    """Whether the patch ``name`` may be installed: in its tested range, and not switched off."""
    return not switched_off(name) and in_tested_range([name], tested, told)


class Patch:
    """``owner.attribute`` (an SCons class or module) replaced by ``replacement``."""
    __slots__ = ("name", "owner", "attribute", "original", "replacement")

    def __init__(self, name, owner, attribute, replacement):
        self.name, self.owner, self.attribute, self.replacement = name, owner, attribute, replacement
        self.original = getattr(owner, attribute)

    def installed(self) -> bool:
        return getattr(self.owner, self.attribute) is self.replacement

    def install(self, tested=TESTED, told=None) -> bool:
        """Installs it when allowed; whether it is installed."""
        if not self.installed() and allowed(self.name, tested, told):
            setattr(self.owner, self.attribute, self.replacement)
        return self.installed()

    def remove(self) -> None:
        setattr(self.owner, self.attribute, self.original)


# ----- scan: SCons.Node.Node.scan -----

# Marks (attributes) that scan_rules.py sets and the patched scan reads.
UNSCANNED = "opgen_unscanned"  # a builder's: its targets have no implicit dependencies
FOLDED = "opgen_folded_sources"  # an object's attributes': the absolute paths its scan leaves out
CLOSURES = "opgen_header_closures"  # an object's attributes': [(root header node, its stamp node)]


def _scan_by_rules(self) -> None:
    """``Node.scan``, then the rules scan_rules.py marks nodes with: a target of an ``unscanned``
    builder gets no implicit dependencies without a lookup in the .sconsign (SCons' scan adds the
    stored ones, none, to every target of the step: a loop quadratic in the step's files); an
    object leaves its folded sources out and depends on a header closure's stamp instead of on
    the headers under the root."""
    if self.implicit is not None:  # scanned already (what follows ran then)
        return
    if getattr(getattr(self, "builder", None), UNSCANNED, False):
        self.implicit = []
        self.implicit_set = set()
        self._children_reset()
        return
    _SCAN.original(self)
    if self.implicit:
        _apply_folds(self)


def _apply_folds(self) -> None:
    """Leaves what the node's marks fold out of the implicit dependencies it was just given (a
    fresh scan's, or the stored ones: folded already, which this leaves as they are)."""
    kept = self.implicit
    folded = getattr(self.attributes, FOLDED, None)
    if folded:
        kept = [node for node in kept if not getattr(node, "name", "").endswith(".cpp") or node.get_abspath() not in folded]
    for root, stamp in getattr(self.attributes, CLOSURES, ()):
        if root in self.implicit_set:
            stamp.scan()
            covered = {root, *stamp.implicit}
            kept = [node for node in kept if node not in covered] + [stamp]
    if len(kept) != len(self.implicit) or any(a is not b for a, b in zip(kept, self.implicit)):
        self.implicit = kept
        self.implicit_set = set(kept)
        self._children_reset()


_SCAN = Patch("scan", SCons.Node.Node, "scan", _scan_by_rules)


# ----- command_signature: SCons.Executor.Executor.get_contents -----

COMMAND_FAMILY = "opgen_command_family"  # an object's attributes': its family (command_signatures.same_command)
CHECKS = 2  # objects whose template contents are compared with SCons' expansion before it is trusted
_TARGET = b"\x00opgen:target\x00"
_SOURCE = b"\x00opgen:source\x00"


class _Template:
    __slots__ = ("env", "actions", "contents", "checked")

    def __init__(self, env, actions, contents):
        self.env = env          # held, so its id cannot be reused by another environment
        self.actions = actions
        self.contents = contents  # None: not a template (SCons expands every object)
        self.checked = 0


templates: dict = {}  # (family, environment, actions, directories, suffixes) -> _Template


def _stem(node) -> bytes:
    name = node.name
    suffix = node.suffix
    return (name[: -len(suffix)] if suffix and name.endswith(suffix) else name).encode("utf-8")


def _cut(contents: bytes, target_stem: bytes, source_stem: bytes):
    if target_stem == source_stem:
        return contents.replace(target_stem, _TARGET)
    if target_stem in source_stem or source_stem in target_stem:
        return None  # which occurrence is which cannot be told
    return contents.replace(target_stem, _TARGET).replace(source_stem, _SOURCE)


def _command_contents(self):
    """``Executor.get_contents`` (the action's signature contents: its command expanded for the
    target and source, for every object of every run), for an object marked by ``same_command``: the first
    expansion in a family is kept with the names cut out, checked against SCons' own for the next
    ``CHECKS`` objects (dropped on any difference), then filled in with each object's names."""
    memo = self._memo
    if "get_contents" in memo:
        return memo["get_contents"]
    get_contents = _COMMAND_SIGNATURE.original
    targets, sources = self.get_all_targets(), self.get_all_sources()
    if len(targets) != 1 or len(sources) != 1:
        return get_contents(self)
    target, source = targets[0], sources[0]
    family = getattr(target.attributes, COMMAND_FAMILY, None)
    if family is None:
        return get_contents(self)
    env = self.get_build_env()
    actions = self.get_action_list()
    target_stem, source_stem = _stem(target), _stem(source)
    key = (family, id(env), tuple(map(id, actions)), target.dir, source.dir, target.suffix, source.suffix,
           target_stem == source_stem)
    template = templates.get(key)
    if template is None:
        contents = bytes(get_contents(self))
        templates[key] = _Template(env, actions, _cut(contents, target_stem, source_stem))
        return contents
    if template.env is not env or template.contents is None or len(template.actions) != len(actions) \
            or not all(a is b for a, b in zip(template.actions, actions)):
        return get_contents(self)
    derived = template.contents.replace(_TARGET, target_stem).replace(_SOURCE, source_stem)
    if template.checked < CHECKS:
        contents = bytes(get_contents(self))
        if contents != derived:
            template.contents = None
        else:
            template.checked += 1
        return contents
    memo["get_contents"] = derived
    return derived


_COMMAND_SIGNATURE = Patch("command_signature", SCons.Executor.Executor, "get_contents", _command_contents)


# ----- max_drift_csig: SCons.Node.FS.File.get_max_drift_csig -----

def _max_drift_csig(node):
    """``File.get_max_drift_csig``, except for a file built in this run: its bytes are new, so the
    stored signature (the previous build's) is never its signature, whatever its timestamp says
    (rebuild.py tells how a whole-second timestamp makes SCons take it). None is "no stored
    signature" to every caller in the tested range: 4.5's ``get_csig`` tests ``is None``, 4.11's
    ``not csig``, and ``get_ninfo`` ``if csig`` (4.11 itself returns "", which 4.5 would take for
    a signature: every file built in a run then looked changed to the next)."""
    if node.get_state() == SCons.Node.executed:
        return None
    return _MAX_DRIFT_CSIG.original(node)


_MAX_DRIFT_CSIG = Patch("max_drift_csig", SCons.Node.FS.File, "get_max_drift_csig", _max_drift_csig)

PATCHES = {patch.name: patch for patch in (_SCAN, _COMMAND_SIGNATURE, _MAX_DRIFT_CSIG)}
_told: set = set()  # the patches whose version notice this process printed


def install(name: str) -> bool:
    """Installs the shipped patch ``name`` when the running SCons is in its tested range (and
    OPGEN_SCONS_PATCHES_OFF does not name it); whether it is installed. Idempotent."""
    return PATCHES[name].install(TESTED, _told)
