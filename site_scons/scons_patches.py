"""This repository's own patches of SCons' functions (not shipped: the plugin's are in
opgen/scons/patches.py), all in one module: each makes a no-op build of a large operator set
cheaper without changing what SCons decides. site_init.py installs them before the SConscripts
are read.

Each patch below names the SCons functions it replaces and says what it changes and why. They
lean on SCons internals that change between releases (4.5's dblite class and ``TSList`` are not
4.11's), so they are installed only on the SCons versions they are tested on (``TESTED``; the
repository's requirements.txt pins the newest); on any other, SCons' own behaviour stays and the
build says so in one notice line. ``OPGEN_SCONS_PATCHES_OFF`` (names, comma-separated, or
``all``) leaves patches off too, to measure each one's share of a no-op
(docs/benchmarks.md#scons-patches).
"""
import gc

import SCons.Executor
import SCons.Node
import SCons.Node.FS
import SCons.SConsign
import SCons.Script.Main
import SCons.Taskmaster
import SCons.Tool.gcc
import SCons.Util
import SCons.dblite

from opgen.scons import patches

TESTED = ("4.11.1", "4.11.1")  # the oldest and newest SCons these patches are tested on
_MISSING = object()
# SCons' own functions that the patches call, kept by install()
_store = _sync = _store_info = _changed = _visited = _prepare = _postprocess = None
_str = _side_effects = _build_targets = _db_init = _detect_version = None


# ===== sconsign_unchanged: SCons.dblite._Dblite.__setitem__ and .sync, SCons.SConsign.Base.store_info
#
# .sconsign.dblite is rewritten only when one of its entries changed, and an unchanged entry costs
# a comparison, not a pickle.
#
# SCons stores the signatures of every node it visits, changed or not, and syncs the whole
# database at the end of every run: each directory's entries are merged with what the nodes
# computed, pickled whole and stored. A no-op over PyTorch's groups pickled every entry to find
# them all as they were, a large share of the no-op (docs/benchmarks.md, "Figures behind the code").
#
# Here a node whose build and node info equal what its directory's entry holds is not queued
# for the merge at all (``store_info``): the merge would overwrite each stored field with an equal
# value. A directory none of whose entries changed is never marked dirty, so it is neither
# merged nor pickled; one that is dirty is pickled, and its bytes are stored only when they differ
# from what the file holds (``__setitem__``); the file is written only when something was stored
# (``sync``). SCons still decides everything; a run that changes nothing leaves the file as it was.


_NODE_LISTS = ("bsources", "bdepends", "bimplicit")
_SIGNATURE_LISTS = ("bsourcesigs", "bdependsigs", "bimplicitsigs")
_STRINGS = ("bact", "bactsig")
_fields_of: dict = {}  # node info class -> the slots its __getstate__ pickles


# getattr defaults: on a dblite without these attributes (another SCons) every store and sync happens.
def _store_if_changed(self, key, value):
    if getattr(self, "_dict", {}).get(key) != value:
        _store(self, key, value)


def _sync_if_stored(self):
    if getattr(self, "_needs_sync", True):
        _sync(self)


def _store_info_if_changed(self, filename, node):
    """Base.store_info, unless the merge it queues would leave ``filename``'s entry as it is."""
    old = self.entries.get(filename)
    if old is None or not _unchanged(old, node):
        _store_info(self, filename, node)


def _unchanged(entry, node) -> bool:
    """Whether merging ``node``'s build info and node info into ``entry`` (Base.store_info and
    Base.merge: every field the node has overwrites the entry's) changes nothing."""
    try:
        old_binfo, old_ninfo = entry.binfo, entry.ninfo
    except AttributeError:
        return False
    new_binfo, new_ninfo = node.get_binfo(), node.get_ninfo()
    if not _same_node_info(old_ninfo, new_ninfo):
        return False
    if type(old_binfo) is not type(new_binfo):
        return False
    for name in _STRINGS:
        new = getattr(new_binfo, name, _MISSING)
        if new is not _MISSING and getattr(old_binfo, name, _MISSING) != new:
            return False
    for name in _SIGNATURE_LISTS:
        new = getattr(new_binfo, name, _MISSING)
        if new is _MISSING:
            continue
        old = getattr(old_binfo, name, _MISSING)
        if old is _MISSING or len(old) != len(new) or not all(map(_same_node_info, old, new)):
            return False
    for name in _NODE_LISTS:
        new = getattr(new_binfo, name, _MISSING)
        if new is _MISSING:
            continue
        old = getattr(old_binfo, name, _MISSING)
        # Stored as strings (convert_to_sconsign: str(node)); --implicit-cache turns the stored
        # lists into nodes in place (prepare_dependencies): a node is its path's one node.
        if old is _MISSING or len(old) != len(new) or not all(
                a is b or str(a) == str(b) for a, b in zip(old, new)):
            return False
    return True


