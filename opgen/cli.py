"""``python -m opgen``: command-line entry points.

Exit status: 0 success, 2 invalid input (diagnostics on stderr), 1 internal error.
"""
from __future__ import annotations

import argparse
import os
import sys
import traceback
from typing import Optional, Sequence

from . import __version__
from .errors import Location, OpgenError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own exit code for usage errors is 2 as well
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def _existing_file(path: str) -> str:
    if not os.path.isfile(path):
        raise argparse.ArgumentTypeError(f"no such file: {path}")
    return path


def _prog() -> str:
    """``opgen`` when run as the console script, else the command that ran it."""
    return "opgen" if os.path.basename(sys.argv[0] or "") == "opgen" else "python -m opgen"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=_prog(), description="Incremental operator code generation.")
    parser.add_argument("--version", action="version", version=f"opgen {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND",
                                     title="commands")
    model = commands.add_parser("model", help="parse and validate a yaml; print a summary or JSON")
    model.add_argument("yaml", type=_existing_file, help="native_functions.yaml to read")
    model.add_argument("--tags", type=_existing_file, help="tags.yaml (default: tags.yaml beside YAML, when present)")
    model.add_argument("--json", action="store_true", help="print the whole model as JSON")
    model.add_argument("--no-cache", action="store_true", help="do not read or write the parse cache")
    model.add_argument("--backend-yaml", type=_existing_file,
                       help="an external backend's yaml (xla_native_functions.yaml format) to validate; prints its kernels per key")
    model.add_argument("--derivatives", type=_existing_file,
                       help="a derivatives.yaml (torchgen's format) to validate against YAML; with --json adds \"autograd\"")
    model.set_defaults(run=_run_model)

    generate = commands.add_parser("generate", help="generate the C++ of every operator group into a directory")
    generate.add_argument("yaml", type=_existing_file, help="native_functions.yaml to read")
    generate.add_argument("--tags", type=_existing_file, help="tags.yaml (default: tags.yaml beside YAML, when present)")
    generate.add_argument("--out", required=True, type=_output_directory,
                          help="output directory (created; only changed files are written)")
    generate.add_argument("--keys", type=_dispatch_keys, default=None,
                          help="comma-separated dispatch keys to generate kernels for (default: the SCons build's)")
    generate.add_argument("--no-cache", action="store_true",
                          help="do not read or write the parse and codegen caches (render every group)")
    generate.add_argument("--backend-yaml", type=_existing_file,
                          help="also generate an external backend's declarations and registrations (under backends/<Key>/)")
    generate.add_argument("--derivatives", type=_existing_file,
                          help="a derivatives.yaml: also generate each group's Autograd and ADInplaceOrView kernels "
                               "and backward nodes (keys Autograd,ADInplaceOrView, added to the default keys)")
    generate.add_argument("--cache-remote", metavar="URL", default=None,
                          help="remote codegen cache tier, redis://host:port[/db] (default: $OPGEN_CACHE_REMOTE; "
                               "'off' disables it)")
    generate.add_argument("--cache-remote-read-only", action="store_true", default=None,
                          help="fetch from the remote tier but never store to it (default: $OPGEN_CACHE_REMOTE_READ_ONLY)")
    generate.add_argument("-j", "--jobs", type=_positive, default=None, metavar="N",
                          help="processes rendering the groups the cache lacks (default: the cores this process may "
                               "use; 1 renders in this process)")
    generate.set_defaults(run=_run_generate)

    from .cache_cli import add_parser as add_cache_parser
    add_cache_parser(commands)
    from .select_cli import add_parser as add_select_parser
    add_select_parser(commands)

    init = commands.add_parser("init", help="scaffold a project with its own operators, ready for scons")
    init.add_argument("directory", help="the project's directory (created; it must not exist or be empty)")
    init.add_argument("--namespace", help="the operators' namespace (default: DIRECTORY's name made an identifier)")
    init.set_defaults(run=_run_init)

    ops = commands.add_parser("ops", help="list operators: overloads, variants, kernels, FILE:LINE")
    ops.add_argument("pattern", nargs="?", default="*",
                     help="fnmatch pattern on the base name (add*) or the full name (add.Tensor); default: all")
    ops.add_argument("--yaml", type=_existing_file,
                     help="native_functions.yaml to read (default: the project's, named by opgen.json here or above, else yaml/native_functions.yaml)")
    ops.add_argument("--tags", type=_existing_file, help="tags.yaml (default: tags.yaml beside the yaml, when present)")
    ops.add_argument("--json", action="store_true", help="print JSON instead of text")
    ops.add_argument("--no-cache", action="store_true", help="do not read or write the parse cache")
    ops.set_defaults(run=_run_ops)
    return parser


def _output_directory(path: str) -> str:
    if os.path.exists(path) and not os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"{path} exists and is not a directory; name a directory to generate into")
    return path


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got '{text}'")
    return value


