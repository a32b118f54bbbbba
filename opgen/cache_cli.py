"""``python -m opgen cache <subcommand>``: what the codegen cache holds, what hit, why a group
rebuilt.  Every subcommand prints plain text for a terminal, or JSON with ``--json``."""
from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import time
from typing import Optional

from .errors import Location, OpgenError
from .fingerprint import digest

SIZE_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20, "MB": 1 << 20,
              "MIB": 1 << 20, "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30}
AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_size(text: str) -> int:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", text)
    if not match or match.group(2).upper() not in SIZE_UNITS:
        raise argparse.ArgumentTypeError(f"'{text}' is not a size; write e.g. 500M, 1G or 1048576")
    return int(float(match.group(1)) * SIZE_UNITS[match.group(2).upper()])


def parse_age(text: str) -> float:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"'{text}' is not an age; write e.g. 30m, 12h or 7d")
    return float(match.group(1)) * AGE_UNITS[match.group(2) or "s"]


def human_size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def human_age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit}"
    return f"{seconds:.0f}s"


def add_parser(commands) -> None:
    cache = commands.add_parser("cache", help="inspect the codegen cache: stats, ls, show, explain, verify, gc")
    cache.add_argument("--cache-dir", help="cache directory (default: $OPGEN_CACHE_DIR or <repo>/cache)")
    sub = cache.add_subparsers(dest="cache_command", required=True, parser_class=commands._parser_class)

    def command(name, help_text, run):
        parser = sub.add_parser(name, help=help_text)
        parser.add_argument("--json", action="store_true", help="print JSON instead of text")
        parser.set_defaults(run=run)
        return parser

    command("stats", "entries, bytes, hit rates, evictions, time saved (and ccache's counters)", _stats)
    command("ls", "one line per entry: group, short key, size, age, hits", _ls).add_argument(
        "pattern", nargs="?", default="*", help="group name pattern (fnmatch), e.g. 'add*'")
    command("show", "a group's current key, inputs, files and their hashes", _show).add_argument("group")
    explain = command("explain", "why a group regenerated, against the previous build of the same output directory",
                      _explain)
    explain.add_argument("group")
    explain.add_argument("--out", metavar="DIR", help="the output directory (default: the one the group was last "
                                                      "generated into)")
    verify = command("verify", "rehash every entry; exit 1 when any is corrupt, orphaned or missing", _verify)
    verify.add_argument("--repair", action="store_true", help="delete bad entries and stale index rows")
    gc = command("gc", "evict entries: least recently used beyond --max-size, or older than --older-than", _gc)
    gc.add_argument("--max-size", type=parse_size, help="e.g. 500M, 1G")
    gc.add_argument("--older-than", type=parse_age, help="last used longer ago than this, e.g. 7d, 12h")


def open_cache(args: argparse.Namespace):
    from .cache.store import CodegenCache, codegen_dir

    root = codegen_dir(args.cache_dir or None)
    if not os.path.isdir(root):
        raise OpgenError(f"no codegen cache at {root}; a build (scons, or python -m opgen generate) creates it",
                         Location(root, 0))
    return CodegenCache(root)


def _print(args: argparse.Namespace, data, text: str) -> None:
    sys.stdout.write(json.dumps(data, indent=1, sort_keys=True) + "\n" if args.json else text)


# The project's compile log, which the ccache tool (opgen/scons/toolset/ccache.py, STATS_LOG)
# has ccache write under the project's top directory; read from the current directory.
CCACHE_STATS_LOG = os.path.join("build", "ccache-stats.log")


def ccache_stats() -> Optional[dict]:
    """ccache's own hit counters, when ccache is installed: its cache directory's, which every
    build on the machine that uses that directory adds to (``cache_dir`` says which)."""
    if shutil.which("ccache") is None:
        return None
    run = subprocess.run(["ccache", "--print-stats"], capture_output=True, text=True)
    if run.returncode != 0:
        return None
    stats = dict(line.split("\t", 1) for line in run.stdout.splitlines() if "\t" in line)
    hits = int(stats.get("direct_cache_hit", 0)) + int(stats.get("preprocessed_cache_hit", 0))
    remote = {"hits": int(stats.get("remote_storage_hit", 0)), "misses": int(stats.get("remote_storage_miss", 0)),
              "errors": int(stats.get("remote_storage_error", 0)) + int(stats.get("remote_storage_timeout", 0))}
    directory = subprocess.run(["ccache", "--get-config", "cache_dir"], capture_output=True, text=True)
    return {"hits": hits, "misses": int(stats.get("cache_miss", 0)), "remote": remote, "scope": "machine",
            "cache_dir": directory.stdout.strip() if directory.returncode == 0 else None}