def _same_node_info(old, new) -> bool:
    if old is new:
        return True
    kind = type(new)
    if type(old) is not kind:
        return False
    known = _fields_of.get(kind)
    if known is None:
        known = _fields_of[kind] = (
            tuple(name for klass in kind.mro() for name in getattr(klass, "__slots__", ()) if name not in ("__weakref__", "__dict__")),
            hasattr(new, "__dict__"))
    fields, has_dict = known
    try:  # the usual case: every field set on both
        for name in fields:
            if getattr(new, name) != getattr(old, name):
                return False
    except AttributeError:
        for name in fields:
            value = getattr(new, name, _MISSING)
            if value is not _MISSING and getattr(old, name, _MISSING) != value:
                return False
    if has_dict and new.__dict__:
        old_extra = getattr(old, "__dict__", {})
        return all(old_extra.get(name, _MISSING) == value for name, value in new.__dict__.items())
    return True



# ===== sconsign_fast_load: SCons.Node.NodeInfoBase/BuildInfoBase/FS.FileBuildInfo.__setstate__
#
# Node and build infos are restored from the .sconsign without a Python call per field.
#
# Loading the .sconsign of a PyTorch-sized build unpickles tens of thousands of entries and node
# infos; each object's ``__setstate__`` sets its fields one ``setattr`` at a time, and a file's
# build info routes every one through ``FileBuildInfo.__setattr__`` (which forgets the object's
# dependency map when any other field changes): a Python call per field, every run.
#
# Here ``__setstate__`` sets the slots directly and, for a build info, forgets the dependency map
# once at the end when any other field was set: the object ends as SCons' own ``__setstate__``
# leaves it (SCons' merges of infos go through ``__setstate__`` too, with the same result).


_set = object.__setattr__
_delete = object.__delattr__
_SKIPPED = ("_version_id", "__weakref__")


def _node_info_setstate(self, state) -> None:
    for key, value in state.items():
        if key not in _SKIPPED:
            _set(self, key, value)


def _file_build_info_setstate(self, state) -> None:
    other = False
    for key, value in state.items():
        if key not in _SKIPPED:
            _set(self, key, value)
            other = other or key != "dependency_map"
    if other:
        try:
            _delete(self, "dependency_map")
        except AttributeError:
            pass



# ===== decide_once: SCons.Node.FS.File.changed and .visited, SCons.Taskmaster.Task.prepare and .postprocess
#
# Decide whether a file target is out of date once, not twice, while nothing is being built; and
# record an up-to-date file's signatures once, not twice.
#
# With --implicit-cache (SConstruct sets it) SCons asks every target whether it is up to date
# twice: when the taskmaster first meets it (``Node.scan``: are the implicit dependencies stored
# by the last build still valid?) and again when its children are done (``make_ready_current``).
# ``File.changed`` recomputes the answer each time: the build info, every child's decider and the
# signature of the action (a compile command is costly to expand). A no-op over PyTorch's
# groups made about two such calls per target (docs/benchmarks.md).
#
# Here ``File.changed()`` remembers its answer together with the count of tasks that have started
# or finished executing so far, and gives it again while that count is the same. Whether a
# target changed depends only on its children's signatures, its stored info and its action, and
# only an executed task can change a child: a child built in between makes the target wait for
# it (the count moves on when its task finishes, under the taskmaster's lock, before the target is
# asked again), and any task that runs in between moves the count on too, so its answer is then
# computed again, as SCons would. A node that is built clears its memo (``Node.clear``), and with
# it this answer.
#
# Likewise ``File.visited()`` (the node's content signature, timestamp and size, queued for the
# .sconsign) runs for an up-to-date target when the taskmaster finds it up to date and again when
# its task completes, in the same critical section; the second run, with no task run in between,
# would record the same values again and is skipped.