def _dispatch_keys(text: str):
    from .model.dispatch_keys import DispatchKey
    from .errors import did_you_mean

    keys = []
    for name in filter(None, (part.strip() for part in text.split(","))):
        try:
            keys.append(DispatchKey(name))
        except ValueError:
            known = [k.value for k in DispatchKey]
            hint = did_you_mean(name, known, f"known keys: {', '.join(known)}")
            raise argparse.ArgumentTypeError(f"unknown dispatch key '{name}'; {hint}") from None
    if not keys:
        raise argparse.ArgumentTypeError("no dispatch keys given")
    return tuple(keys)


def _load_model(args: argparse.Namespace):
    from .cache.parse_cache import load_model_cached
    from .collector import paused_for_resident_objects
    from .model import default_tags_path

    tags = args.tags or default_tags_path(args.yaml)
    with paused_for_resident_objects():
        return load_model_cached(args.yaml, tags, cache_dir="" if args.no_cache else None)


def _run_model(args: argparse.Namespace) -> int:
    from .model.summary import model_json, model_summary

    model = _load_model(args)
    if args.backend_yaml:
        from .model.backend_yaml import backend_summary, parse_backend_yaml

        backend = parse_backend_yaml(args.backend_yaml, model)
        sys.stdout.write(model_json(backend.apply_to(model), backend.ir_nodes) if args.json else backend_summary(backend))
        return 0
    if args.derivatives:
        from .model.derivatives import derivatives_summary, load_derivatives

        derivatives = load_derivatives(args.derivatives, model)
        sys.stdout.write(model_json(model, autograd=derivatives.as_json()) if args.json else derivatives_summary(derivatives))
        return 0
    sys.stdout.write(model_json(model) if args.json else model_summary(model))
    return 0


def _run_generate(args: argparse.Namespace) -> int:
    from .gen import CodegenConfig, generate_tree

    model = _load_model(args)
    config = _codegen_config(args, model)
    backend = None
    if args.backend_yaml:
        from .model.backend_yaml import parse_backend_yaml

        backend = parse_backend_yaml(args.backend_yaml, model)
    from .cache.remote import remote_from_environment

    remote = None if args.no_cache else remote_from_environment(args.cache_remote, args.cache_remote_read_only)
    from .gen.engine.workers import available_cores

    report = generate_tree(model, args.out, config, backend, cache_dir="" if args.no_cache else None, remote=remote,
                           workers=args.jobs or available_cores())
    print(report.summary())
    return 0


def _codegen_config(args: argparse.Namespace, model) -> "CodegenConfig":
    """The keys of a build (gen/engine/config.py's build_keys: no CUDA) unless --keys names them; the
    derivatives only when --derivatives names them (project.py resolves and checks the path)."""
    from .gen import CodegenConfig
    from .gen.engine.config import AUTOGRAD_KEYS, build_keys
    from .project import OFF, describe_build

    build = describe_build(os.getcwd(), yaml=args.yaml, tags=args.tags, derivatives=args.derivatives or OFF)
    keys = tuple(args.keys) if args.keys else build_keys(cuda=False, autograd=build.derivatives is not None)
    if not build.derivatives:
        if any(key in AUTOGRAD_KEYS for key in keys):
            raise OpgenError(f"--keys {','.join(k.value for k in AUTOGRAD_KEYS if k in keys)} needs --derivatives FILE")
        return CodegenConfig(keys)
    from .cache.autograd_cache import load_autograd_cached
    from .collector import paused_for_resident_objects
    from .gen.layers.autograd_kernels import AutogradModel

    with paused_for_resident_objects():
        autograd = load_autograd_cached(model, build.derivatives, AutogradModel, cache_dir="" if args.no_cache else None)
    return CodegenConfig(keys, autograd=autograd)


def _run_ops(args: argparse.Namespace) -> int:
    from .ops_listing import NoMatch, ops_json, ops_text, select
    from .project import CHECKOUT_YAML, PROJECT_FILE, default_yaml

    if args.yaml is None:
        args.yaml = default_yaml()
        if args.yaml is None:
            print(f"opgen ops: no {PROJECT_FILE} here or above (a project of `opgen init`) and no {CHECKOUT_YAML} "
                  "in the current directory; pass --yaml FILE", file=sys.stderr)
            return 2
    model = _load_model(args)
    try:
        groups = select(model, args.pattern)
    except NoMatch as exc:
        print(f"opgen ops: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(ops_json(model, groups) if args.json else ops_text(groups))
    return 0


def _run_init(args: argparse.Namespace) -> int:
    from .scaffold import scaffold

    written = scaffold(args.directory, args.namespace)
    print(f"created {args.directory}: {', '.join(written)}")
    print(f"next: cd {args.directory} && scons && python -m pytest")
    return 0


def report(error: OpgenError) -> None:
    for diagnostic in error.diagnostics:
        print(str(diagnostic), file=sys.stderr)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except OpgenError as exc:
        report(exc)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug in opgen, not in the input
        if os.environ.get("OPGEN_DEBUG"):
            traceback.print_exc()
        print(f"opgen: internal error: {type(exc).__name__}: {exc} (set OPGEN_DEBUG=1 for a traceback)", file=sys.stderr)
        return 1


__all__ = ["main", "report", "Location"]
