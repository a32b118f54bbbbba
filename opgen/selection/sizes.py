"""``object_sizes.json``: what a full build's objects weigh, so a selection's library size can be
estimated before it is built (``opgen select --report``).

The build writes it after linking (``write_object_sizes``; opgen/scons/sizes.py calls it, with
``recorded_sizes`` merging what the build made into what was there), the size report reads it
(``read_object_sizes``). It lives in the codegen cache directory (``<cache dir>/object_sizes.json``:
$OPGEN_CACHE_DIR, or cache/ of the checkout), one per cache: a full build replaces the figures
(of its yaml: another yaml's are dropped), a selective build adds those of its objects that are
not recorded yet and records its library under ``selections`` (``recorded_sizes``). The format, JSON with sorted keys::

    {
      "version": 2,
      "yaml": "yaml/native_functions.yaml",        # the operator yaml of the build that wrote it
      "library_bytes": 5242880,                    # the linked library's size in bytes, or null
      "groups": {"add": 181234, "addmm": 90210},   # bytes of each operator group's objects, summed
      "sources": {"csrc/native/binary_ops.cpp": 61234},  # bytes of each hand-written source's object
      # What a selective link drops or adds (opgen/object_layout.py, from a full build's objects):
      "autograd": {"add": 10410},                  # each unit's autograd layer (inference-only groups lack it)
      "handles": {"add": 11452},                   # each group's operator handles (a left-out group's handles
                                                   # object; a selective build that compiled one records its own)
      "loops": {"csrc/native/cpu/binary_kernels.cpp": {"add_stub_CPU": 31186, "amax_stub_CPU,sum_stub_CPU": 700}},
                                                   # bytes only those stub pointers reach
      "stub_callers": {"add_stub_CPU": {"groups": ["add", "sub"], "sources": []}},  # whose kernels call it
      "selections": {"ops.yaml": 3145728},         # a selective build's library, by selection (optional)
      "measured": {"ops.yaml": {                   # a selective build's objects, from its link map (optional)
        "groups": {"addmm": 40960}, "sources": {"csrc/native/unary_ops.cpp": 20480}, "handles": {"add": 12770},
        "linker_bytes": 1048576, "library_bytes": 3145728}}
    }

The bytes of an object are what it contributes to the library's allocated sections (its symbols'
bytes, read with nm by opgen/object_symbols.py), else its file's size. The difference matters: a
group's object holds its own copy of every inline function and template it uses, which the
linker keeps once, so an object's file is mostly what every other object has too (on our yaml:
25 MB of objects for a 9 MB library; an MLP selection's objects are 76% of those bytes, its
library 96% of the full one). Linked bytes give each shared copy to the first object in link
order that has it, as the linker does.

``measured`` is what a selective build linked with lld weighed in its own library, read from the
link map (opgen/link_map.py): after --gc-sections, each object's kept sections; ``linker_bytes``
is what no object contributes (dynamic symbols, relocations, the symbol table, headers). So the
report can set the estimate against the truth, and say what each family file cost.

A missing, unreadable or malformed file, or one of another version, reads as None: the report
then says the size is unknown until a full build records object sizes.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional

from ..writer import write_if_changed

OBJECT_SIZES_FILE = "object_sizes.json"
VERSION = 2


@dataclass(frozen=True)
class Measured:
    """A built library's objects as its link map weighs them."""

    groups: Mapping[str, int]
    sources: Mapping[str, int]
    linker_bytes: int    # the file's bytes no object contributes
    library_bytes: int
    handles: Mapping[str, int] = field(default_factory=dict)  # group -> its handles object (Closure.handles)

    def json(self) -> dict:
        data = {"groups": dict(sorted(self.groups.items())), "sources": dict(sorted(self.sources.items())),
                "linker_bytes": self.linker_bytes, "library_bytes": self.library_bytes}
        if self.handles:
            data["handles"] = dict(sorted(self.handles.items()))
        return data