_MEMO = "opgen_changed"
_VISITED = "opgen_visited"
_UP_TO_DATE = SCons.Node.up_to_date
_tasks_run = 0  # tasks that were found out of date (at prepare) or executed (at postprocess) so far


def _changed_once(self, node=None, allowcache=False):
    if node is not None:
        return _changed(self, node, allowcache)
    memo = self._memo
    if "changed" in memo:  # File.changed's own cache: kept once the target's executor is released
        return memo["changed"]
    remembered = memo.get(_MEMO)
    if remembered is not None and remembered[0] == _tasks_run:
        result = remembered[1]
    else:
        result = _changed(self, None, False)
        memo[_MEMO] = (_tasks_run, result)
    if allowcache:
        memo["changed"] = result
    return result


def _visited_once(self):
    if self._memo.get(_VISITED) == _tasks_run and self.get_state() == _UP_TO_DATE:
        return
    _visited(self)
    self._memo[_VISITED] = _tasks_run


def _count_if_running(task) -> None:
    global _tasks_run
    if any(t.get_state() != _UP_TO_DATE for t in task.targets):
        _tasks_run += 1


def _prepare_counted(self):
    result = _prepare(self)
    _count_if_running(self)
    return result


def _postprocess_counted(self):
    _count_if_running(self)
    return _postprocess(self)



# ===== executor_memos: SCons.Executor.Executor.__str__ and .get_action_side_effects
#
# An executor describes itself and finds its side effects once, not once per target.
#
# ``Node.get_binfo`` stores ``str(executor)`` (the action's unexpanded command, for
# --debug=explain and the .sconsign) for every target, and SCons computes it anew each time: once
# per file of a codegen step, for every target of a no-op. Here it is kept in the
# executor's memo, beside the command signature SCons already keeps there (``get_contents``), and
# forgotten with it (``cleanup``, ``nullify``).
#
# The taskmaster asks every executor for the side effects of its action's targets; SCons builds
# the $TARGETS substitution variables (eight lazy lists) to iterate them through substitution
# proxies. When the action's targets are $TARGETS (every action but a batch builder's), they are
# the executor's targets: their side effects are read from them directly.


_STR = "opgen_str"


def _str_once(self) -> str:
    memo = self._memo
    try:
        return memo[_STR]
    except KeyError:
        text = memo[_STR] = _str(self)
        return text


def _action_side_effects(self):
    if self.action_list and self.action_list[0].get_targets(self.env, self) in ("$TARGETS", "TARGETS"):
        result = SCons.Util.UniqueList([])
        for target in self.get_all_targets():
            result.extend(target.side_effects)
        return result
    return _side_effects(self)



# ===== target_lists: SCons.Executor.TSList.__iter__ and .__len__
#
# $TARGETS and $SOURCES iterate in linear time.
#
# An executor's ``TSList`` (SCons/Executor.py) stands for its targets or sources and builds the
# list anew on every access; it has no ``__iter__``, so iterating it goes through
# ``Sequence.__iter__``, one ``__getitem__`` (one new list of substitution proxies) per element:
# quadratic in the number of targets. The taskmaster iterates every executor's $TARGETS to find its
# side effects; for PyTorch's codegen steps of several files each that built a proxy per file
# and element, every no-op (and a link of N objects is N² the same way: design.md). ``__iter__`` and ``__len__`` here
# build the list once, as every other TSList method does.


def _iter(self):
    return iter(self.func())


def _len(self) -> int:
    return len(self.func())



# ===== resident_objects: SCons.Script.Main._build_targets, SCons.SConsign.DB.__init__ (and gc paused)
#
# Keep Python's cyclic garbage collector off the objects an SCons run keeps until it exits.
#
# A PyTorch-sized build holds its nodes with their executors, build and node infos, and the
# .sconsign's stored entries and signatures, all alive until the process exits. Every full
# collection (generation 2) walks all of them, and the allocations of the walk trigger them: a
# no-op over PyTorch's groups spent more time in full collections than in any part of SCons
# itself (docs/benchmarks.md, "Figures behind the code").
#
# Two moments make most of those objects: reading the SConscripts (the nodes) and loading each
# directory's .sconsign entries. Neither collects (the collector is paused from site_init until
# the SConscripts are read, and while a directory's entries are unpickled), and after each
# ``gc.freeze()`` moves everything alive to the permanent generation, which collections never
# walk. Garbage made afterwards is collected as before. Frozen objects are never freed: they live
# until the end of the run anyway, and the few cycles the SConscripts drop (a discarded
# environment) stay as the price of not walking the rest. (opgen's own model gets the same
# treatment: opgen/collector.py.)


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



