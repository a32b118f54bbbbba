"""The no-op shortcut: an SConstruct that starts with ``skip_if_unchanged()`` ends before its
SConscripts are read when nothing the last successful build of the same command read or wrote
has changed since (opgen/build_manifest.py); ``record_after_build()`` (at its end) writes that
build's manifest when the build ends well.

    import opgen.scons.noop
    opgen.scons.noop.skip_if_unchanged()      # first: before anything costly
    ...                                        # the build
    opgen.scons.noop.record_after_build()

What the manifest holds: every file of the graph below the build's targets (sources, the
implicit dependencies the scans found, the targets themselves), the SConscripts, every module
Python loaded and every file of the opgen package; the directories of all of them, of PATH and of
sys.path (a file added where a Glob, `auto` or an import looks); and the invocation: arguments
(less -j), directory, environment, interpreter, SCons' version and the GPUs present. Any
difference, or OPGEN_NOOP_SHORTCUT=off, and the SConscripts are read as always. A run that may
not end as the manifest says (one that fails, or is interrupted) has removed it first. Runs
that are not "build these targets" (-c, -n, -q, -h, --interactive, --tree, --debug, ...) never
take the shortcut and write no manifest (--debug=time only reports: it is a build); neither
does a graph with an AlwaysBuild node.

When the only files that changed are codegen inputs (``input_file``: the operator yaml,
tags.yaml, derivatives.yaml), the SConscripts are read, but ``frozen_groups()`` says so: the
codegen declares no step for a group the plan finds current, and the library declares such a
group's object as a file that stays as it is unless it depends on a file that may change
(opgen/scons/frozen.py). Everything else the graph holds was proved unchanged by the manifest.
``OPGEN_FROZEN_GROUPS=off`` declares every group's steps as always.
"""
import atexit
import os
import sys

import SCons
import SCons.Node
import SCons.Node.Alias
import SCons.Node.FS
import SCons.Script

from opgen.build_manifest import changed_files, invocation_key, read_manifest, remove_manifest, snapshot, write_manifest
from opgen.scons.toolset.build_output import build_target_nodes
from opgen.scons.toolset.cuda_probes import gpu_set
from opgen.scons.toolset.messages import report

# Beside .sconsign.dblite, SCons' own record: a failed build leaves build/ as it was.
MANIFEST = ".sconsign.noop.json"
SWITCH = "OPGEN_NOOP_SHORTCUT"
FROZEN_SWITCH = "OPGEN_FROZEN_GROUPS"
# Options of runs that are not "build these targets", or that build elsewhere: no shortcut.
NOT_A_BUILD = ("-c", "--clean", "--remove", "-n", "--no-exec", "--just-print", "--dry-run", "--recon", "-q",
               "--question", "-h", "-H", "--help", "--interactive", "--tree", "--debug", "--profile", "-u", "-U",
               "-D", "--up", "--search-up", "-C", "--directory", "-f", "--file", "--sconstruct", "--makefile",
               "--taskmastertrace", "--random", "--cache-show", "-k", "--keep-going", "-i", "--ignore-errors",
               "-s", "--silent", "--quiet")
_OPGEN_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# What this run's no-op would print after SCons' "is up to date" lines: opgen's reports
# (codegen.py adds its "[opgen] regenerated 0/N groups"), in the order they print (atexit: last first).
_noop_lines: list[str] = []
# Files this run opened for reading (an audit hook): the operator yaml, derivatives.yaml, a backend
# yaml, opgen.json, a selection, the sources a selection reads... what the SConscripts read, which
# are no nodes of the graph. The kernel file systems' own files are no inputs.
_read_files: set[str] = set()
_NOT_INPUTS = ("/proc/", "/sys/", "/dev/")
_cache_directories: set[str] = set()
_read_files_open = [False]  # whether the hook records (an audit hook cannot be removed once added)
_codegen_inputs: set[str] = set()
# The last build's manifest when only codegen inputs changed since: this run freezes what the
# plan proves unchanged, and its manifest keeps the files the frozen parts hold.
_frozen_since: list = [None]


