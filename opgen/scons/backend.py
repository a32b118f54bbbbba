"""opgen's SCons builders for external backends.

``env.OpgenBackendYaml(model, path)`` reads a backend yaml against the model (stopping the
build with exit status 2 and FILE:LINE diagnostics on a bad file) and returns the opgen
BackendYaml.  ``env.OpgenCheckDefinitions(stamp, registrations + backend_objects,
OPGEN_BACKEND=backend, OPGEN_REGISTRATIONS=registrations)`` fails before anything is linked
when a kernel the generated registrations call is not defined by the backend's objects.
"""
import os
import sys

from opgen.errors import OpgenError
from opgen.gen.layout import backend_key_source_group
from opgen.link_check import NmError, missing_kernels
from opgen.model.backend_yaml import parse_backend_yaml
from opgen.scons.model import display_path
from opgen.scons.stop import stop
from opgen.scons.toolset.messages import shown
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


def register(env):
    env.AddMethod(_backend_yaml, "OpgenBackendYaml")
    env["BUILDERS"]["OpgenCheckDefinitions"] = env.Builder(
        action=env.Action(_check_definitions, strfunction=lambda target, source, env: shown(
            env, f"CHECK {env['OPGEN_BACKEND'].backend_key} kernel definitions",
            f"[opgen] check {env['OPGEN_BACKEND'].backend_key} kernel definitions")),
    )
