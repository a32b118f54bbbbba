"""Where the opdispatch runtime a project builds against is: one rule, for the SCons plugin
(opgen/scons/sdk.py), the projects `opgen init` writes and their tests.

    1. an installed SDK: the ``opdispatch`` package on the Python path, with its sdk.json
       (``scons install PREFIX=DIR`` in an opgen checkout writes it);
    2. else ``$OPGEN_RUNTIME``: an install prefix, or a built opgen checkout;
    3. else the built opgen checkout this opgen is installed from (``pip install -e CHECKOUT``, or
       ``pip install CHECKOUT``: pip records the directory in direct_url.json).

The installed package comes first because it is what ``import opdispatch`` loads: a library
built against another runtime would load beside the wrong one. ``$OPGEN_RUNTIME`` is never
ignored, though: naming no runtime, or another one than the installed package, is an error.
A checkout's headers are in two trees (csrc/ and the generated build/gen/), which a view of
links under the *project's* build directory joins into the installed layout: a downstream
build writes nothing into the runtime's checkout.
"""
from __future__ import annotations

import collections
import importlib.metadata
import importlib.util
import json
import os
import sysconfig
import urllib.parse
import urllib.request
from typing import Optional

from .runtime_layers import shipped_header_directories

SDK_FILE = "sdk.json"
# A runtime a library compiles against. library_dir None: the library being built is the runtime
# itself (this repository's libopdispatch), so nothing is linked against it. rpath: where the
# library finds the runtime when loaded (default: library_dir). python: the directory holding the
# runtime's Python package (opdispatch/), None when there is none. origin: which rule found it.
Runtime = collections.namedtuple("Runtime", "include_dir library_dir yaml tags rpath python origin",
                                 defaults=(None, None, ""))
# The runtime's header directories under csrc/, as an SDK installs them (SConstruct's install
# and a checkout's header view both use this list).
RUNTIME_HEADER_DIRS = shipped_header_directories()  # runtime_layers.py: what an SDK ships
# A checkout's header view, under the project's build directory.
VIEW_DIR = os.path.join("opgen-runtime", "include", "opdispatch")
HOW_TO_GET_ONE = ("build an opgen checkout (`pip install -e CHECKOUT` installs opgen from it; `scons -j2` there), "
                  "install its runtime with `scons install PREFIX=$VIRTUAL_ENV`, or set OPGEN_RUNTIME=DIR")


class RuntimeNotFound(Exception):
    """No runtime, or a wrong one named; the message says what was tried."""


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
        "packages": packages,
        "package": os.path.join(packages, "opdispatch"),
        "yaml": os.path.join(share, "native_functions.yaml"),
        "tags": os.path.join(share, "tags.yaml"),
    }


def is_checkout(root: str) -> bool:
    return os.path.isfile(os.path.join(root, "SConstruct")) and os.path.isdir(os.path.join(root, "csrc", "core"))


def is_built_checkout(root: str) -> bool:
    return (os.path.isfile(os.path.join(root, "build", "lib", "libopdispatch.so"))
            and os.path.isdir(os.path.join(root, "build", "gen", "ops")))


