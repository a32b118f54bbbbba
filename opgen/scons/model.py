"""SCons tool: load a native_functions.yaml through opgen, or stop the build with its errors.

Gives environments ``env.OpgenModel(yaml, tags=None)`` -> opgen.model.Model,
``env.OpgenDerivatives(model, derivatives_yaml)`` -> the autograd facts the codegen reads, and a
``OpgenModelJson`` builder that writes the model's JSON dump.  No opgen logic lives here.
"""
import os

from opgen.scons.noop import cache_directory, input_file
from opgen.scons.sizes import cache_dir_of
from opgen.scons.stop import stop
from opgen.scons.toolset.messages import shown

from opgen.collector import paused_for_resident_objects
from opgen.errors import OpgenError
from opgen.fingerprint import package_fingerprint
from opgen.cache.parse_cache import load_model_cached
from opgen.model.summary import model_json
from opgen.writer import write_if_changed


def display_path(env, written, node) -> str:
    """What messages call a file: an absolute path as the user wrote it; otherwise the path from
    the top directory (where scons runs), so a relative one reads as written there. A node outside
    the tree shows its absolute path rather than a climb of '../'."""
    if isinstance(written, str) and os.path.isabs(written):
        return written
    path, top = node.srcnode().abspath, env.Dir("#").abspath
    if isinstance(written, str) and os.path.normpath(os.path.join(top, written)) == path:
        return written  # relative to the top directory, as on the command line
    relative = os.path.relpath(path, top)
    if isinstance(written, str) or relative.split(os.sep)[0] != os.pardir:
        return relative
    return path


def _load(env, yaml, tags=None):
    yaml_node = env.File(yaml)
    tags_node = env.File(tags) if tags else None
    input_file(yaml_node.srcnode().abspath, tags_node.srcnode().abspath if tags_node else None)
    cache_directory(cache_dir_of(env))
    try:
        with paused_for_resident_objects():
            model = load_model_cached(
                yaml_node.srcnode().abspath,
                tags_node.srcnode().abspath if tags_node else None,
                cache_dir=env.get("OPGEN_CACHE_DIR"),
                display_name=display_path(env, yaml, yaml_node),
                tags_display_name=display_path(env, tags, tags_node) if tags_node else None,
            )
    except OpgenError as exc:
        stop(exc, "invalid operator yaml; nothing was built")
    return model


def _derivatives(env, model, derivatives, found_beside=False):
    from opgen.cache.autograd_cache import load_autograd_cached
    from opgen.gen.layers.autograd_kernels import AutogradModel

    node = env.File(derivatives)
    input_file(node.srcnode().abspath)
    try:
        with paused_for_resident_objects():
            return load_autograd_cached(model, node.srcnode().abspath, AutogradModel, cache_dir=env.get("OPGEN_CACHE_DIR"),
                                        display_name=display_path(env, derivatives, node))
    except OpgenError as exc:
        hint = " (found beside the operator yaml: --derivatives=FILE names another, --derivatives=off builds without autograd)"
        stop(exc, "invalid derivatives yaml; nothing was built" + (hint if found_beside else ""))


def _write_model_json(target, source, env):
    model = env["OPGEN_MODEL"]
    write_if_changed(target[0].abspath, model_json(model))
    return 0


def register(env):
    env.AddMethod(_load, "OpgenModel")
    env.AddMethod(_derivatives, "OpgenDerivatives")
    env["BUILDERS"]["OpgenModelJson"] = env.Builder(
        # A lambda, not cmdstr: SCons 4.11 expands $TARGET in a function action's cmdstr to ''.
        action=env.Action(_write_model_json, strfunction=lambda target, source, env: shown(env, f"WRITE {target[0]}",
                                                                               f"[opgen] model dump -> {target[0]}")),
    )
    env.SetDefault(OPGEN_MODEL_FINGERPRINT=package_fingerprint("model"))
