"""One description of a build: what the options and the checkout say, resolved once.

Which yaml a command reads when none is named: a project's own (the ``opgen.json`` that
``opgen init`` writes, in the current directory or one above it), else this repository's
yaml/native_functions.yaml in the current directory (``default_yaml``).

``scons`` (SConstruct), ``opgen select`` and ``opgen generate`` each turn their arguments into a
``BuildDescription`` with ``describe_build``; the rules that say which yaml, tags, derivatives,
kernels and backends a build has live here and nowhere else:

- tags: the file given, else tags.yaml beside the operator yaml when there is one;
- derivatives: the file given ("off": none), else derivatives.yaml beside the operator yaml when
  there is one (the autograd layer);
- kernels: "builtin" (csrc/native, which implements the checkout's own yaml), "none", or "auto":
  builtin exactly when the operator yaml is the checkout's yaml/native_functions.yaml;
- an in-tree backend NAME is yaml/NAME_native_functions.yaml with its kernels in csrc/backends/NAME/;
- a derivatives yaml, a backend yaml (--backend-yaml) and a selection (--ops) must exist (the
  operator yaml and its tags are the model loader's to read and report).

Paths are as the caller gave them (relative to its working directory, which is the project's
top for SCons). Bad input raises OpgenError naming every problem; front ends exit with status 2.
The runtime's layers are runtime_layers.LAYERS; which dispatch keys a description generates is
gen/engine/config.py's (``CodegenConfig`` needs the model).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Iterable, Optional

from .errors import Diagnostic, Location, OpgenError

PROJECT_FILE = "opgen.json"
CHECKOUT_YAML = os.path.join("yaml", "native_functions.yaml")
BACKEND_YAML = os.path.join("yaml", "{name}_native_functions.yaml")
BACKEND_SOURCES = os.path.join("csrc", "backends", "{name}")
KERNEL_MODES = ("auto", "builtin", "none")
OFF = "off"


@dataclass(frozen=True)
class BuildDescription:
    root: str                       # the checkout: its yaml/, csrc/
    yaml: str
    tags: Optional[str]
    derivatives: Optional[str]      # None: no autograd layer
    derivatives_given: bool         # named by the caller, not found beside the yaml
    builtin_kernels: bool           # csrc/native's kernels are compiled
    backends: tuple[str, ...]       # in-tree backends, sorted
    backend_yamls: tuple[str, ...]  # backends built from their yaml alone, in the order given
    selection: Optional[str]        # a selective build's operator list


def tags_beside(yaml: str) -> Optional[str]:
    """tags.yaml beside the operator yaml, when there is one."""
    found = os.path.join(os.path.dirname(yaml), "tags.yaml")
    return found if os.path.isfile(found) else None


def derivatives_beside(yaml: str) -> Optional[str]:
    """derivatives.yaml beside the operator yaml, when there is one."""
    found = os.path.join(os.path.dirname(yaml), "derivatives.yaml")
    return found if os.path.isfile(found) else None


def available_backends(root: str) -> list[str]:
    """The in-tree backends: a yaml/NAME_native_functions.yaml with csrc/backends/NAME/ beside it."""
    directory = os.path.join(root, "csrc", "backends")
    names = sorted(os.listdir(directory)) if os.path.isdir(directory) else []
    return [name for name in names
            if os.path.isdir(os.path.join(directory, name)) and os.path.isfile(os.path.join(root, BACKEND_YAML.format(name=name)))]


def describe_build(root: str, *, yaml: str = CHECKOUT_YAML, tags: Optional[str] = None, derivatives: Optional[str] = None,
                   kernels: str = "auto", backends: Iterable[str] = (), backend_yamls: Iterable[str] = (),
                   selection: Optional[str] = None) -> BuildDescription:
    problems: list[Diagnostic] = []

    def must_exist(path: Optional[str]) -> None:
        if path is not None and not os.path.isfile(path):
            problems.append(Diagnostic(Location(path, 0), "no such file"))

    # The operator yaml and its tags are the model loader's to read (and to report).
    tags = tags if tags is not None else tags_beside(yaml)
    given = derivatives not in (None, OFF)
    derivatives = derivatives_beside(yaml) if derivatives is None else None if derivatives == OFF else derivatives
    must_exist(derivatives)
    if kernels not in KERNEL_MODES:
        problems.append(Diagnostic(None, f"--kernels={kernels}: not one of {', '.join(KERNEL_MODES)}"))
    own = os.path.realpath(os.path.join(root, CHECKOUT_YAML)) == os.path.realpath(yaml)
    names = sorted(set(filter(None, backends)))
    known = available_backends(root)
    for name in names:
        if name not in known:
            problems.append(Diagnostic(None, f"--backend={name}: no such backend; available: "
                                       f"{', '.join(known) or 'none'} (a backend is {BACKEND_YAML.format(name='NAME')} "
                                       f"with its kernels in {BACKEND_SOURCES.format(name='NAME')}/)"))
    yamls = tuple(dict.fromkeys(filter(None, backend_yamls)))
    for path in yamls:
        must_exist(path)
    must_exist(selection)
    if problems:
        raise OpgenError(problems)
    return BuildDescription(root=root, yaml=yaml, tags=tags, derivatives=derivatives, derivatives_given=given,
                            builtin_kernels=kernels == "builtin" or (kernels == "auto" and own),
                            backends=tuple(names), backend_yamls=yamls, selection=selection)


def project_file(start: str = ".") -> Optional[str]:
    """The nearest ``opgen.json`` at or above ``start``."""
    directory = os.path.abspath(start)
    while True:
        candidate = os.path.join(directory, PROJECT_FILE)
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def default_yaml(start: str = ".") -> Optional[str]:
    """The project's yaml (a path as the user would type it), else the checkout's, else None."""
    path = project_file(start)
    if path is not None:
        try:
            with open(path, encoding="utf-8") as handle:
                yaml = json.load(handle)["yaml"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise OpgenError(f"not a project description ({{\"yaml\": FILE}}): {exc}", Location(path, 0)) from None
        resolved = os.path.join(os.path.dirname(path), yaml)
        return os.path.relpath(resolved) if not os.path.isabs(yaml) else yaml
    return CHECKOUT_YAML if os.path.isfile(CHECKOUT_YAML) else None


def project_text(yaml: str) -> str:
    """An ``opgen.json`` naming ``yaml`` (relative to the project)."""
    return json.dumps({"yaml": yaml}, indent=2, sort_keys=True) + "\n"
