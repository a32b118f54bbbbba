"""What an operator library does about kernels its yaml names that no source defines
(``missing_kernels=`` of OpgenOperatorLibrary, else $OPGEN_MISSING_KERNELS; default "error"):

- "error": once the groups and kernels are compiled, and before linking, the build stops with
  exit status 2 and one ``FILE:LINE: error:`` line per missing kernel (its operator's yaml entry,
  the key, the C++ signature to define);
- "stub": <gen_dir>/missing_kernels.cpp defines each one, raising op::Error("CPU kernel add_out
  of aten::add.out is not implemented"); it is compiled and linked into the library, and the
  build reports "[opgen] missing kernels: N stubbed".

Which kernels are missing comes from the objects (opgen/link_check.py, ``nm``), their keys and
operators from the model (opgen/gen/layers/declarations.py); the stubs file is rendered by
opgen/gen/layers/missing_kernels.py and written only when its bytes change.
"""
import os
import sys

import SCons.Script

from opgen.errors import Diagnostic
from opgen.gen.layers.missing_kernels import STUBS_SOURCE, stubs_source
from opgen.link_check import NmError, Resolutions, missing_kernels_of_library
from opgen.scons.stop import stop
from opgen.scons.toolset.messages import report, shown
from opgen.writer import write_if_changed

MODES = ("error", "stub")
DEFAULT_MODE = "error"
HINT = 'scons --missing-kernels=stub in opgen\'s tree, OpgenOperatorLibrary(..., missing_kernels="stub") in a project'


def mode_of(env, name, missing_kernels):
    """The library's mode: the argument, else $OPGEN_MISSING_KERNELS, else "error"."""
    mode = missing_kernels or env.get("OPGEN_MISSING_KERNELS") or DEFAULT_MODE
    if mode not in MODES:
        stop(None, f"OpgenOperatorLibrary('{name}'): missing_kernels: '{mode}' is not one of {', '.join(MODES)}")
    return mode


class _Check:
    """One library's check: the groups' objects, what defines kernels, and the groups' codegen
    (its declarations, computed only for groups with missing symbols)."""

    def __init__(self, mode, objects_by_group, defining, codegen, runtime_library, memo):
        self.mode = mode
        # What an edit's check reads again only for what changed: object_symbols' memo (nm runs on
        # the recompiled objects) and the groups' resolutions (link_check.Resolutions).
        self.memo = memo
        self.objects_by_group = objects_by_group
        self.defining = defining
        self.codegen = codegen
        self.runtime_library = runtime_library

    def _declarations(self, group):
        return self.codegen.codegen_of[group].declarations

    def _identity(self, group):
        """What a group's declarations follow from: its content key and its functions' yaml lines."""
        lines = " ".join(str(f.location) for f in self.codegen.codegen_of[group].group.functions)
        return f"{self.codegen.key_of.get(group, '')} {lines}"

    def _keys(self):
        any_group = next(iter(self.codegen.codegen_of.values()), None)
        return any_group.config.keys if any_group is not None else ()

    def run(self, target, source, env):
        objects = {group: [node.abspath for node in nodes] for group, nodes in self.objects_by_group.items()}
        try:
            missing, unresolved = missing_kernels_of_library(objects, [node.abspath for node in self.defining],
                                                             self._declarations, self.runtime_library, memo=self.memo,
                                                             resolutions=Resolutions(self.memo + ".resolved", self._identity))
        except NmError as exc:
            print(f"scons: *** [opgen] {exc}", file=sys.stderr)
            return 2
        if unresolved:
            return report_unresolved(unresolved)
        keys = self._keys()
        if self.mode == "error":
            if missing:
                for m in sorted(missing, key=lambda m: (m.declaration.location, m.declaration.symbol)):
                    d = m.declaration
                    print(Diagnostic(d.location, f"{d.describe(keys)} is not defined: {d.returns} op::{d.scope}::{d.name}"
                                                 f"({d.params})"), file=sys.stderr)
                print(f"scons: *** [opgen] {len(missing)} kernel(s) the operator yaml names have no definition; "
                      f"define them, or stub them to raise when called ({HINT})", file=sys.stderr)
                return 2
            write_if_changed(target[0].abspath, "every kernel the operator yaml names is defined\n")
            return 0
        self._write_stubs(target[0].abspath, missing, keys)
        report(f"[opgen] missing kernels: {len(missing)} stubbed")
        return 0

    def _write_stubs(self, path, missing, keys):
        """The stubs file, rendered only when what it follows from changed (its key, kept beside
        the symbols' memo) or it is missing."""
        source = stubs_source(missing, keys)
        key = source.key()
        stamp = self.memo + ".stubs-key"
        if os.path.exists(path) and _read(stamp) == key:
            return
        write_if_changed(path, source.render())
        write_if_changed(stamp, key)

    def describe(self, target, source, env):
        if self.mode == "error":
            return shown(env, "CHECK kernel definitions", "[opgen] check kernel definitions")
        return shown(env, f"STUB {target[0]}", f"[opgen] stub missing kernels -> {target[0]}")


def _read(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError:
        return None


def report_unresolved(unresolved) -> int:
    """Each undefined symbol no declaration spells exactly, at its operator's yaml line; exit status 2."""
    for u in unresolved:
        print(Diagnostic(u.like.location, f"{u.symbol} is not defined, and no declaration of operator group "
                                          f"'{u.group}' is it exactly; define it"), file=sys.stderr)
    print(f"scons: *** [opgen] {len(unresolved)} undefined kernel symbol(s) opgen cannot tell apart", file=sys.stderr)
    return 2


def _missing_kernels(env, mode, objects_by_group, defining, codegen, gen_dir, obj_dir, runtime_library=None):
    """For "error": a stamp the library must depend on; for "stub": the stubs file's node (its
    object is the caller's to compile and link). ``objects_by_group``: {group: [object]} of the
    generated units; ``defining``: the library's other objects (kernels, ...)."""
    objects_by_group = {group: env.Flatten(objects) for group, objects in objects_by_group.items()}
    defining = env.Flatten(list(defining))
    memo = env.File(f"{obj_dir}/kernel_symbols.json")
    check = _Check(mode, objects_by_group, defining, codegen, runtime_library, memo.abspath)
    stubs = env.File(f"{gen_dir}/{STUBS_SOURCE}")
    if mode == "error" and os.path.exists(stubs.abspath) and not SCons.Script.GetOption("no_exec"):
        os.unlink(stubs.abspath)  # an earlier stubbed build's: nothing compiles it now
        report(f"[opgen] removed {stubs.path} (missing kernels are not stubbed)")
    target = f"{obj_dir}/missing_kernels.ok" if mode == "error" else stubs
    sources = [o for group in sorted(objects_by_group) for o in objects_by_group[group]] + defining
    # The model behind the declarations and messages: every group's content key.
    sources.append(env.Value(f"missing kernels {mode}:{codegen.keys}"))
    node = env.Command(target, sources, env.Action(check.run, strfunction=check.describe))
    if mode == "stub":
        env.Precious(node)  # written only when its bytes change: SCons must not delete it first
    env.Clean(node, [memo, f"{memo.abspath}.resolved", f"{memo.abspath}.stubs-key"])
    return node


def runtime_library_path(runtime):
    """The runtime's shared library a library links against (None when it is the runtime)."""
    if runtime.library_dir is None:
        return None
    path = os.path.join(runtime.library_dir, "libopdispatch.so")
    return path if os.path.isfile(path) else None


def register(env):
    env.AddMethod(_missing_kernels, "OpgenMissingKernels")
