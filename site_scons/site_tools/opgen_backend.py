"""SCons tool: external backends (``scons --backend=NAME``).

``env.OpgenBackend(model, name)`` reads yaml/<name>_native_functions.yaml against the model
(stopping the build with exit status 2 on a bad file or an unknown name) and returns the
opgen BackendYaml; ``env.OpgenBackendYaml(model, path)`` does the same for any backend yaml
(a downstream build's).  ``env.OpgenCheckDefinitions(stamp, registrations + backend_objects,
OPGEN_BACKEND=backend, OPGEN_REGISTRATIONS=registrations)`` fails before anything is linked
when a kernel the generated registrations call is not defined by the backend's objects.  No
opgen logic lives here.
"""
import os
import sys

from build_output import shown  # site_tools is on sys.path while tools load
from opgen_model import stop

from opgen.errors import OpgenError
from opgen.gen.layout import backend_key_source_group
from opgen.link_check import NmError, missing_kernels
from opgen.model.backend_yaml import parse_backend_yaml
from opgen.writer import write_if_changed

BACKEND_YAML = "yaml/{name}_native_functions.yaml"
BACKEND_SOURCES = "csrc/backends/{name}"


def available_backends(env) -> list[str]:
    root = env.Dir("#csrc/backends").abspath
    try:
        names = sorted(os.listdir(root))
    except FileNotFoundError:
        return []
    return [n for n in names if os.path.isfile(env.File("#" + BACKEND_YAML.format(name=n)).abspath)]


def _backend(env, model, name):
    known = available_backends(env)
    if name not in known:
        stop(None, f"--backend={name}: no such backend; available: {', '.join(known) or 'none'} "
                   f"(a backend needs {BACKEND_YAML.format(name='NAME')} and {BACKEND_SOURCES.format(name='NAME')}/)")
    return _backend_yaml(env, model, "#" + BACKEND_YAML.format(name=name))


def _backend_yaml(env, model, path):
    """The backend yaml at ``path`` (a file or a path SCons resolves), read against ``model``."""
    node = env.File(path)
    shown = os.path.relpath(node.srcnode().abspath, env.Dir("#").abspath)
    try:
        return parse_backend_yaml(node.srcnode().abspath, model, display_name=shown)
    except OpgenError as exc:
        stop(exc, f"invalid backend yaml {shown}; nothing was built")


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


def exists(env):
    return True


def generate(env):
    env.AddMethod(_backend, "OpgenBackend")
    env.AddMethod(_backend_yaml, "OpgenBackendYaml")
    env["BUILDERS"]["OpgenCheckDefinitions"] = env.Builder(
        action=env.Action(_check_definitions, strfunction=lambda target, source, env: shown(
            env, f"CHECK {env['OPGEN_BACKEND'].backend_key} kernel definitions",
            f"[opgen] check {env['OPGEN_BACKEND'].backend_key} kernel definitions")),
    )
