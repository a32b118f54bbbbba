"""SCons tool: this repository's own build glue, not shipped with opgen.

``env.InTreeBackend(model, name)`` is ``scons --backend=NAME``: the backend yaml
yaml/NAME_native_functions.yaml, whose kernels live in csrc/backends/NAME/, read against the
model (opgen/project.py's describe_build has checked the name);
``env.BackendsFromYaml(model, paths)`` is ``scons --backend-yaml=FILE``: backends with no
kernels of their own, each named after its dispatch key.
``env.OpgenPythonTable(target, model, selected=None)`` renders opdispatch's operator table (_op_table.py)
while the SConscripts are read (a few milliseconds) and declares a node whose only source is
the digest of that text, so the file is rewritten exactly when its content changes; in a
selective build (``selected``: env.OpgenSelection's result) it lists the operators the build
has, and names the selection and the operators it left out.
"""
from opgen.fingerprint import digest
from opgen.gen.layers.python_table import render_python_table
from opgen.project import BACKEND_YAML
from opgen.scons.stop import stop
from opgen.scons.toolset.messages import shown
from opgen.writer import write_if_changed

def _in_tree_backend(env, model, name):
    """The backend yaml of ``name``, one of the description's backends (opgen/project.py found it)."""
    return env.OpgenBackendYaml(model, BACKEND_YAML.format(name=name))


def _backends_from_yaml(env, model, paths, taken=()):
    """``scons --backend-yaml=FILE``: [(name, BackendYaml)] of backends built from their yaml alone,
    each named after its key (XLA: libopdispatch_xla.so); a key already built stops the build."""
    found = []
    keys = {backend.backend_key: backend.source for backend in taken}
    for path in paths:
        backend = env.OpgenBackendYaml(model, path)
        if backend.backend_key in keys:
            stop(None, f"--backend-yaml={path}: the {backend.backend_key} key is built already (from "
                       f"{keys[backend.backend_key]}); one backend per dispatch key")
        keys[backend.backend_key] = backend.source
        if env.get("OPGEN_MISSING_KERNELS") != "stub" and not env.GetOption("codegen_only"):
            stop(None, f"--backend-yaml={path}: a backend built from its yaml alone has no kernels; "
                       f"add --missing-kernels=stub to stub them (or --codegen-only to generate only)")
        found.append((backend.backend_key.value.lower(), backend))
    return found


def _write_table(target, source, env):
    write_if_changed(target[0].abspath, env["OPGEN_PYTHON_TABLE_TEXT"])
    return 0


def _python_table(env, target, model, selected=None):
    text = render_python_table(model, selected.left_out() if selected is not None else None)
    node = env._OpgenPythonTable(target, env.Value(digest(text.encode("utf-8"))), OPGEN_PYTHON_TABLE_TEXT=text)
    env.Precious(node)  # write_if_changed keeps an unchanged file's mtime; SCons must not delete it first
    return node


def exists(env):
    return True


def generate(env):
    env.AddMethod(_in_tree_backend, "InTreeBackend")
    env.AddMethod(_backends_from_yaml, "BackendsFromYaml")
    env["BUILDERS"]["_OpgenPythonTable"] = env.Builder(
        action=env.Action(_write_table, strfunction=lambda target, source, env: shown(env, f"WRITE {target[0]}",
                                                                         f"[opgen] python table -> {target[0]}")),
    )
    env.AddMethod(_python_table, "OpgenPythonTable")