def opgen_checkout() -> Optional[str]:
    """The opgen checkout this opgen is installed from, if any: the directory holding the
    imported package (an editable install, or PYTHONPATH=CHECKOUT), else the local directory pip
    installed the distribution from (PEP 610's direct_url.json)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if is_checkout(here):
        return here
    try:
        text = importlib.metadata.distribution("opgen").read_text("direct_url.json")
        url = json.loads(text).get("url", "") if text else ""
    except (importlib.metadata.PackageNotFoundError, OSError, ValueError, AttributeError):
        return None
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme != "file":
        return None
    root = urllib.request.url2pathname(parsed.path)
    return root if is_checkout(root) else None


def _link(source: str, link: str) -> None:
    """``link`` -> ``source``, made or corrected; another build making it at once is fine."""
    if os.path.islink(link) and os.readlink(link) == source:
        return
    os.makedirs(os.path.dirname(link), exist_ok=True)
    temporary = f"{link}.{os.getpid()}.tmp"
    os.symlink(source, temporary)
    os.replace(temporary, link)  # atomic, over a stale link too


def _of_prefix(prefix: str, origin: str) -> Runtime:
    layout = prefix_layout(prefix)
    if not os.path.isdir(layout["include"]):
        raise RuntimeNotFound(f"{origin}: {prefix} holds no opdispatch runtime (no include/opdispatch); "
                              "install one from an opgen checkout with `scons install PREFIX=DIR`, or name a built checkout")
    tags = layout["tags"] if os.path.isfile(layout["tags"]) else None
    python = layout["packages"] if os.path.isdir(layout["package"]) else None
    return Runtime(layout["include"], layout["lib"], layout["yaml"], tags, python=python, origin=f"{origin} {prefix}")


def _of_checkout(root: str, origin: str, view: str) -> Runtime:
    """The checkout's runtime, its headers joined by links under ``view`` (the project's)."""
    if not is_built_checkout(root):
        raise RuntimeNotFound(f"{origin}: {root} is an opgen checkout that is not built (no build/lib/libopdispatch.so); "
                              "run `scons -j2` in it first")
    generated = os.path.join(root, "build", "gen")
    links = {directory: os.path.join(root, "csrc", directory) for directory in RUNTIME_HEADER_DIRS}
    links["ops"] = os.path.join(generated, "ops")
    links.update({name: os.path.join(generated, name) for name in sorted(os.listdir(generated)) if name.endswith(".h")})
    for relative, source in sorted(links.items()):
        _link(source, os.path.join(view, relative))
    yaml_dir = os.path.join(root, "yaml")
    tags = os.path.join(yaml_dir, "tags.yaml")
    python = os.path.join(root, "build", "python")
    return Runtime(view, os.path.join(root, "build", "lib"), os.path.join(yaml_dir, "native_functions.yaml"),
                   tags if os.path.isfile(tags) else None,
                   python=python if os.path.isdir(os.path.join(python, "opdispatch")) else None,
                   origin=f"{origin} {root}")


def _installed_package() -> tuple[Optional[Runtime], str]:
    """(the installed SDK or None, what was found) for the opdispatch package on the Python path."""
    try:
        spec = importlib.util.find_spec("opdispatch")  # found, not imported: no library is loaded
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        return None, "no opdispatch package on the Python path"
    package = os.path.realpath(spec.submodule_search_locations[0])
    sdk_path = os.path.join(package, SDK_FILE)
    try:
        with open(sdk_path, encoding="utf-8") as handle:
            sdk = json.load(handle)
    except FileNotFoundError:
        return None, f"opdispatch at {package} is a build tree, not an installed SDK (no {SDK_FILE})"
    except (OSError, ValueError) as exc:
        raise RuntimeNotFound(f"{sdk_path}: unreadable runtime description: {exc}") from None

    def located(name):
        return os.path.normpath(os.path.join(package, sdk[name])) if sdk.get(name) else None

    return Runtime(located("include"), located("lib"), located("yaml"), located("tags"),
                   python=os.path.dirname(package), origin=f"the installed opdispatch package {package}"), ""


def _same(a: Runtime, b: Runtime) -> bool:
    return os.path.realpath(a.library_dir) == os.path.realpath(b.library_dir)


def locate(build_dir: str, explicit: Optional[str] = None) -> Runtime:
    """The runtime by the rule above; ``explicit``: $OPGEN_RUNTIME (None: not set). A checkout's
    header view goes under ``build_dir`` (the project's build directory, absolute)."""
    named = None
    if explicit:
        prefix = os.path.abspath(explicit)
        if is_checkout(prefix):
            named = _of_checkout(prefix, "OPGEN_RUNTIME", os.path.join(build_dir, VIEW_DIR))
        else:
            named = _of_prefix(prefix, "OPGEN_RUNTIME")
    installed, why_not = _installed_package()
    if installed is not None:
        if named is not None and not _same(installed, named):
            raise RuntimeNotFound(f"OPGEN_RUNTIME names {explicit}, but `import opdispatch` loads {installed.origin}: "
                                  "a library built against the one would run beside the other; unset OPGEN_RUNTIME, "
                                  "or take that package off the Python path")
        return installed
    if named is not None:
        return named
    tried = [f"an installed SDK: {why_not}", "$OPGEN_RUNTIME: not set"]
    checkout = opgen_checkout()
    if checkout is not None:
        if is_built_checkout(checkout):
            return _of_checkout(checkout, "the opgen checkout", os.path.join(build_dir, VIEW_DIR))
        tried.append(f"the checkout opgen is installed from: {checkout} is not built (no build/lib/libopdispatch.so)")
    else:
        tried.append("the checkout opgen is installed from: none (opgen was not installed from a checkout)")
    raise RuntimeNotFound("no opdispatch runtime found; tried " + "; ".join(tried) + ". To get one: " + HOW_TO_GET_ONE)


def link_python_package(runtime: Runtime, python_dir: str) -> Optional[str]:
    """``python_dir``/opdispatch -> the runtime's Python package, so ``PYTHONPATH=python_dir``
    imports the runtime the project was built against; returns the link, None without a package."""
    if runtime.python is None:
        return None
    link = os.path.join(python_dir, "opdispatch")
    _link(os.path.join(runtime.python, "opdispatch"), link)
    return link