@dataclass(frozen=True)
class ObjectSizes:
    groups: Mapping[str, int] = field(default_factory=dict)
    sources: Mapping[str, int] = field(default_factory=dict)
    library_bytes: Optional[int] = None
    yaml: str = ""
    selections: Mapping[str, int] = field(default_factory=dict)  # selection file -> its library's bytes
    measured: Mapping[str, Measured] = field(default_factory=dict)  # selection file -> its link map's figures
    # What a selective link drops of these objects (opgen/object_layout.py; a full build's):
    autograd: Mapping[str, int] = field(default_factory=dict)  # group -> its unit's autograd layer
    handles: Mapping[str, int] = field(default_factory=dict)   # group -> its operator handles alone
    loops: Mapping[str, Mapping[str, int]] = field(default_factory=dict)  # source -> {stubs: loop bytes}
    stub_callers: Mapping[str, Mapping[str, list]] = field(default_factory=dict)  # stub -> {groups, sources}


def object_sizes_path(cache_dir: str) -> str:
    return os.path.join(cache_dir, OBJECT_SIZES_FILE)


def object_sizes_json(sizes: ObjectSizes) -> str:
    data = {"version": VERSION, "yaml": sizes.yaml, "library_bytes": sizes.library_bytes,
            "groups": dict(sorted(sizes.groups.items())), "sources": dict(sorted(sizes.sources.items()))}
    data.update(autograd=dict(sorted(sizes.autograd.items())), handles=dict(sorted(sizes.handles.items())),
                loops={path: dict(sorted(loops.items())) for path, loops in sorted(sizes.loops.items())},
                stub_callers={stub: {"groups": sorted(by.get("groups", ())), "sources": sorted(by.get("sources", ()))}
                              for stub, by in sorted(sizes.stub_callers.items())})
    if sizes.selections:
        data["selections"] = dict(sorted(sizes.selections.items()))
    if sizes.measured:
        data["measured"] = {name: measured.json() for name, measured in sorted(sizes.measured.items())}
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def write_object_sizes(cache_dir: str, sizes: ObjectSizes) -> bool:
    """Writes ``<cache_dir>/object_sizes.json`` (only when its bytes change); True when written."""
    return write_if_changed(object_sizes_path(cache_dir), object_sizes_json(sizes))


