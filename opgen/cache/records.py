"""What builds did, in the codegen cache's index: their hits, misses and figures, the groups they
produced and the inputs of new keys (for explain), and the cache's statistics."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

from . import index as idx
from .entry import Found
from .inputs import Inputs, parse_stored_inputs

REMOTE_FIGURES = ("hits", "misses", "errors", "rejected")
# The run of the last recorded build, beside the index (BuildRecords.last_run_id).
LAST_RUN_FILE = "last_run"


@dataclass(frozen=True)
class Production:
    """One group a build produced: materialized from ``found`` (fetched from the remote tier when
    ``remote``), or rendered (found is None)."""
    group: str
    key: str
    found: Optional[Found]
    remote: bool = False


@dataclass(frozen=True)
class RemoteFigures:
    """What a build's remote tier did: entries fetched, absent, failed calls, bad entries refused."""
    hits: int = 0
    misses: int = 0
    errors: int = 0
    rejected: int = 0


@dataclass(frozen=True)
class BuildRecord:
    label: str
    started: float                  # on the cache's clock
    groups: int                     # groups in the build, produced or up to date
    seconds: float                  # spent producing groups
    produced: tuple[Production, ...]
    inputs: tuple[tuple[str, str, dict[str, str]], ...]  # (group, key, stored_inputs) of keys new to their group
    remote: RemoteFigures = RemoteFigures()
    out_dir: str = ""               # the output directory, absolute; "" when unknown
    run: str = ""                   # the invocation: an SCons run records one build per output directory


class BuildRecords:
    """CodegenCache's build records and stats (needs ``self._index``, ``self._clock``, ``self.root``,
    ``self.max_bytes`` and the entry counting of CodegenCache)."""


    def record_build(self, build: BuildRecord) -> int:
        """Counts a build's hits and misses (local and remote), records its figures, its productions
        and the inputs of keys new to their groups: one transaction for the whole build. Returns the
        build's id. A group fetched from the remote tier is a local miss and a remote hit."""
        local_hits = [p.found for p in build.produced if p.found is not None and not p.remote]
        remote_hits = [p.found for p in build.produced if p.found is not None and p.remote]
        remote = build.remote
        with self._index.write() as db:
            self._count_hits_locked(db, local_hits)
            self._count_misses_locked(db, [p.key for p in build.produced if p.found is None or p.remote])
            idx.bump(db, "seconds_saved", sum(found.entry.render_seconds for found in remote_hits))
            for name in REMOTE_FIGURES:
                idx.bump(db, f"remote_{name}", getattr(remote, name))
            build_id = idx.insert_build(
                db, build.label, build.started, self._clock(), groups=build.groups, hits=len(local_hits),
                misses=len(build.produced) - len(local_hits), regenerated=len(build.produced), seconds=build.seconds,
                saved_seconds=sum(found.entry.render_seconds for found in local_hits + remote_hits),
                remote={name: getattr(remote, name) for name in REMOTE_FIGURES}, run=build.run, out_dir=build.out_dir)
            idx.record_productions(db, build_id, build.out_dir,
                                   [(p.group, p.key, p.found is not None) for p in build.produced])
            for group, key, inputs in build.inputs:
                idx.insert_inputs(db, group, key, inputs, build_id)
        if build.run:
            self._note_run(build.run)
        return build_id

    def last_run_id(self) -> str:
        """The run of the last recorded build ("" when none): a small file beside the index, so a
        no-op build asks without opening the index."""
        try:
            with open(os.path.join(self.root, LAST_RUN_FILE), encoding="utf-8") as handle:
                return handle.read().strip()
        except OSError:
            return ""

    def _note_run(self, run: str) -> None:
        path = os.path.join(self.root, LAST_RUN_FILE)
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(run + "\n")
        os.replace(temporary, path)

    def newest_input_keys(self) -> dict[str, str]:
        """{group: key} of each group's most recently recorded inputs."""
        with self._index.read() as db:
            return idx.newest_input_keys(db)

    def productions(self, group: str, out_dir: Optional[str] = None, n: int = 2) -> list[idx.ProductionRow]:
        """The group's last ``n`` productions into ``out_dir`` (default: the directory it was last
        produced into), newest first."""
        with self._index.read() as db:
            return idx.productions(db, group, out_dir, n)

    def inputs_of_key(self, group: str, key: str) -> Optional[Inputs]:
        """The inputs recorded for ``group`` at ``key`` (for explain), if still kept."""
        with self._index.read() as db:
            stored = idx.inputs_of_key(db, group, key)
        return parse_stored_inputs(stored) if stored is not None else None

    def inputs_history(self, group: str, n: int = 2) -> list[tuple[str, dict[str, str], int]]:
        """(key, inputs as stored, build_id) of the group's last ``n`` distinct keys, newest first."""
        with self._index.read() as db:
            return idx.inputs_history(db, group, n)

    def stats(self) -> dict:
        with self._index.read() as db:
            counts = idx.counters(db)
            entries, size = idx.entry_count(db), idx.total_bytes(db)
            last, builds = idx.last_run(db), idx.build_count(db)
        return {"root": self.root, "entries": entries, "bytes": size, "max_bytes": self.max_bytes,
                "hits": counts["hits"], "misses": counts["misses"], "evictions": counts["evictions"],
                "corrupt": counts["corrupt_reads"], "hit_rate": _rate(counts["hits"], counts["misses"]),
                "seconds_saved": counts["seconds_saved"], "builds": builds,
                "remote": {name: counts[f"remote_{name}"] for name in REMOTE_FIGURES},
                "last_build": _run_figures(last) if last else None}


def _rate(hits: int, misses: int) -> float:
    return hits / (hits + misses) if hits + misses else 0.0


def _build_figures(build: idx.BuildRow) -> dict:
    figures = build.as_dict()
    figures["hit_rate"] = _rate(build.hits or 0, build.misses or 0)
    return figures


_SUMMED = ("groups", "hits", "misses", "regenerated", "seconds", "saved_seconds",
           "remote_hits", "remote_misses", "remote_errors", "remote_rejected")


def _run_figures(builds: list[idx.BuildRow]) -> dict:
    """The last run's figures, summed over its output directories, with each directory's own
    under "outputs" (in the order they were recorded)."""
    outputs = [_build_figures(build) for build in builds]
    figures = dict(outputs[-1])
    for name in _SUMMED:
        figures[name] = sum(output[name] or 0 for output in outputs)
    figures["started"] = min(output["started"] for output in outputs)
    figures["hit_rate"] = _rate(figures["hits"], figures["misses"])
    figures["outputs"] = outputs
    return figures
