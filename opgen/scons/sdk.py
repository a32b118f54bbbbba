"""SCons tool: the dispatcher runtime as an SDK, installed (``scons install PREFIX=DIR``) and found
again by downstream builds (the ``opgen`` tool).  The install layout lives here and only here:

    PREFIX/include/opdispatch/     headers: core/, dispatch/, native/, the generated ops/*.h
    PREFIX/lib/                    libopdispatch.so (and backend libraries)
    PREFIX/lib/pythonX.Y/site-packages/opdispatch/
                                   the Python package, with sdk.json: the directories above,
                                   relative to the package (so the prefix can move)
    PREFIX/share/opdispatch/       the runtime's operator yaml and tags.yaml (backend libraries
                                   are validated against it)

``env.OpgenInstallRuntime(prefix, libraries=..., python=..., headers=..., yaml=..., tags=...)``
declares the copies and returns their nodes.  ``find_runtime(env, build_dir)`` gives the ``Runtime`` a
downstream build compiles against, by the one rule of opgen/runtime_location.py (an installed SDK,
else ``$OPGEN_RUNTIME``, else the built checkout opgen is installed from).  Not finding one stops
the build with exit status 2, saying what was tried and how to get one.
"""
import json
import os

from opgen.runtime_location import (RUNTIME_HEADER_DIRS, SDK_FILE, Runtime, RuntimeNotFound,  # noqa: F401
                                    link_python_package, locate, prefix_layout)
from opgen.scons.toolset.messages import fail, shown


def _sdk_text(layout: dict, has_tags: bool) -> str:
    def relative(name):
        return os.path.relpath(layout[name], layout["package"]).replace(os.sep, "/")

    sdk = {"include": relative("include"), "lib": relative("lib"), "yaml": relative("yaml"),
           "tags": relative("tags") if has_tags else None}
    return json.dumps(sdk, indent=2, sort_keys=True) + "\n"


def _write_sdk_file(target, source, env):
    with open(target[0].abspath, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(source[0].read())
    return 0


def _install(env, prefix, libraries=(), python=(), headers=(), yaml=None, tags=None):
    """``headers``: (root directory, header nodes) pairs; each header keeps its path below its root."""
    layout = prefix_layout(env.subst(prefix))
    nodes = env.Install(layout["lib"], libraries) + env.Install(layout["package"], python)
    for root, files in headers:
        root_dir = env.Dir(root)
        targets = [os.path.join(layout["include"], node.get_path(root_dir)) for node in files]
        nodes += env.InstallAs(targets, files)
    if yaml is not None:
        nodes += env.InstallAs(layout["yaml"], yaml)
    if tags is not None:
        nodes += env.InstallAs(layout["tags"], tags)
    nodes += env.Command(os.path.join(layout["package"], SDK_FILE), env.Value(_sdk_text(layout, tags is not None)),
                         # A lambda: SCons 4.11 expands $TARGET in a function action's cmdstr to ''.
                         env.Action(_write_sdk_file, strfunction=lambda target, source, env: shown(
                             env, f"WRITE {target[0]}", f"[opgen] runtime SDK description -> {target[0]}")))
    return nodes


def find_runtime(env, build_dir: str = "build") -> Runtime:
    """The runtime by opgen.runtime_location's rule (an installed SDK, else $OPGEN_RUNTIME as a
    construction variable or in the environment, else the built checkout opgen is installed from);
    a checkout's header view goes under ``build_dir``/opgen-runtime, and ``build_dir``/python/opdispatch
    links to its Python package. Not finding one stops the build with exit status 2."""
    explicit = env.get("OPGEN_RUNTIME") or os.environ.get("OPGEN_RUNTIME")
    build_dir = env.Dir(build_dir).abspath
    try:
        runtime = locate(build_dir, env.subst(explicit) if explicit else None)
    except RuntimeNotFound as exc:
        fail(str(exc))
    link_python_package(runtime, os.path.join(build_dir, "python"))
    return runtime


def register(env):
    env.AddMethod(_install, "OpgenInstallRuntime")
