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

from .errors import Location, OpgenError
from .fingerprint import PROJECT_ROOT, default_cache_dir
from .project import CHECKOUT_YAML, PROJECT_FILE, default_yaml



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

    model = _model(args)
    selection = load_selection(args.selection, model)
    for warning in selection.warnings:
        print(warning, file=sys.stderr)
    csrc = _csrc_dir(args)
    sources, runtime = (read_csrc(csrc, kernels=_builtin_kernels(args, csrc), backends=_backends(args, csrc))
                        if csrc else ({}, frozenset()))
    hand = index_sources(sources, {g.name for g in model.operator_groups}, runtime)
    closure = close_selection(selection, model, generated_callees(model, _config(args, model)), hand)
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
                                     object_sizes_path(cache_dir), known_sources=hand.sources))
        return 0
    sys.stdout.write(summary(selection, closure, *totals))
    if not csrc:
        print("note: no csrc/ directory found, so hand-written sources are not counted; pass --csrc DIR")
    return 0


def _model(args: argparse.Namespace):
    from .cache.parse_cache import load_model_cached
    from .collector import paused_for_resident_objects
    from .model import default_tags_path

    if args.yaml is None:
        args.yaml = default_yaml()
        if args.yaml is None:
            raise OpgenError(f"no {PROJECT_FILE} here or above (a project of `opgen init`) and no {CHECKOUT_YAML} "
                             "in the current directory; pass --yaml FILE")
    for path in (args.yaml, args.tags, args.selection):
        if path is not None and not os.path.isfile(path):
            raise OpgenError("no such file", Location(path, 0))
    with paused_for_resident_objects():
        return load_model_cached(args.yaml, args.tags or default_tags_path(args.yaml),
                                 cache_dir="" if args.no_cache else None)


def _config(args: argparse.Namespace, model):
    """The build's codegen configuration: the default keys, and autograd when a derivatives yaml is given or found."""
    from .gen import CodegenConfig
    from .gen.config import AUTOGRAD_KEYS, DEFAULT_KEYS

    path = args.derivatives or os.path.join(os.path.dirname(args.yaml), "derivatives.yaml")
    if args.derivatives == "off" or (args.derivatives is None and not os.path.isfile(path)):
        return CodegenConfig(DEFAULT_KEYS)
    if not os.path.isfile(path):
        raise OpgenError("no such file", Location(path, 0))
    from .cache.autograd_cache import load_autograd_cached
    from .collector import paused_for_resident_objects
    from .gen.autograd_kernels import AutogradModel

    with paused_for_resident_objects():
        autograd = load_autograd_cached(model, path, AutogradModel, cache_dir="" if args.no_cache else None)
    return CodegenConfig(DEFAULT_KEYS + AUTOGRAD_KEYS, autograd=autograd)


def _csrc_dir(args: argparse.Namespace):
    if args.csrc is not None:
        if not os.path.isdir(args.csrc):
            raise OpgenError("no such directory (--csrc)", Location(args.csrc, 0))
        return args.csrc
    for candidate in ("csrc", os.path.join(PROJECT_ROOT, "csrc")):
        if os.path.isdir(candidate):
            return candidate
    return None


def _backends(args: argparse.Namespace, csrc: str) -> list[str]:
    """--backend's names, each a directory of csrc/backends."""
    names = sorted(set(filter(None, args.backend.split(","))))
    root = os.path.join(csrc, "backends")
    available = sorted(d for d in os.listdir(root) if d != "support" and os.path.isdir(os.path.join(root, d))) \
        if os.path.isdir(root) else []
    for name in names:
        if name not in available:
            raise OpgenError(f"--backend={name}: no such backend in {os.path.join(csrc, 'backends')}; available: "
                             f"{', '.join(available) or 'none'}")
    return names


def _builtin_kernels(args: argparse.Namespace, csrc: str) -> bool:
    """csrc/native implements the checkout's own yaml (scons --kernels=auto): another yaml gets none."""
    if args.kernels != "auto":
        return args.kernels == "builtin"
    own = os.path.join(os.path.dirname(os.path.abspath(csrc)), "yaml", "native_functions.yaml")
    return os.path.realpath(args.yaml) == os.path.realpath(own)
