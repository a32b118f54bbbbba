"""What ``opgen select`` prints: a selection's summary and its size report. Pure: data in, text out."""
from __future__ import annotations

from collections import Counter
from typing import Collection, Mapping, Optional

from .closure import Closure, ReasonKind
from .selection import Selection
from .sizes import ObjectSizes, dropped_loop_bytes, estimate, kept_stubs
from .sources import in_library

# How the summary names the first reason of a group beyond the selection.
_ORIGIN = {
    ReasonKind.STRUCTURED: "structured delegates",
    ReasonKind.GENERATED: "called by generated code",
    ReasonKind.CALLED_BY_SOURCE: "called by kernel sources",
    ReasonKind.IMPLEMENTED_BESIDE: "implemented beside a selected kernel",
    ReasonKind.RUNTIME_CALL: "called by the runtime",
    ReasonKind.RUNTIME_IMPL: "implemented by the runtime",
    ReasonKind.SUPPORT: "called by support code",
    ReasonKind.UMBRELLA: "every group (an umbrella header)",
}
LISTED = 40  # lists longer than this are counted, not shown


def summary(selection: Selection, closure: Closure, total_groups: int, total_sources: int) -> str:
    what = "every operator (include_all_operators)" if selection.include_all else f"{len(selection.keys)} operators"
    fmt = "torchgen's selection yaml" if selection.format == "torchgen-yaml" else "a list"
    selected = closure.selected_groups
    lines = [f"{selection.source}: {what} selected ({fmt}), in {len(selected)} operator groups",
             f"closure: {len(closure.groups)} of {total_groups} operator groups, {len(closure.operators)} operators"]
    beyond = Counter(closure.reasons[g][0].kind for g in closure.groups if g not in selected)
    if beyond:
        parts = ", ".join(f"{count} {_ORIGIN[kind]}" for kind, count in sorted(beyond.items(), key=lambda kv: (-kv[1], kv[0].value)))
        lines.append(f"  beyond the selection: {sum(beyond.values())} ({parts})")
    left_out = total_groups - len(closure.groups)
    lines.append(f"  left out: {left_out} operator groups")
    kinds = Counter(reason.kind for reason in closure.source_reasons.values())
    lines.append(f"hand-written sources: {len(closure.sources)} of {total_sources} compiled "
                 f"({kinds['runtime']} runtime, {kinds['support']} support, {kinds['implements']} kernel sources)")
    kernels = [path for path in closure.sources if closure.source_reasons[path].kind == "implements"]
    for path in kernels[:LISTED]:
        lines.append(f"  {path}: {closure.source_reasons[path].text()}")
    if len(kernels) > LISTED:
        lines.append(f"  ... and {len(kernels) - LISTED} more")
    for path, header in closure.unresolved:
        lines.append(f"warning: {path} includes {header}, which no operator group of the yaml generates: it will not compile")
    lines.append("`opgen select FILE --explain OP` says why an operator is in; --report estimates the library's size")
    return "\n".join(lines) + "\n"


def size_report(selection: Selection, closure: Closure, total_groups: int, total_sources: int,
                sizes: Optional[ObjectSizes], sizes_path: str, known_sources: Optional[Collection[str]] = None,
                implements: Optional[Mapping[str, Collection[str]]] = None) -> str:
    """``total_sources``: the library's hand-written sources in a full build; the closure's sources
    compiled into the Python extension (sources.EXTENSION_DIRS) are not the library's.
    ``known_sources``: the sources the closure judged; a recorded object of another (CUDA loops,
    a build's extra objects) is in every build, as the build compiles every source it does not judge.
    ``implements``: the groups each hand-written source implements (its family, when several)."""
    sources = [path for path in closure.sources if in_library(path)]
    if sizes is not None and known_sources is not None:
        others = sorted(path for path in sizes.sources if path not in known_sources)
        sources += others
        total_sources += len(others)
    objects = len(closure.groups) + len(sources) + len(closure.handles)
    handles = f" + {len(closure.handles)} handles objects" if closure.handles else ""
    lines = [f"size report for {selection.source}",
             f"  operator groups: {len(closure.groups)} of {total_groups}",
             f"  objects: {objects} ({len(closure.groups)} group units + {len(sources)} hand-written sources{handles}), "
             f"of {total_groups + total_sources} in the full build"]
    if sizes is None:
        lines.append(f"  library size: unknown until a full build records object sizes ({sizes_path})")
        return "\n".join(lines) + "\n"
    result = estimate(closure.groups, sources, sizes, closure.inference, closure.handles)
    share = f" ({100 * result.objects_bytes / result.full_objects_bytes:.0f}%)" if result.full_objects_bytes else ""
    lines.append(f"  object bytes: {_size(result.objects_bytes)} of {_size(result.full_objects_bytes)}{share}, "
                 f"as a full build of {sizes.yaml or 'the yaml'} recorded them ({sizes_path})")
    lines += _dropped_lines(closure, sources, sizes)
    if result.library_bytes is not None:
        lines.append(f"  library size: ~{_size(result.library_bytes)} estimated, of {_size(result.full_library_bytes)} "
                     f"for the full library")
    else:
        lines.append("  library size: unknown (the recorded build has no library size)")
    built = sizes.selections.get(selection.source)
    if built is not None:
        versus = f"; the estimate is {result.library_bytes / built:.2f}x of it" if result.library_bytes and built else ""
        lines.append(f"  built: {_size(built)} (a selective build of {selection.source} recorded it{versus})")
    unknown = len(result.unknown_groups) + len(result.unknown_sources)
    if unknown:
        shown = ", ".join((result.unknown_groups + result.unknown_sources)[:8]) + (", ..." if unknown > 8 else "")
        lines.append(f"  {unknown} objects without a recorded size, counted at the mean: {shown}")
    measured = sizes.measured.get(selection.source)
    if measured is not None and measured.library_bytes == built:
        lines += _measured_lines(measured)
    lines += _family_lines(closure, sources, sizes, measured if measured is not None and measured.library_bytes == built
                           else None, implements or {})
    lines += _group_lines(closure.groups, measured.groups if measured is not None and measured.library_bytes == built
                          else sizes.groups, "in the built library" if measured is not None else
                          "as the full build recorded them")
    return "\n".join(lines) + "\n"


