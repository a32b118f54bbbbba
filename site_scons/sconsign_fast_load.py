"""Node and build infos are restored from the .sconsign without a Python call per field.

Loading the .sconsign of a PyTorch-sized build unpickles tens of thousands of entries and node
infos; each object's ``__setstate__`` sets its fields one ``setattr`` at a time, and a file's
build info routes every one through ``FileBuildInfo.__setattr__`` (which forgets the object's
dependency map when any other field changes): a Python call per field, every run.

Here ``__setstate__`` sets the slots directly and, for a build info, forgets the dependency map
once at the end when any other field was set: the object ends as SCons' own ``__setstate__``
leaves it (SCons' merges of infos go through ``__setstate__`` too, with the same result).
"""
import SCons.Node
import SCons.Node.FS

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


def install():
    SCons.Node.NodeInfoBase.__setstate__ = _node_info_setstate
    SCons.Node.BuildInfoBase.__setstate__ = _node_info_setstate  # no __setattr__ of its own
    SCons.Node.FS.FileBuildInfo.__setstate__ = _file_build_info_setstate
