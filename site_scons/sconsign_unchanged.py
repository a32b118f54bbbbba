""".sconsign.dblite is rewritten only when one of its entries changed, and an unchanged entry costs
a comparison, not a pickle.

SCons stores the signatures of every node it visits, changed or not, and syncs the whole
database at the end of every run: each directory's entries are merged with what the nodes
computed, pickled whole and stored. A no-op over PyTorch's groups pickled every entry to find
them all as they were, a large share of the no-op (docs/benchmarks.md).

Here a node whose build and node info equal what its directory's entry holds is not queued
for the merge at all (``store_info``): the merge would overwrite each stored field with an equal
value. A directory none of whose entries changed is never marked dirty, so it is neither
merged nor pickled; one that is dirty is pickled, and its bytes are stored only when they differ
from what the file holds (``__setitem__``); the file is written only when something was stored
(``sync``). SCons still decides everything; a run that changes nothing leaves the file as it was.
"""
import SCons.SConsign
import SCons.dblite

_Dblite = SCons.dblite._Dblite
_store = _Dblite.__setitem__
_sync = _Dblite.sync
_store_info = SCons.SConsign.Base.store_info

_NODE_LISTS = ("bsources", "bdepends", "bimplicit")
_SIGNATURE_LISTS = ("bsourcesigs", "bdependsigs", "bimplicitsigs")
_STRINGS = ("bact", "bactsig")
_MISSING = object()
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


def install():
    _Dblite.__setitem__ = _store_if_changed
    _Dblite.sync = _sync_if_stored
    SCons.SConsign.Base.store_info = _store_info_if_changed
