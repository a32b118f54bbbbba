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
declares the copies and returns their nodes.  ``find_runtime(env)`` gives the ``Runtime`` a
downstream build compiles against: ``$OPGEN_RUNTIME`` (a PREFIX, or a built opgen checkout;
construction variable or environment), else the installed ``opdispatch`` package's sdk.json.  Not finding one stops the
build with exit status 2 and says how to get one.
"""
import collections
import importlib.util
import json
import os
import sysconfig

from opgen.runtime_layers import shipped_header_directories
from opgen.scons.toolset.messages import fail, shown

SDK_FILE = "sdk.json"
# A runtime a library compiles against. library_dir None: the library being built is the runtime
# itself (this repository's libopdispatch), so nothing is linked against it. rpath: where the
# library finds the runtime when loaded (default: library_dir).
Runtime = collections.namedtuple("Runtime", "include_dir library_dir yaml tags rpath", defaults=(None,))


def prefix_layout(prefix: str) -> dict:
    """Absolute install directories under ``prefix``."""
    prefix = os.path.abspath(prefix)
    # posix_prefix: the layout of a venv or of `pip install --prefix`, so PREFIX=$VIRTUAL_ENV
    # makes the package importable there (the interpreter's default scheme may be Debian's).
    packages = sysconfig.get_path("platlib", "posix_prefix", {"base": prefix, "platbase": prefix})
    share = os.path.join(prefix, "share", "opdispatch")
    return {
        "include": os.path.join(prefix, "include", "opdispatch"),
        "lib": os.path.join(prefix, "lib"),
        "package": os.path.join(packages, "opdispatch"),
        "yaml": os.path.join(share, "native_functions.yaml"),
        "tags": os.path.join(share, "tags.yaml"),
    }


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


def _runtime_of_prefix(prefix: str, origin: str) -> Runtime:
    layout = prefix_layout(prefix)
    if not os.path.isdir(layout["include"]):
        fail(f"{origin}: {prefix} holds no opdispatch runtime (no include/opdispatch); "
             "install one from an opgen checkout with `scons install PREFIX=DIR`, or name a built checkout")
    tags = layout["tags"] if os.path.isfile(layout["tags"]) else None
    return Runtime(layout["include"], layout["lib"], layout["yaml"], tags)


# A built checkout seen as a prefix: its headers are in two trees (csrc/ and the generated
# build/gen/), so build/runtime-view/include/opdispatch links them into the one directory the
# installed layout has; the library and yaml are used where they are.
# The runtime's header directories under csrc/, as an SDK installs them (SConstruct's install
# and a checkout's header view below both use this list).
RUNTIME_HEADER_DIRS = shipped_header_directories()
CHECKOUT_VIEW = os.path.join("build", "runtime-view", "include", "opdispatch")


def _is_checkout(root: str) -> bool:
    return os.path.isfile(os.path.join(root, "SConstruct")) and os.path.isdir(os.path.join(root, "csrc", "core"))


def _link(source: str, link: str) -> None:
    """``link`` -> ``source``, made or corrected; another build making it at once is fine."""
    if os.path.islink(link) and os.readlink(link) == source:
        return
    temporary = f"{link}.{os.getpid()}.tmp"
    os.symlink(source, temporary)
    os.replace(temporary, link)  # atomic, over a stale link too


def _runtime_of_checkout(root: str, origin: str) -> Runtime:
    library_dir = os.path.join(root, "build", "lib")
    generated = os.path.join(root, "build", "gen")
    if not os.path.isfile(os.path.join(library_dir, "libopdispatch.so")) or not os.path.isdir(os.path.join(generated, "ops")):
        fail(f"{origin}: {root} is an opgen checkout that is not built (no build/lib/libopdispatch.so); "
             "run `scons -j2` in it first")
    include = os.path.join(root, CHECKOUT_VIEW)
    os.makedirs(include, exist_ok=True)
    links = {directory: os.path.join(root, "csrc", directory) for directory in RUNTIME_HEADER_DIRS}
    links["ops"] = os.path.join(generated, "ops")
    links.update({name: os.path.join(generated, name) for name in sorted(os.listdir(generated)) if name.endswith(".h")})
    for relative, source in sorted(links.items()):
        link = os.path.join(include, relative)
        os.makedirs(os.path.dirname(link), exist_ok=True)
        _link(source, link)
    yaml_dir = os.path.join(root, "yaml")
    tags = os.path.join(yaml_dir, "tags.yaml")
    return Runtime(include, library_dir, os.path.join(yaml_dir, "native_functions.yaml"),
                   tags if os.path.isfile(tags) else None)


def _runtime_of_package() -> Runtime:
    try:
        spec = importlib.util.find_spec("opdispatch")  # found, not imported: no library is loaded
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        fail("no opdispatch runtime found: install one with `scons install PREFIX=DIR` in an opgen checkout, "
             "then put its package on the Python path, or set OPGEN_RUNTIME=DIR")
    package = spec.submodule_search_locations[0]
    sdk_path = os.path.join(package, SDK_FILE)
    try:
        with open(sdk_path, encoding="utf-8") as handle:
            sdk = json.load(handle)
    except FileNotFoundError:
        fail(f"opdispatch at {package} is a build tree, not an installed runtime (no {SDK_FILE}); "
             "run `scons install PREFIX=DIR` and use that, or set OPGEN_RUNTIME=DIR")
    except (OSError, ValueError) as exc:
        fail(f"{sdk_path}: unreadable runtime description: {exc}")

    def located(name):
        return os.path.normpath(os.path.join(package, sdk[name])) if sdk.get(name) else None

    return Runtime(located("include"), located("lib"), located("yaml"), located("tags"))


def find_runtime(env) -> Runtime:
    prefix = env.get("OPGEN_RUNTIME") or os.environ.get("OPGEN_RUNTIME")
    if prefix:
        prefix = os.path.abspath(env.subst(prefix))
        if _is_checkout(prefix):
            return _runtime_of_checkout(prefix, "OPGEN_RUNTIME")
        return _runtime_of_prefix(prefix, "OPGEN_RUNTIME")
    return _runtime_of_package()


def register(env):
    env.AddMethod(_install, "OpgenInstallRuntime")
