"""Recording what a library's objects weigh: after each link of an operator library, its group
units' and hand-written sources' object sizes and the library's size go into the codegen cache's
object_sizes.json (opgen/selection/sizes.py: format, merge), so ``opgen select FILE --report``
estimates a selection's library before it is built.

A post-action of the library's link: nothing runs on a no-op build, the file is written only
when its bytes change, and a build with the codegen cache off ($OPGEN_CACHE_DIR="") records
nothing. A selective build merges its objects into the full build's figures and records its
library's size beside the full one's (and says both).
"""
import os
from typing import Mapping, Optional

from opgen.fingerprint import default_cache_dir
from opgen.scons.toolset.messages import report
from opgen.selection.sizes import ObjectSizes, read_object_sizes, recorded_sizes, write_object_sizes


def cache_dir_of(env) -> Optional[str]:
    """The codegen cache directory of ``env`` ($OPGEN_CACHE_DIR; "" is off: None)."""
    configured = env.get("OPGEN_CACHE_DIR")
    root = default_cache_dir() if configured is None else configured
    return root or None


class _Recorder:
    def __init__(self, cache_dir, yaml, objects_by_group, objects_by_source, selection):
        self.cache_dir = cache_dir
        self.yaml = yaml
        self.objects_by_group = objects_by_group
        self.objects_by_source = objects_by_source
        self.selection = selection

    def run(self, target, source, env):
        library = _size([target[0]])
        built = ObjectSizes({group: _size(nodes) for group, nodes in sorted(self.objects_by_group.items())},
                            {path: _size(nodes) for path, nodes in sorted(self.objects_by_source.items())},
                            library, self.yaml)
        previous = read_object_sizes(self.cache_dir)
        recorded = recorded_sizes(previous, built, self.selection)
        try:
            write_object_sizes(self.cache_dir, recorded)
        except OSError as exc:  # an unwritable cache slows no build down and stops none
            report(f"[opgen] warning: object sizes not recorded ({exc})")
        if self.selection is not None:
            full = f" (the full build's: {_mib(recorded.library_bytes)})" if recorded.library_bytes else ""
            report(f"[opgen] selective library {target[0]}: {_mib(library)}{full}")
        return 0


def _size(nodes) -> int:
    return sum(os.path.getsize(node.abspath) for node in nodes if os.path.isfile(node.abspath))


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB"


def record_object_sizes(env, library, objects_by_group: Mapping[str, list], objects_by_source: Mapping[str, list],
                        yaml: str, selection: Optional[str] = None) -> None:
    """After ``library`` links, records its objects' sizes ({group: [object]}, {source path:
    [object]}) for ``yaml`` in the codegen cache; ``selection``: the selection file of a
    selective build."""
    cache_dir = cache_dir_of(env)
    if cache_dir is None:
        return
    recorder = _Recorder(cache_dir, yaml, {g: env.Flatten(o) for g, o in objects_by_group.items()},
                         {p: env.Flatten(o) for p, o in objects_by_source.items()}, selection)
    env.AddPostAction(library[0], env.Action(recorder.run, strfunction=None))
