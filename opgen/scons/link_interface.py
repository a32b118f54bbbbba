"""What links against a shared library this build makes relinks when the library's link
interface changes (the symbols it exports), not whenever its bytes do.

SCons makes a program or extension depend on each library its LIBS finds, so an operator edit,
which relinks libopdispatch.so, relinked the Python extensions and test programs after it
(0.15-0.3 s on the edit's critical path), each to the same bytes: a module linked against a
shared library records its name, not its code. ``link_by_interface(env, linked, library)``
makes ``linked`` ignore ``library`` and depend instead on a stamp listing the library's defined
dynamic symbols (``nm -D``), rewritten only when that list changes; the stamp depends on the
library, so the order of the steps is kept.
"""
import subprocess

from opgen.scons.toolset.messages import shown
from opgen.writer import write_if_changed

_STAMPS = {}  # library node -> its interface stamp (one per library however many link it)


def _write_interface(target, source, env):
    run = subprocess.run(["nm", "-D", "--defined-only", "-P", source[0].abspath], capture_output=True, text=True)
    if run.returncode != 0:
        print(f"scons: *** [opgen] nm -D {source[0]} failed: {run.stderr.strip()}")
        return 2
    # "name type value size": the name and the type; addresses move with every edit.
    symbols = sorted({" ".join(line.split()[:2]) for line in run.stdout.splitlines() if line.strip()})
    write_if_changed(target[0].abspath, "\n".join(symbols) + "\n")
    return 0


def interface_of(env, library):
    """The stamp of ``library``'s link interface (``.<name>.interface`` beside it)."""
    if library not in _STAMPS:
        stamp = env.Command(library.dir.File(f".{library.name}.interface"), library,
                            env.Action(_write_interface, strfunction=lambda target, source, env: shown(
                                env, f"INTERFACE {source[0]}", f"[opgen] the exported symbols of {source[0]}")))
        _STAMPS[library] = stamp[0]
    return _STAMPS[library]


def link_by_interface(env, linked, library) -> None:
    """``linked`` (nodes) relink when ``library``'s exported symbols change, not its bytes."""
    env.Ignore(linked, library)
    env.Depends(linked, interface_of(env, library))


def built_library(env, name, directories):
    """The node of lib<name>.so in one of ``directories`` when this build makes it, else None."""
    for directory in directories:
        node = env.Dir(directory).File(f"{env.subst('$SHLIBPREFIX')}{name}{env.subst('$SHLIBSUFFIX')}")
        if node.has_builder():
            return node
    return None
