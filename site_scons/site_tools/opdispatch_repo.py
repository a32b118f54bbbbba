"""SCons tool: this repository's own build glue, not shipped with opgen.

``env.InTreeBackend(model, name)`` is ``scons --backend=NAME``: the backend yaml
yaml/NAME_native_functions.yaml, whose kernels live in csrc/backends/NAME/, read against the
model (an unknown name stops the build with exit status 2 and lists the known ones).
``env.OpgenPythonTable(target, model, selected=None)`` renders opdispatch's operator table (_op_table.py)
while the SConscripts are read (a few milliseconds) and declares a node whose only source is
the digest of that text, so the file is rewritten exactly when its content changes; in a
selective build (``selected``: env.OpgenSelection's result) it lists the operators the build
has, and names the selection and the operators it left out.
"""
import os

from opgen.fingerprint import digest
from opgen.gen.python_table import render_python_table
from opgen.scons.stop import stop
from opgen.scons.toolset.messages import shown
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


def _in_tree_backend(env, model, name):
    known = available_backends(env)
    if name not in known:
        stop(None, f"--backend={name}: no such backend; available: {', '.join(known) or 'none'} "
                   f"(a backend needs {BACKEND_YAML.format(name='NAME')} and {BACKEND_SOURCES.format(name='NAME')}/)")
    return env.OpgenBackendYaml(model, BACKEND_YAML.format(name=name))


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
    env["BUILDERS"]["_OpgenPythonTable"] = env.Builder(
        action=env.Action(_write_table, strfunction=lambda target, source, env: shown(env, f"WRITE {target[0]}",
                                                                         f"[opgen] python table -> {target[0]}")),
    )
    env.AddMethod(_python_table, "OpgenPythonTable")
