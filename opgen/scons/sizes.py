"""Recording what a library's objects weigh: after each link of an operator library, its group
units' and hand-written sources' sizes and the library's size go into the codegen cache's
object_sizes.json (opgen/selection/sizes.py: format, merge), so ``opgen select FILE --report``
estimates a selection's library before it is built. An object's size is what it contributes to
the library's allocated sections: its own symbols' bytes and those of the inline functions and
templates it is the first in link order to carry (the copy the linker keeps), read with nm
(object_symbols.SymbolMemo.linked_bytes, remembered per object: an edit reads one object). A full
build writes no link map: writing one cost lld 0.4 s of each link of PyTorch's library, and
reading it ~1 s, on every edit. A selective build linked with lld writes one (library.py) and
measures its objects from it (opgen/link_map.py: what --gc-sections kept of each), recorded
under ``measured`` for the report. A full build also records what a selective link would drop
of its objects or add (opgen/object_layout.py: the loops of each stub, who calls each stub, each
unit's autograd layer and operator handles), read from the objects' ELF sections and relocations
and remembered per object beside the symbols' memo (object_layout.json).

A post-action of the library's link: nothing runs on a no-op build, the file is written only
when its bytes change, and a build with the codegen cache off ($OPGEN_CACHE_DIR="") records
nothing. A selective build adds the objects the full build's figures lack and records its
library's size beside the full one's (and says both).
"""
import dataclasses
import os
from typing import Mapping, Optional

from opgen import link_map, object_layout
from opgen.fingerprint import default_cache_dir
from opgen.scons.toolset.messages import report
from opgen.object_symbols import NmError, SymbolMemo
from opgen.scons.link import shard_of
from opgen.selection.sizes import Measured, ObjectSizes, read_object_sizes, recorded_sizes, write_object_sizes


LAYOUT_MEMO = "object_layout.json"  # beside the symbols' memo: each object's layout facts (object_layout.py)


def cache_dir_of(env) -> Optional[str]:
    """The codegen cache directory of ``env`` ($OPGEN_CACHE_DIR; "" is off: None)."""
    configured = env.get("OPGEN_CACHE_DIR")
    root = default_cache_dir() if configured is None else configured
    return root or None


class _Recorder:
    def __init__(self, cache_dir, yaml, objects_by_group, objects_by_source, selection, memo, map_path=None,
                 handles_by_group=None):
        self.handles_by_group = handles_by_group or {}
        self.cache_dir = cache_dir
        self.yaml = yaml
        self.objects_by_group = objects_by_group
        self.objects_by_source = objects_by_source
        self.selection = selection
        self.memo = memo
        self.map_path = map_path

    def run(self, target, source, env):
        library = _size([target[0]])
        size = self._linked_size() or _size
        built = ObjectSizes({group: size(nodes) for group, nodes in sorted(self.objects_by_group.items())},
                            {path: size(nodes) for path, nodes in sorted(self.objects_by_source.items())},
                            library, self.yaml,
                            handles={group: size(nodes) for group, nodes in sorted(self.handles_by_group.items())})
        if self.selection is None:
            built = self._with_layout(built)
        previous = read_object_sizes(self.cache_dir)
        recorded = recorded_sizes(previous, built, self.selection, self._measured(library))
        try:
            write_object_sizes(self.cache_dir, recorded)
        except OSError as exc:  # an unwritable cache slows no build down and stops none
            report(f"[opgen] warning: object sizes not recorded ({exc})")
        if self.selection is not None:
            full = f" (the full build's: {_mib(recorded.library_bytes)})" if recorded.library_bytes else ""
            report(f"[opgen] selective library {target[0]}: {_mib(library)}{full}")
        return 0

    def _with_layout(self, built: ObjectSizes) -> ObjectSizes:
        """A full build's figures and what a selective link would drop of them (object_layout.py)."""
        path = lambda nodes: [node.abspath for node in nodes]  # noqa: E731
        memo = os.path.join(os.path.dirname(self.memo), LAYOUT_MEMO) if self.memo else None
        found = object_layout.analyze({g: path(nodes) for g, nodes in self.objects_by_group.items()},
                                      {p: path(nodes) for p, nodes in self.objects_by_source.items()}, memo)
        return dataclasses.replace(built, autograd=found.autograd, handles=found.handles, loops=found.loops,
                                   stub_callers=found.stub_callers)

    def _measured(self, library: int):
        """The library's objects as its link map weighs them (None without a readable lld map)."""
        if self.map_path is None:
            return None
        found = link_map.read(self.map_path, os.getcwd())
        if found is None:
            return None
        size = lambda nodes: sum(found.objects.get(node.abspath, 0) for node in nodes)  # noqa: E731
        groups = {group: size(nodes) for group, nodes in sorted(self.objects_by_group.items())}
        sources = {path: size(nodes) for path, nodes in sorted(self.objects_by_source.items())}
        handles = {group: size(nodes) for group, nodes in sorted(self.handles_by_group.items())}
        objects = sum(groups.values()) + sum(sources.values()) + sum(handles.values())
        return Measured(groups, sources, library - objects, library, handles)

    def _linked_size(self):
        """nodes -> the bytes they contribute to the library; None when nm cannot tell. The link
        order: the library's own objects, then the group archives by shard (link.py)."""
        order = [node.abspath for _, nodes in sorted(self.objects_by_source.items()) for node in nodes]
        order += [node.abspath for _, nodes in sorted(self.handles_by_group.items()) for node in nodes]
        order += [node.abspath for group in sorted(self.objects_by_group, key=lambda g: (shard_of(g), g))
                  for node in self.objects_by_group[group]]
        memo = SymbolMemo(self.memo)
        try:
            linked = memo.linked_bytes(path for path in order if os.path.isfile(path))
        except NmError:
            return None
        memo.save()
        return lambda nodes: sum(linked.get(node.abspath, 0) for node in nodes)


def _size(nodes) -> int:
    return sum(os.path.getsize(node.abspath) for node in nodes if os.path.isfile(node.abspath))


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB"


def record_object_sizes(env, library, objects_by_group: Mapping[str, list], objects_by_source: Mapping[str, list],
                        yaml: str, selection: Optional[str] = None, memo: Optional[str] = None,
                        map_path: Optional[str] = None, handles_by_group: Optional[Mapping[str, list]] = None) -> None:
    """After ``library`` links, records its objects' sizes ({group: [object]}, {source path:
    [object]}) for ``yaml`` in the codegen cache; ``selection``: the selection file of a
    selective build; ``memo``: where the objects' sizes are remembered between builds;
    ``map_path``: the link map the link writes (lld's), measuring a selective library;
    ``handles_by_group``: {group: [its handles object]} of a selection's left-out groups."""
    cache_dir = cache_dir_of(env)
    if cache_dir is None:
        return
    recorder = _Recorder(cache_dir, yaml, {g: env.Flatten(o) for g, o in objects_by_group.items()},
                         {p: env.Flatten(o) for p, o in objects_by_source.items()}, selection,
                         env.File(memo).abspath if memo else None, env.File(map_path).abspath if map_path else None,
                         {g: env.Flatten(o) for g, o in (handles_by_group or {}).items()})
    env.AddPostAction(library[0], env.Action(recorder.run, strfunction=None))
    if memo:
        env.Clean(library, [memo, os.path.join(os.path.dirname(memo), LAYOUT_MEMO)])
