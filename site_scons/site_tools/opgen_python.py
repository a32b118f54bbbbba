"""SCons tool: the Python package's operator table (opdispatch/_op_table.py) from the model.

``env.OpgenPythonTable(target, model)`` renders the table while the SConscripts are read (a
few milliseconds) and declares a node whose only source is the digest of that text, so the
file is rewritten exactly when its content changes.  No opgen logic lives here.
"""
from build_output import shown  # site_tools is on sys.path while tools load

from opgen.fingerprint import digest
from opgen.gen.python_table import render_python_table
from opgen.writer import write_if_changed


def _write_table(target, source, env):
    write_if_changed(target[0].abspath, env["OPGEN_PYTHON_TABLE_TEXT"])
    return 0


def _python_table(env, target, model):
    text = render_python_table(model)
    node = env._OpgenPythonTable(target, env.Value(digest(text.encode("utf-8"))), OPGEN_PYTHON_TABLE_TEXT=text)
    env.Precious(node)  # write_if_changed keeps an unchanged file's mtime; SCons must not delete it first
    return node


def exists(env):
    return True


def generate(env):
    env["BUILDERS"]["_OpgenPythonTable"] = env.Builder(
        action=env.Action(_write_table, strfunction=lambda target, source, env: shown(env, f"WRITE {target[0]}",
                                                                         f"[opgen] python table -> {target[0]}")),
    )
    env.AddMethod(_python_table, "OpgenPythonTable")
