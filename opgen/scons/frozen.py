"""Frozen groups: a build after an edit of the operator yaml alone walks only what may change.

On PyTorch's yaml a one-operator edit declared 1,342 codegen steps and 1,342 objects (~7,500
file nodes) for SCons to find all but one group's up to date: reading and walking them was most
of the edit's wall time (docs/benchmarks.md, "The edit loop, issue 40"). When the no-op manifest
proves that nothing but codegen inputs changed since the last successful build of the same
command (noop.frozen_groups), the graph can say what it already knows:

- a group the plan finds current (its key recorded, its files present) gets no codegen step:
  its files are plain files (codegen.py);
- its unit's object, and a hand-written kernel's, is declared as the file it is, with no
  builder, when the .sconsign records it built from that source and none of its recorded
  dependencies is a generated file that may change this run: a file of a group whose key
  changed, an umbrella header, a backend's stand-in header (``frozen_object``). Everything else it depends on (the runtime's headers, the
  precompiled header, the compiler) is a file the manifest proved unchanged, or made from them
  only.

SCons still decides everything it is shown: the archives and the library see a frozen object's
signature as before, and a frozen file's .sconsign entry keeps its build information (SCons
merges it into a source file's record), so the next build that declares it as a target finds
it up to date.
"""
import os

import SCons.SConsign

from opgen.scons.noop import frozen_groups

__all__ = ["FROZEN", "frozen_groups", "frozen_object", "open_build_record"]


class FrozenFiles:
    """This run's generated files that no step declares as its target: the files of the groups
    the codegen froze, under the directories where generated files are written (each codegen
    output directory, a backend's stand-in headers)."""

    def __init__(self):
        self.roots: tuple[str, ...] = ()
        self.paths: set[str] = set()

    def generated_under(self, directory: str) -> None:
        root = os.path.join(os.path.abspath(directory), "")
        if root not in self.roots:
            self.roots += (root,)

    def add(self, paths) -> None:
        self.paths.update(paths)

    def unchanged(self, path: str) -> bool:
        """Whether ``path`` (absolute) cannot change this run: a frozen file, or not a generated one."""
        return path in self.paths or not path.startswith(self.roots)


FROZEN = FrozenFiles()


def frozen_object(env, object_path: str, source, frozen: FrozenFiles = FROZEN):
    """The shared object at ``object_path`` as a plain file node, when the .sconsign records it built
    from ``source`` and every dependency it recorded is unchanged this run; otherwise None (the
    caller declares its compile as always)."""
    node = env.File(object_path)
    if not os.path.exists(node.abspath):
        return None
    open_build_record(env)
    binfo = getattr(node.get_stored_info(), "binfo", None)
    sources = getattr(binfo, "bsources", None)
    top = os.path.join(env.Dir("#").abspath, "")
    # A source in a variant directory (duplicate=0) is recorded by its path in the source tree.
    if not sources or len(sources) != 1 or _absolute(top, sources[0]) not in (source.abspath, source.srcnode().abspath):
        return None
    for dependency in (*getattr(binfo, "bdepends", ()), *getattr(binfo, "bimplicit", ())):
        if not frozen.unchanged(_absolute(top, dependency)):
            return None
    node.attributes.shared = 1  # what SCons' shared-object emitter marks: a shared library takes it
    return node


def _absolute(top: str, stored) -> str:
    """A dependency as the .sconsign stores it (a normalized path from the top directory ``top``,
    which ends in a separator, or absolute; a node under --implicit-cache), absolute."""
    path = str(stored)
    if path.startswith(os.sep):
        return path
    return os.path.normpath(top + path) if path.startswith(os.pardir) else top + path


def open_build_record(env) -> None:
    """Opens SCons' .sconsign database where SCons will write it, before anything reads an entry
    while the SConscripts are read. SCons opens it by a path relative to the working directory
    the first time an entry is read, and while an SConscript in a subdirectory is read the working
    directory is that one: a database opened there is a new, empty one, and every target rebuilds."""
    if SCons.SConsign.DataBase:
        return  # open already (a process builds one tree)
    top = env.Dir("#")
    here = os.getcwd()
    os.chdir(top.abspath)
    try:
        SCons.SConsign.Get_DataBase(top)
    finally:
        os.chdir(here)