def cache_directory(path) -> None:
    """A cache the build reads and refreshes (the codegen cache, the parsed models'): what it
    holds is keyed by content, so reading it changes no outcome, and its files are no inputs."""
    if path:
        _cache_directories.add(os.path.join(os.path.abspath(path), ""))


def input_file(*paths) -> None:
    """Codegen inputs: files the SConscripts read through a cache that validates them by their
    stat alone (the operator yaml's parse cache, derivatives.yaml's), which the audit hook never
    sees opened, and that reach the graph only through the codegen plan."""
    found = {os.path.abspath(path) for path in paths if path}
    _read_files.update(found)
    _codegen_inputs.update(found)


def frozen_groups() -> bool:
    """Whether only codegen inputs changed since the last successful build of this command: the
    groups the plan finds current, and the objects of their units, may be declared frozen."""
    return _frozen_since[0] is not None


def _audit(event, args) -> None:
    if event != "open" or not _read_files_open[0]:
        return
    path, mode, flags = (tuple(args) + (None, None))[:3]
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str):
        return  # a descriptor
    writing = ("w" in mode or "a" in mode or "+" in mode or "x" in mode) if isinstance(mode, str) else \
        bool(isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR))
    if not writing:
        path = os.path.abspath(path)  # now: SCons reads an SConscript from its own directory
        if not path.startswith(_NOT_INPUTS) and "__pycache__" not in path:  # bytecode: its .py is recorded
            _read_files.add(path)



def noop_line(line: str) -> None:
    """A report line a no-op of this build prints at its end."""
    _noop_lines.insert(0, line)


# Options that only report on a build: a run with them is a build like any other (the edit
# benchmark times its steps with --debug=time).
REPORTING_ONLY = ("--debug=time",)


def _plain(argv) -> bool:
    return not any(arg == option or arg.startswith(option + "=") or (len(option) == 2 and arg.startswith(option))
                   for arg in argv if arg.startswith("-") and arg not in REPORTING_ONLY for option in NOT_A_BUILD)


def _key(argv) -> str:
    """The invocation's digest; -j only schedules the same work."""
    kept, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg in ("-j", "--jobs"):
            skip = True
        elif not (arg.startswith("-j") or arg.startswith("--jobs=")):
            kept.append(arg)
    # The frozen-groups switch changes how much the build walks, not what it builds.
    environ = {name: value for name, value in os.environ.items() if name != FROZEN_SWITCH}
    return invocation_key(kept, os.getcwd(), environ, sys.executable, sys.version, SCons.__version__, gpu_set())


def _manifest_path() -> str:
    return os.path.join(os.getcwd(), MANIFEST)


def skip_if_unchanged() -> None:
    """Ends the run (exit status 0, printing what a no-op prints) when the manifest holds."""
    argv, path = sys.argv[1:], _manifest_path()
    if os.environ.get(SWITCH, "").lower() != "off" and _plain(argv):
        found = read_manifest(path)
        changed = changed_files(found, _key(argv)) if found is not None else None
        if changed is not None and changed and changed <= set(found.codegen_inputs) \
                and os.environ.get(FROZEN_SWITCH, "").lower() != "off":
            _frozen_since[0] = found
        if changed == frozenset():
            quiet = "-Q" in argv
            lines = ([] if quiet else ["scons: done reading SConscript files.", "scons: Building targets ..."])
            lines += [line for line in found.lines if line.startswith("scons: ")]
            lines += [] if quiet else ["scons: done building targets."]
            lines += [line for line in found.lines if not line.startswith("scons: ")]
            lines.append(f"[opgen] nothing changed since the last build ({len(found.files):,} files, "
                         f"{len(found.directories):,} directories): the SConscripts were not read "
                         f"({SWITCH}=off reads them)")
            sys.stdout.write("\n".join(lines) + "\n")
            sys.stdout.flush()
            SCons.Script.Exit(0)
    remove_manifest(path)  # this run decides now; it writes a manifest only if it ends well