def read_object_sizes(cache_dir: str) -> Optional[ObjectSizes]:
    try:
        with open(object_sizes_path(cache_dir), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return None
    groups, sources, library = data.get("groups"), data.get("sources"), data.get("library_bytes")
    selections = data.get("selections", {})
    if not (_sizes(groups) and _sizes(sources) and _sizes(selections)) or not (library is None or _size(library)):
        return None
    measured = _measured(data.get("measured", {}))
    autograd, handles = data.get("autograd", {}), data.get("handles", {})
    loops, callers = data.get("loops", {}), data.get("stub_callers", {})
    if measured is None or not (_sizes(autograd) and _sizes(handles) and isinstance(loops, dict)
                                and all(_sizes(v) for v in loops.values()) and _callers(callers)):
        return None
    return ObjectSizes(dict(groups), dict(sources), library, str(data.get("yaml", "")), dict(selections), measured,
                       dict(autograd), dict(handles), {k: dict(v) for k, v in loops.items()},
                       {k: {"groups": list(v["groups"]), "sources": list(v["sources"])} for k, v in callers.items()})


def _callers(value) -> bool:
    return isinstance(value, dict) and all(
        isinstance(by, dict) and all(isinstance(by.get(kind), list) and all(isinstance(n, str) for n in by[kind])
                                     for kind in ("groups", "sources"))
        for by in value.values())


def _measured(value) -> Optional[dict[str, Measured]]:
    if not isinstance(value, dict):
        return None
    result = {}
    for name, entry in value.items():
        if not (isinstance(entry, dict) and _sizes(entry.get("groups")) and _sizes(entry.get("sources"))
                and _size(entry.get("linker_bytes")) and _size(entry.get("library_bytes"))
                and _sizes(entry.get("handles", {}))):
            return None
        result[name] = Measured(dict(entry["groups"]), dict(entry["sources"]), entry["linker_bytes"],
                                entry["library_bytes"], dict(entry.get("handles", {})))
    return result


def recorded_sizes(previous: Optional[ObjectSizes], built: ObjectSizes, selection: Optional[str] = None,
                   measured: Optional[Measured] = None) -> ObjectSizes:
    """What to record after a build made ``built`` (its objects and library; ``selection``: the
    selection file of a selective build, None for a full one), given what was recorded before.

    A full build's figures replace the previous ones (keeping the selections' libraries of its
    yaml); a selective build adds the objects a previous build of the same yaml did not record
    (a full build's figures stay: what an object contributes to a library depends on what else
    is linked, and the estimate compares with the full library), its library goes under
    ``selections`` and its link map's figures (``measured``, when read) under ``measured``, the
    full library's size is kept."""
    same_yaml = previous is not None and previous.yaml == built.yaml
    selections = dict(previous.selections) if same_yaml else {}
    measures = dict(previous.measured) if same_yaml else {}
    if selection is None:
        return dataclasses.replace(built, selections=selections, measured=measures)
    if built.library_bytes is not None:
        selections[selection] = built.library_bytes
    if measured is not None:
        measures[selection] = measured
    else:
        measures.pop(selection, None)  # figures of an older link of it would not be this library's
    if not same_yaml:
        return dataclasses.replace(built, library_bytes=None, selections=selections, measured=measures)
    # A handles object built is what its group's handles weigh (a full build estimated them from the unit).
    return dataclasses.replace(previous, groups={**built.groups, **previous.groups},
                               sources={**built.sources, **previous.sources}, selections=selections,
                               measured=measures, handles={**previous.handles, **built.handles})


def _size(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _sizes(value) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and _size(v) for k, v in value.items())


@dataclass(frozen=True)
class SizeEstimate:
    """A selection's objects and library, estimated from a full build's recorded sizes."""

    objects_bytes: int                 # the selection's objects: recorded sizes, the unknown at the mean
    full_objects_bytes: int            # every recorded object
    library_bytes: Optional[int]       # the selective library: the full one scaled by the objects' share
    full_library_bytes: Optional[int]
    unknown_groups: tuple[str, ...]    # groups of the selection without a recorded size
    unknown_sources: tuple[str, ...]


def estimate(groups: Iterable[str], sources: Iterable[str], sizes: ObjectSizes, inference: Iterable[str] = (),
             handles: Iterable[str] = ()) -> SizeEstimate:
    """``groups``' units and ``sources``' objects, as the selective link keeps them: without the
    autograd layer of the ``inference`` groups (generated without it), without the loops of the
    stubs no kept group's kernel and no compiled source calls (--gc-sections drops them), with the
    handles objects of the ``handles`` groups."""
    groups, sources = list(groups), list(sources)
    group_bytes, unknown_groups = _sum(groups, sizes.groups)
    source_bytes, unknown_sources = _sum(sources, sizes.sources)
    kept = set(groups)
    group_bytes -= sum(min(sizes.autograd.get(g, 0), sizes.groups.get(g, 0)) for g in set(inference) & kept)
    source_bytes -= dropped_loop_bytes(kept, sources, sizes)
    group_bytes += sum(sizes.handles.get(g, 0) for g in handles)
    full = sum(sizes.groups.values()) + sum(sizes.sources.values())
    selected = group_bytes + source_bytes
    library = None
    if sizes.library_bytes is not None and full:
        library = round(sizes.library_bytes * min(selected / full, 1.0))
    return SizeEstimate(selected, full, library, sizes.library_bytes, unknown_groups, unknown_sources)


def kept_stubs(groups: Iterable[str], sources: Iterable[str], sizes: ObjectSizes) -> set[str]:
    """The stubs (``<stub>_<DEVICE>``) that a kept group's kernels or a compiled source call."""
    groups, sources = set(groups), set(sources)
    return {stub for stub, by in sizes.stub_callers.items()
            if groups.intersection(by.get("groups", ())) or sources.intersection(by.get("sources", ()))}


def dropped_loop_bytes(groups: Iterable[str], sources: Iterable[str], sizes: ObjectSizes) -> int:
    """The bytes of the compiled loop objects that only stubs nothing kept calls reach."""
    sources = list(sources)
    kept = kept_stubs(groups, sources, sizes)
    dropped = 0
    for path in sources:
        loops = sizes.loops.get(path, {})
        lost = sum(size for key, size in loops.items() if kept.isdisjoint(key.split(",")))
        dropped += min(lost, sizes.sources.get(path, 0))
    return dropped


def _sum(names: list[str], recorded: Mapping[str, int]) -> tuple[int, tuple[str, ...]]:
    """Bytes of ``names``: recorded ones, the others at the mean of the recorded (0 when none is)."""
    known = [recorded[name] for name in names if name in recorded]
    unknown = tuple(sorted(name for name in names if name not in recorded))
    mean = sum(recorded.values()) / len(recorded) if recorded else 0
    return sum(known) + round(mean * len(unknown)), unknown
