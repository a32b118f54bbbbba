"""``python -m opgen select FILE``: what a selective build of FILE holds, why, and how big it is.

FILE is torchgen's selection yaml or a plain list of operators (opgen/selection/load.py). The
closure is computed as the build computes it: the groups' generated files rendered for the
build's configuration (the default keys, and the autograd layer from the derivatives yaml beside
the operator yaml) and the checkout's csrc/ sources scanned for the per-group headers they include.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Optional

from .errors import Location, OpgenError
from .fingerprint import PROJECT_ROOT, default_cache_dir
from .project import CHECKOUT_YAML, PROJECT_FILE, BuildDescription, default_yaml, describe_build



def add_parser(commands) -> None:
    select = commands.add_parser("select", help="what a selective build of FILE holds, why, and its size")
    select.add_argument("selection", metavar="FILE",
                        help="torchgen's selection yaml (operators: ...) or a list, one operator name a line")
    select.add_argument("--yaml", help="native_functions.yaml (default: the project's, named by opgen.json here or "
                                       "above, else yaml/native_functions.yaml)")
    select.add_argument("--tags", help="tags.yaml (default: tags.yaml beside the yaml, when present)")
    select.add_argument("--derivatives", metavar="PATH|off",
                        help="the derivatives yaml of the autograd layer (default: derivatives.yaml beside the yaml, "
                             "when present; off: a build without autograd)")
    select.add_argument("--csrc", metavar="DIR",
                        help="the hand-written sources (default: csrc/ in the current directory, else the checkout's)")
    select.add_argument("--kernels", choices=("auto", "builtin", "none"), default="auto",
                        help="whether csrc/native's kernels are built (as scons --kernels): auto: when the yaml is "
                             "the checkout's own yaml/native_functions.yaml")
    select.add_argument("--backend", metavar="NAME[,NAME]", default="",
                        help="external backends built with it (as scons --backend): their kernels in "
                             "csrc/backends/NAME are compiled whole, so what they call is in the closure")
    select.add_argument("--explain", metavar="OP", action="append", default=[],
                        help="why an operator, group or hand-written source is in the build (repeatable)")
    select.add_argument("--report", action="store_true",
                        help="a size report: groups, objects and the library's estimated size")
    select.add_argument("--cache-dir", help="where object_sizes.json is (default: $OPGEN_CACHE_DIR or <repo>/cache)")
    select.add_argument("--no-cache", action="store_true", help="do not read or write the parse cache")
    select.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from .selection import close_selection, generated_callees, index_sources, load_selection, read_csrc
    from .selection.report import size_report, summary
    from .selection.sizes import object_sizes_path, read_object_sizes
    from .selection.sources import in_library

    csrc = _csrc_dir(args)
    build = _describe(args, csrc)
    model = _model(args, build)
    selection = load_selection(build.selection, model)
    for warning in selection.warnings:
        print(warning, file=sys.stderr)
    sources, runtime = (read_csrc(csrc, kernels=build.builtin_kernels, backends=list(build.backends))
                        if csrc else ({}, frozenset()))
    hand = index_sources(sources, {g.name for g in model.operator_groups}, runtime)
    closure = close_selection(selection, model, generated_callees(model, _config(args, build, model)), hand)
    totals = (len(model.operator_groups), len(hand.sources))
    if args.explain:
        status = 0
        for name in args.explain:
            print(closure.explain(name))
            status |= 0 if name in closure else 1
        return status
    if args.report:
        cache_dir = args.cache_dir or default_cache_dir()
        library_sources = sum(1 for path in hand.sources if in_library(path))
        sys.stdout.write(size_report(selection, closure, totals[0], library_sources, read_object_sizes(cache_dir),
                                     object_sizes_path(cache_dir), known_sources=hand.sources,
                                     implements={path: facts.implements for path, facts in hand.sources.items()}))
        return 0
    text = summary(selection, closure, *totals)
    body, hint = text[:text.rindex("`opgen select FILE")], text[text.rindex("`opgen select FILE"):]
    sys.stdout.write(body + _by_operator(closure, build.derivatives is not None) + hint)
    if not csrc:
        print("note: no csrc/ directory found, so hand-written sources are not counted; pass --csrc DIR")
    return 0


def _by_operator(closure, autograd: bool) -> str:
    """What the closure by operator leaves out of kept kernel files, and which groups train."""
    lines = []
    handles = set(closure.handles)
    declared = [g for g in closure.declared if g not in handles]
    if declared:
        lines.append(f"declared only: {len(declared)} groups implemented in compiled kernel files, their headers "
                     f"generated, neither compiled nor registered: {', '.join(declared)}")
    if handles:
        lines.append(f"backward only: {len(handles)} groups the runtime calls in backward passes alone (nothing "
                     f"selected is used for training), declared, their operator handles compiled but nothing "
                     f"registered: {', '.join(closure.handles)}")
    if autograd and closure.inference:
        lines.append(f"without autograd: {len(closure.inference)} of {len(closure.groups)} groups "
                     "(no entry that needs them is used for training)")
    return "".join(line + "\n" for line in lines)


def _describe(args: argparse.Namespace, csrc: Optional[str]) -> BuildDescription:
    """The build's description (opgen/project.py: the rules `scons --ops` follows), for the
    checkout whose csrc/ is scanned (else the current directory)."""
    if args.yaml is None:
        args.yaml = default_yaml()
        if args.yaml is None:
            raise OpgenError(f"no {PROJECT_FILE} here or above (a project of `opgen init`) and no {CHECKOUT_YAML} "
                             "in the current directory; pass --yaml FILE")
    for path in (args.yaml, args.tags):
        if path is not None and not os.path.isfile(path):
            raise OpgenError("no such file", Location(path, 0))
    root = os.path.dirname(os.path.abspath(csrc)) if csrc else os.getcwd()
    return describe_build(root, yaml=args.yaml, tags=args.tags, derivatives=args.derivatives, kernels=args.kernels,
                          backends=args.backend.split(","), selection=args.selection)


def _model(args: argparse.Namespace, build: BuildDescription):
    from .cache.parse_cache import load_model_cached
    from .collector import paused_for_resident_objects

    with paused_for_resident_objects():
        return load_model_cached(build.yaml, build.tags, cache_dir="" if args.no_cache else None)


def _config(args: argparse.Namespace, build: BuildDescription, model):
    """The build's codegen configuration, as a build without CUDA has it."""
    from .gen import CodegenConfig
    from .gen.engine.config import build_keys

    if not build.derivatives:
        return CodegenConfig(build_keys(cuda=False, autograd=False))
    from .cache.autograd_cache import load_autograd_cached
    from .collector import paused_for_resident_objects
    from .gen.layers.autograd_kernels import AutogradModel

    with paused_for_resident_objects():
        autograd = load_autograd_cached(model, build.derivatives, AutogradModel, cache_dir="" if args.no_cache else None)
    return CodegenConfig(build_keys(cuda=False, autograd=True), autograd=autograd)


def _csrc_dir(args: argparse.Namespace):
    if args.csrc is not None:
        if not os.path.isdir(args.csrc):
            raise OpgenError("no such directory (--csrc)", Location(args.csrc, 0))
        return args.csrc
    for candidate in ("csrc", os.path.join(PROJECT_ROOT, "csrc")):
        if os.path.isdir(candidate):
            return candidate
    return None