# ===== compiler_probes: SCons.Tool.gcc.detect_version
#
# One `--version` run per compiler and process.
#
# SCons' gcc and g++ tools ask the compiler for its version in exists() and again in generate(),
# for every environment that loads them: a run of `gcc/g++ --version` each, in every no-op
# build. The compiler cannot change while SCons runs, so the answer is remembered
# by the command and the PATH it is looked up on.


_versions: dict = {}


def _remembered_version(env, cc):
    key = (env.subst(cc), str(env["ENV"].get("PATH", "")))
    if key not in _versions:
        _versions[key] = _detect_version(env, cc)
    return _versions[key]


# ===== installing

_originals: dict = {}  # (owner, attribute) -> SCons' own function, kept from the first replacement


def _replace(owner, attribute, replacement):
    """Puts ``replacement`` in place of ``owner.attribute``; returns SCons' own function."""
    original = _originals.setdefault((owner, attribute), getattr(owner, attribute))
    setattr(owner, attribute, replacement)
    return original


def _install_sconsign_unchanged():
    global _store, _sync, _store_info
    _store = _replace(SCons.dblite._Dblite, "__setitem__", _store_if_changed)
    _sync = _replace(SCons.dblite._Dblite, "sync", _sync_if_stored)
    _store_info = _replace(SCons.SConsign.Base, "store_info", _store_info_if_changed)


def _install_sconsign_fast_load():
    _replace(SCons.Node.NodeInfoBase, "__setstate__", _node_info_setstate)
    _replace(SCons.Node.BuildInfoBase, "__setstate__", _node_info_setstate)  # no __setattr__ of its own
    _replace(SCons.Node.FS.FileBuildInfo, "__setstate__", _file_build_info_setstate)


def _install_decide_once():
    global _changed, _visited, _prepare, _postprocess
    _changed = _replace(SCons.Node.FS.File, "changed", _changed_once)
    _visited = _replace(SCons.Node.FS.File, "visited", _visited_once)
    _prepare = _replace(SCons.Taskmaster.Task, "prepare", _prepare_counted)
    _postprocess = _replace(SCons.Taskmaster.Task, "postprocess", _postprocess_counted)


def _install_executor_memos():
    global _str, _side_effects
    _str = _replace(SCons.Executor.Executor, "__str__", _str_once)
    _side_effects = _replace(SCons.Executor.Executor, "get_action_side_effects", _action_side_effects)


def _install_target_lists():
    _replace(SCons.Executor.TSList, "__iter__", _iter)
    _replace(SCons.Executor.TSList, "__len__", _len)


def _install_resident_objects():
    """Also pauses the collector until the SConscripts are read (install it before they are)."""
    global _build_targets, _db_init, _enabled
    _enabled = gc.isenabled()
    gc.disable()
    _build_targets = _replace(SCons.Script.Main, "_build_targets", _build_targets_frozen)
    _db_init = _replace(SCons.SConsign.DB, "__init__", _db_init_frozen)


def _install_compiler_probes():
    global _detect_version
    # gcc.py calls it by its module-global name, gxx.py as gcc.detect_version: both see this one.
    _detect_version = _replace(SCons.Tool.gcc, "detect_version", _remembered_version)


PATCHES = {
    "sconsign_unchanged": _install_sconsign_unchanged,
    "sconsign_fast_load": _install_sconsign_fast_load,
    "decide_once": _install_decide_once,
    "executor_memos": _install_executor_memos,
    "target_lists": _install_target_lists,
    "resident_objects": _install_resident_objects,
    "compiler_probes": _install_compiler_probes,
}


def install() -> list:
    """Installs every patch that OPGEN_SCONS_PATCHES_OFF does not name, when the running SCons
    is in ``TESTED`` (else one notice line names them); returns the names installed."""
    names = [name for name in PATCHES if not patches.switched_off(name)]
    if not names or not patches.in_tested_range(names, TESTED):
        return []
    for name in names:
        PATCHES[name]()
    return names
