"""opgen's one link strategy: a library's operator groups go into a fixed number of static
archives by a hash of the group name (linking never expands thousands of $SOURCES, and adding a
group changes one archive), and the archives are linked whole into the shared library (without
--whole-archive the linker drops members nothing references, and with them the operators they
register).

The archives are thin and have no symbol index (`ar rcS --thin`, no ranlib): the members' paths,
not copies of them, and no index, which only a linker searching the archive reads. A one-operator
edit re-archives one shard: copying and indexing its ~20 MB of members took 0.55 s on PyTorch's
yaml, listing them takes a few milliseconds, and the linker reads the objects where they are.

Sections nothing reaches are dropped (--gc-sections over the objects' per-function sections,
flags.py). A shared library's roots are its exported symbols and its static initializers, so
a full build loses next to nothing (5.72 -> 5.69 MB on our yaml, the same link time); a
selective build hides the kernels of the groups it does not register (opgen/selection/exports.py),
which then go. The flags keep objects and library byte-stable: the version script is named from
the project's top and the link map is outside the command's signature (a selective library built
in two checkouts: the same bytes).
"""
import xxhash

from opgen.scons.rebuild import judged_by_policy

ARCHIVE_SHARDS = 16


def shard_of(group: str) -> int:
    return xxhash.xxh3_64_intdigest(group.encode()) % ARCHIVE_SHARDS


def archives(env, objects_by_group, archive_dir):
    """Static archives of the groups' objects, ARCHIVE_SHARDS of them, by a hash of the group name."""
    shards: dict[int, list] = {}
    for group in sorted(objects_by_group):
        shards.setdefault(shard_of(group), []).extend(objects_by_group[group])
    env = judged_by_policy(env)  # a clone
    env["ARFLAGS"] = "rcS --thin"
    env["RANLIBCOM"] = ""  # an empty command: SCons runs nothing
    return [env.StaticLibrary(f"{archive_dir}/opgen_shard{index:02d}", objects)[0]
            for index, objects in sorted(shards.items())]


def whole_archive_library(env, target, objects, group_archives, version_script=None, link_map=None):
    """A shared library of ``objects`` and every member of ``group_archives``; ``version_script``:
    a file node of symbols made local (a selective build's unregistered kernels, exports.py);
    ``link_map``: a path where the linker writes its map (opgen/link_map.py reads lld's)."""
    link_env = judged_by_policy(env).Clone(OPGEN_ARCHIVES=group_archives)
    link_env.Append(_OPGEN_WHOLE_ARCHIVES="-Wl,--whole-archive ${_concat('', OPGEN_ARCHIVES, '', __env__)} -Wl,--no-whole-archive")
    link_env["SHLINKCOM"] = link_env["SHLINKCOM"].replace("$SOURCES", "$SOURCES $_OPGEN_WHOLE_ARCHIVES")
    # Every symbol resolved at link time: a function no object defines (a view's functional
    # inverse, a runtime helper) is a link error naming it, not a library that fails to load.
    link_env.Append(SHLINKFLAGS=["-Wl,--no-undefined", "-Wl,--gc-sections"])
    if version_script is not None:
        link_env.Append(SHLINKFLAGS=[f"-Wl,--version-script={version_script.path}"])
    if link_map is not None:
        # Outside the command's signature: asking for a map changes no byte of the library.
        link_env.Append(SHLINKFLAGS=["$(", f"-Wl,-Map,{link_env.File(link_map).path}", "$)"])
    library = link_env.SharedLibrary(target, objects)
    if link_map is not None:
        link_env.SideEffect(link_map, library)
    if version_script is not None:
        link_env.Depends(library, version_script)
    # On the members too: a thin archive's bytes are its members' names and sizes, the same after
    # an edit that changes a number in one of them, and a built file is judged by its content.
    link_env.Depends(library, group_archives + [member for archive in group_archives for member in archive.sources])
    return library