def record_after_build() -> None:
    """At exit, a successful plain build writes its manifest (with the files read from now on)."""
    if not _read_files_open[0]:
        _read_files_open[0] = True
        sys.addaudithook(_audit)
    atexit.register(_record)


def _record() -> None:
    argv = sys.argv[1:]
    from SCons.Script import Main
    if (os.environ.get(SWITCH, "").lower() == "off" or not _plain(argv) or Main.exit_status != 0
            or SCons.Script.GetBuildFailures() or SCons.Script.GetOption("help")):
        return
    try:
        targets = build_target_nodes()
        files, directories, always = _graph_files(targets)
        if always:
            return
        _read_files_open[0] = False
        files |= {os.path.abspath(str(node.srcnode())) for node in SCons.Node.SConscriptNodes}
        files |= {path for path in _read_files if not path.startswith(tuple(_cache_directories))}
        files |= _loaded_modules() | _package_files(_OPGEN_PACKAGE) | _sconsign_files()
        previous = _frozen_since[0]
        if previous is not None:
            # The frozen groups' files and objects were no nodes this time; they are still the
            # build's. What a removed group had is gone.
            files |= {path for path in previous.files if os.path.exists(path)}
        directories |= {os.path.dirname(path) for path in files}
        directories |= {d for d in os.environ.get("PATH", "").split(os.pathsep) + sys.path if d and os.path.isdir(d)}
        lines = [f"scons: `{target}' is up to date." for target in SCons.Script.BUILD_TARGETS] + _noop_lines
        write_manifest(_manifest_path(), snapshot(_key(argv), files, directories, lines, _codegen_inputs))
    except Exception as exc:  # the shortcut is an optimisation: never fail a build that succeeded over it
        remove_manifest(_manifest_path())
        report(f"[opgen] warning: no no-op manifest written ({type(exc).__name__}: {exc})")


def _graph_files(roots):
    """(absolute paths of the File nodes below ``roots``, directories of Dir nodes, any AlwaysBuild)."""
    files, directories, seen = set(), set(), set()
    stack = list(roots)
    always = False
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        always = always or bool(getattr(node, "always_build", False))
        if isinstance(node, SCons.Node.FS.File):
            files.add(node.get_abspath())
            files.add(node.srcnode().get_abspath())  # a variant directory's source (duplicate=0) is read there
        elif isinstance(node, SCons.Node.FS.Dir):
            directories.add(node.get_abspath())
        executor = node.get_executor() if node.has_builder() else None
        if executor is not None:
            stack.extend(executor.get_all_targets())
            stack.extend(executor.get_all_sources())
        for children in (node.sources, node.depends, node.implicit, node.prerequisites,
                         getattr(node, "side_effects", None)):
            stack.extend(children or ())
        if isinstance(node, SCons.Node.Alias.Alias):
            stack.extend(node.children(scan=0))
    return files, directories, always


def _sconsign_files() -> set:
    """SCons' record of the last build (.sconsign.dblite): without it, everything rebuilds."""
    top = os.getcwd()
    return {os.path.join(top, name) for name in os.listdir(top) if name.startswith(".sconsign") and name != MANIFEST}


def _loaded_modules() -> set:
    return {os.path.abspath(module.__file__) for module in list(sys.modules.values())
            if isinstance(getattr(module, "__file__", None), str)}


def _package_files(root: str) -> set:
    """Every file of the package but its bytecode (templates, data the generator reads)."""
    found = set()
    for directory, subdirectories, names in os.walk(root):
        subdirectories[:] = [d for d in subdirectories if d != "__pycache__"]
        found.update(os.path.join(directory, name) for name in names)
    return found