def checkout_compiles(path: str = CCACHE_STATS_LOG) -> Optional[dict]:
    """This project's compiles through ccache, from its stats log (``# FILE`` then one counter a
    line per compile), since its build directory was made; None without a log."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    counters = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    hits = sum(counters.count(name) for name in ("direct_cache_hit", "preprocessed_cache_hit"))
    return {"hits": hits, "misses": counters.count("cache_miss"), "remote_hits": counters.count("remote_storage_hit"),
            "log": os.path.abspath(path), "scope": "checkout"}


def _rate(hits: int, misses: int) -> str:
    return f"{100.0 * hits / (hits + misses):.1f}%" if hits + misses else "n/a"


def _produced(figures: dict) -> str:
    """What a build did to the groups of its output directories: materialized from the cache,
    rendered, or nothing (up to date)."""
    regenerated, hits = figures.get("regenerated") or 0, figures.get("hits") or 0
    if not regenerated:
        return f"{figures.get('groups') or 0} groups, all up to date"
    rendered = regenerated - hits
    what = ("all materialized from the cache" if not rendered
            else f"{hits} materialized from the cache, {rendered} rendered")
    return f"{regenerated} of {figures.get('groups') or 0} groups produced: {what}"


def _last_build_lines(last: dict) -> list[str]:
    if not last:
        return ["last build       none recorded"]
    outputs = last.get("outputs") or [last]
    lines = [f"last build       {_produced(last)} (hit rate {_rate(last.get('hits') or 0, last.get('misses') or 0)}, "
             f"{last.get('seconds') or 0:.2f} s)" + (f", {len(outputs)} output directories" if len(outputs) > 1 else "")]
    if len(outputs) > 1 or (outputs[0].get("out_dir")):
        for output in outputs:
            where = output.get("out_dir") or "(unknown)"
            shown = os.path.relpath(where) if os.path.isabs(where) and not os.path.relpath(where).startswith("..") else where
            lines.append(f"  {shown} ({output.get('label')}): {_produced(output)}")
    return lines


def _stats(args: argparse.Namespace) -> int:
    cache = open_cache(args)
    stats = cache.stats()
    shared = bool(args.cache_dir or os.environ.get("OPGEN_CACHE_DIR"))
    stats["scope"] = "shared" if shared else "checkout"
    ccache = ccache_stats()
    if ccache is not None:
        stats["ccache"] = ccache
    compiles = checkout_compiles()
    if compiles is not None:
        stats["ccache_checkout"] = compiles
    last = stats.get("last_build") or {}
    whose = "shared: every build that names it" if shared else "this checkout's"
    lines = [
        f"codegen cache    {stats['root']} ({whose})",
        f"entries          {stats['entries']} ({human_size(stats['bytes'])} of {human_size(stats['max_bytes'])})",
        *_last_build_lines(last),
        f"overall          {stats['hits']} hits, {stats['misses']} misses (hit rate {_rate(stats['hits'], stats['misses'])})",
        _remote_line(stats["remote"], last),
        f"evictions        {stats['evictions']}",
        f"corrupt reads    {stats['corrupt']}",
        f"time saved       {stats['seconds_saved']:.2f} s of rendering",
    ]
    if compiles is not None:
        lines.append(f"compiles, this checkout  {compiles['hits']} ccache hits, {compiles['misses']} misses "
                     f"(hit rate {_rate(compiles['hits'], compiles['misses'])}; since build/ was made, "
                     f"from {CCACHE_STATS_LOG})")
    if ccache is not None:
        where = f" {ccache['cache_dir']}" if ccache.get("cache_dir") else ""
        lines.append(f"ccache, machine-wide     {ccache['hits']} hits, {ccache['misses']} misses "
                     f"(hit rate {_rate(ccache['hits'], ccache['misses'])}; every build using ccache's cache{where})")
        remote = ccache["remote"]
        lines.append(f"ccache remote, machine-wide  {remote['hits']} hits, {remote['misses']} misses, "
                     f"{remote['errors']} errors")
    _print(args, stats, "\n".join(lines) + "\n")
    return 0


def _remote_line(remote: dict, last: dict) -> str:
    """The remote tier's figures overall, and the last build's when it used one."""
    line = (f"remote           {remote['hits']} hits, {remote['misses']} misses, {remote['errors']} errors, "
            f"{remote['rejected']} rejected (hit rate {_rate(remote['hits'], remote['misses'])})")
    used = [last.get(f"remote_{name}") or 0 for name in ("hits", "misses", "errors", "rejected")]
    if any(used):
        line += f"; last build {used[0]} hits, {used[1]} misses, {used[2]} errors, {used[3]} rejected"
    return line


def _ls(args: argparse.Namespace) -> int:
    entries = [e for e in open_cache(args).entries() if fnmatch.fnmatchcase(e["group"], args.pattern)]
    entries.sort(key=lambda e: (e["group"], e["key"]))
    now = time.time()
    rows = [f"{e['group']:<32} {e['key'][:12]}  {human_size(e['size']):>10}  {human_age(now - e['created']):>5} old  "
            f"{e['hits']:>4} hits" for e in entries]
    _print(args, entries, "\n".join(rows) + ("\n" if rows else "") + f"{len(entries)} entries\n")
    return 0


def _latest_inputs(cache, group: str):
    history = cache.inputs_history(group, 2)
    if not history:
        raise OpgenError(f"no build has recorded operator group '{group}' in this cache; check the name "
                         f"(python -m opgen cache ls) or build first", Location(cache.root, 0))
    return history


def _show(args: argparse.Namespace) -> int:
    cache = open_cache(args)
    key, inputs, build = _latest_inputs(cache, args.group)[0]
    files = cache.peek(key) or {}
    hashes = {path: digest(text.encode("utf-8")) for path, text in sorted(files.items())}
    data = {"group": args.group, "key": key, "build": build, "inputs": inputs, "files": hashes,
            "cached": bool(files)}
    lines = [f"{args.group}: key {key} (recorded by build {build}){'' if files else ', entry not in the cache'}",
             "inputs:"] + [f"  {name} = {value}" for name, value in sorted(inputs.items())]
    lines += ["files:"] + [f"  {digest_[:16]}  {path}" for path, digest_ in hashes.items()]
    _print(args, data, "\n".join(lines) + "\n")
    return 0


def _explain(args: argparse.Namespace) -> int:
    from .cache.inputs import explain

    cache = open_cache(args)
    out_dir = os.path.realpath(args.out) if args.out else None
    latest, *earlier = cache.productions(args.group, out_dir, n=2) or [None]
    if latest is None:
        where = f" into {args.out}" if args.out else ""
        raise OpgenError(f"no build has produced operator group '{args.group}'{where} with this cache; check the "
                         f"name (opgen cache ls) or build first", Location(cache.root, 0))
    previous = earlier[0] if earlier else None
    if previous is not None and previous.key == latest.key:
        reasons = [f"inputs unchanged since build {previous.build_id}; its files were missing from the build "
                   f"directory (a new or cleaned one)"]
    else:
        inputs = cache.inputs_of_key(args.group, latest.key)
        old = cache.inputs_of_key(args.group, previous.key) if previous is not None else None
        if inputs is None or (previous is not None and old is None):
            reasons = ["the inputs of its earlier key are no longer recorded (the cache keeps a group's last few)"]
        else:
            reasons = explain(old, inputs)
    how = "materialized from the cache" if latest.hit else "rendered"
    data = {"group": args.group, "key": latest.key, "build": latest.build_id, "out_dir": latest.out_dir,
            "previous_key": previous.key if previous else None, "reasons": reasons, "materialized": latest.hit}
    text = (f"{args.group} regenerated in build {latest.build_id} into {latest.out_dir or '(unknown)'} "
            f"(key {latest.key[:12]}, {how}):\n" + "".join(f"  {r}\n" for r in reasons))
    _print(args, data, text)
    return 0


def _verify(args: argparse.Namespace) -> int:
    report = open_cache(args).verify(repair=args.repair)
    bad = {k: v for k, v in report.items() if k != "ok" and v}
    lines = [f"{report['ok']} entries ok"]
    for kind, items in sorted(bad.items()):
        lines.append(f"{len(items)} {kind}{' (repaired)' if args.repair else ''}:")
        lines.extend(f"  {item}" for item in items)
    _print(args, report, "\n".join(lines) + "\n")
    return 1 if bad else 0


def _gc(args: argparse.Namespace) -> int:
    from .cache.autograd_cache import prune_autograd
    from .cache.parse_cache import prune_models
    from .fingerprint import default_cache_dir

    report = open_cache(args).gc(max_bytes=args.max_size, older_than_seconds=args.older_than)
    report.update(prune_models(args.cache_dir or default_cache_dir(), older_than_seconds=args.older_than))
    # After the models: the autograd facts of the models no longer kept go with them.
    report.update(prune_autograd(args.cache_dir or default_cache_dir(), older_than_seconds=args.older_than))
    _print(args, report, f"evicted {report.get('evicted', 0)} entries ({human_size(report.get('bytes_freed', 0))}); "
                         f"{report.get('entries', 0)} entries, {human_size(report.get('bytes', 0))} left; "
                         f"removed {report['models_removed']} superseded parsed models "
                         f"({human_size(report['model_bytes_freed'])}), {report['models']} left\n")
    return 0
