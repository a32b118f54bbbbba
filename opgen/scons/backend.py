"""opgen's SCons builders for external backends.

``env.OpgenBackendYaml(model, path)`` reads a backend yaml against the model (stopping the
build with exit status 2 and FILE:LINE diagnostics on a bad file) and returns the opgen
BackendYaml.  ``env.OpgenCheckDefinitions(stamp, registrations + backend_objects,
OPGEN_BACKEND=backend, OPGEN_REGISTRATIONS=registrations)`` fails before anything is linked
when a kernel the generated registrations call is not defined by the backend's objects.
With missing kernels stubbed instead, ``env.OpgenBackendStubs(target, backend, objects_by_group,
defining, codegen)`` writes a stub for each function the backend's yaml makes it write (kernels,
lowerings, shape functions: gen/layers/backend_stubs.py) that ``defining`` leaves undefined, and
``env.OpgenStandinIrRuntime(target, backend)`` the header that stands in for a missing IR runtime.
"""
import os
import sys

from opgen.errors import OpgenError
from opgen.gen.engine.layout import backend_key_source_group
from opgen.gen.layers.backend_stubs import hand_written, render_backend_stubs, render_standin_runtime
from opgen.link_check import NmError, missing_kernels, missing_kernels_of_library
from opgen.model.backend_yaml import parse_backend_yaml
from opgen.scons.missing_kernels import report_unresolved
from opgen.scons.model import display_path
from opgen.scons.stop import stop
from opgen.scons.toolset.messages import report, shown
from opgen.writer import write_if_changed

def _backend_yaml(env, model, path):
    """The backend yaml at ``path`` (a file or a path SCons resolves), read against ``model``."""
    node = env.File(path)
    name = display_path(env, path, node)
    try:
        return parse_backend_yaml(node.srcnode().abspath, model, display_name=name)
    except OpgenError as exc:
        stop(exc, f"invalid backend yaml {name}; nothing was built")


def _check_definitions(target, source, env):
    backend = env["OPGEN_BACKEND"]
    registrations = {node.abspath for node in env.Flatten(env["OPGEN_REGISTRATIONS"])}
    own = [s.abspath for s in source if s.abspath not in registrations]
    scope = f"{backend.cpp_namespace}::{backend.class_name}"
    try:
        missing = missing_kernels(sorted(registrations), own, scope)
    except NmError as exc:
        print(f"scons: *** [opgen] {exc}", file=sys.stderr)
        return 2
    if missing:
        where = env["OPGEN_BACKEND_SOURCES"]
        lines = [f"scons: *** [opgen] {len(missing)} {backend.backend_key} kernel(s) declared by {backend.source} "
                 f"have no definition in {where}/; define them (signatures as the dispatcher calls them):"]
        keys = tuple(k for k in (backend.backend_key, backend.autograd_key) if k is not None)
        for signature, objects in missing.items():
            groups = sorted({backend_key_source_group(o, keys) or os.path.basename(o) for o in objects})
            lines.append(f"  {signature}    [operator group {', '.join(groups)}]")
        print("\n".join(lines), file=sys.stderr)
        return 2
    write_if_changed(target[0].abspath, f"{scope}: every declared kernel is defined\n")
    return 0


class _Stubs:
    """A stubbed build's check: the backend's hand-written functions (gen/layers/backend_stubs.py) its
    groups' objects call and its own objects do not define, each written as a stub."""

    def __init__(self, backend, objects_by_group, defining, codegen, memo):
        self.backend = backend
        self.memo = memo  # object_symbols' memo, beside the stubs' source
        self.objects_by_group = objects_by_group
        self.defining = defining
        self.codegen = codegen

    def run(self, target, source, env):
        objects = {group: [node.abspath for node in nodes] for group, nodes in self.objects_by_group.items()}
        try:
            # link_check's search, as for an operator library's kernels, in the backend's namespace.
            missing, unresolved = missing_kernels_of_library(
                objects, [node.abspath for node in self.defining],
                lambda group: hand_written(self.codegen.codegen_of[group]), scopes=(self.backend.cpp_namespace + "::",),
                memo=self.memo)
        except NmError as exc:
            print(f"scons: *** [opgen] {exc}", file=sys.stderr)
            return 2
        if unresolved:
            return report_unresolved(unresolved)
        write_if_changed(target[0].abspath, render_backend_stubs(self.backend, missing))
        report(f"[opgen] {self.backend.backend_key} missing kernels: {len(missing)} stubbed")
        return 0

    def describe(self, target, source, env):
        return shown(env, f"STUB {target[0]}", f"[opgen] stub missing {self.backend.backend_key} kernels -> {target[0]}")


def _backend_stubs(env, target, backend, objects_by_group, defining, codegen):
    """The stubs' source (its object is the caller's to compile and link)."""
    objects_by_group = {group: env.Flatten(nodes) for group, nodes in objects_by_group.items()}
    defining = env.Flatten(list(defining))
    memo = env.File(f"{target}.symbols.json")
    stubs = _Stubs(backend, objects_by_group, defining, codegen, memo.abspath)
    sources = [o for group in sorted(objects_by_group) for o in objects_by_group[group]] + defining
    node = env.Command(target, sources + [env.Value(f"{backend.backend_key} stubs:{codegen.keys}")],
                       env.Action(stubs.run, strfunction=stubs.describe))
    env.Precious(node)  # written only when its bytes change: SCons must not delete it first
    env.Clean(node, memo)
    return node


def _standin_runtime(env, target, backend):
    """backends/<key>/ir.h for a backend without its own IR runtime (gen/layers/backend_stubs.py)."""
    node = env.Command(target, env.Value(render_standin_runtime(backend)), env.Action(
        _write_value, strfunction=lambda target, source, env: shown(env, f"WRITE {target[0]}",
                                                                    f"[opgen] stand-in IR runtime -> {target[0]}")))
    env.Precious(node)
    return node


def _write_value(target, source, env):
    write_if_changed(target[0].abspath, source[0].read())
    return 0


def register(env):
    env.AddMethod(_backend_yaml, "OpgenBackendYaml")
    env.AddMethod(_backend_stubs, "OpgenBackendStubs")
    env.AddMethod(_standin_runtime, "OpgenStandinIrRuntime")
    env["BUILDERS"]["OpgenCheckDefinitions"] = env.Builder(
        action=env.Action(_check_definitions, strfunction=lambda target, source, env: shown(
            env, f"CHECK {env['OPGEN_BACKEND'].backend_key} kernel definitions",
            f"[opgen] check {env['OPGEN_BACKEND'].backend_key} kernel definitions")),
    )