def _dropped_lines(closure: Closure, sources: list[str], sizes: ObjectSizes) -> list[str]:
    """What the estimate takes off the recorded objects, and adds: the link's garbage collection."""
    kept = set(closure.groups)
    loops = dropped_loop_bytes(kept, sources, sizes)
    autograd = sum(min(sizes.autograd.get(g, 0), sizes.groups.get(g, 0)) for g in set(closure.inference) & kept)
    handles = sum(sizes.handles.get(g, 0) for g in closure.handles)
    parts = []
    if loops:
        # Pointers are "<stub>_<DEVICE>": a stub counts when none of its devices' is kept.
        pointers = {key for path in sources for loop in sizes.loops.get(path, {}) for key in loop.split(",")}
        called = {pointer.rsplit("_", 1)[0] for pointer in kept_stubs(kept, sources, sizes)}
        dropped = {pointer.rsplit("_", 1)[0] for pointer in pointers} - called
        parts.append(f"-{_size(loops)} of the loops of {len(dropped)} stubs no kept kernel calls")
    if autograd:
        parts.append(f"-{_size(autograd)} of the autograd layer of {len(set(closure.inference) & kept)} "
                     f"groups used for inference only")
    if handles:
        parts.append(f"+{_size(handles)} of the operator handles of {len(closure.handles)} left-out groups")
    return [f"  in the link: {', '.join(parts)}"] if parts else []


def _measured_lines(measured) -> list[str]:
    groups, sources = sum(measured.groups.values()), sum(measured.sources.values())
    handles = sum(measured.handles.values())
    also = f" + {_size(handles)} of handles objects" if measured.handles else ""
    return [f"  measured from its link map: {_size(groups)} of group units + {_size(sources)} of hand-written sources"
            f"{also} + {_size(measured.linker_bytes)} the linker's own (dynamic symbols, relocations, symbol table, "
            f"headers) = {_size(groups + sources + handles + measured.linker_bytes)}"]


def _family_lines(closure: Closure, sources: list[str], sizes: ObjectSizes, measured,
                  implements: Mapping[str, Collection[str]]) -> list[str]:
    """Each compiled source implementing several groups: how many the build keeps, its bytes."""
    kept = set(closure.groups)
    families = sorted((path for path in sources if len(implements.get(path, ())) > 1),
                      key=lambda path: (-sizes.sources.get(path, 0), path))
    if not families:
        return []
    where = "bytes in the full library / in this one" if measured is not None else "bytes in the full library"
    lines = [f"  family files (a hand-written source implementing several groups), {where}:"]
    for path in families[:LISTED]:
        groups = implements[path]
        cost = _size(sizes.sources.get(path))
        if measured is not None:
            cost += f" / {_size(measured.sources.get(path))}"
        lines.append(f"    {path}: {len(groups)} groups, {len(kept.intersection(groups))} in the build: {cost}")
    return lines


def _group_lines(groups: Collection[str], bytes_of: Mapping[str, int], how: str) -> list[str]:
    ranked = sorted(groups, key=lambda g: (-bytes_of.get(g, 0), g))
    entries = [f"{g} {_size(bytes_of[g])}" for g in ranked[:LISTED] if g in bytes_of]
    rest = ranked[LISTED:]
    if rest:
        entries.append(f"... and {len(rest)} more ({_size(sum(bytes_of.get(g, 0) for g in rest))})")
    lines = [f"  operator groups' bytes, {how}, largest first:"]
    for entry in entries:  # an entry is never split across lines
        if len(lines[-1]) + len(entry) + 2 > 110:
            lines.append("   ")
        lines[-1] += f" {entry},"
    lines[-1] = lines[-1].rstrip(",")
    return lines


def _size(n: Optional[int]) -> str:
    if n is None:
        return "unknown"
    for unit in ("B", "KiB", "MiB"):
        if n < 1024 or unit == "MiB":
            return f"{n} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"
