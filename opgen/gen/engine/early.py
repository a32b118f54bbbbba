"""Rendering started while the keys are computed (``opgen generate``).

A cold run computes ~1,300 keys in this process (docs/benchmarks.md: half a second on PyTorch's
yaml) before it knows what to render. When enough keys are unknown to the memo (a new yaml, a
new configuration, an empty cache), the workers are forked before the keys instead (what
renders a job exists before its key) and each job is sent as soon as its key says that
neither the tree nor the cache holds it, so the workers render while the keys are computed.
``CodegenPlan.produce_all`` then takes the results in the jobs' order as usual and sends the
jobs left (a key the memo knew whose entry is gone), ending the stream.
"""
from __future__ import annotations

from typing import Callable, Mapping, Optional, Sequence

from ...cache.session import CacheSession
from .jobs import Codegen, GroupJob
from .workers import CHUNK, RenderPool, worth_a_pool


class EarlyRenders:
    """A ``KeyListener`` (engine/jobs.py) that forks the render workers before the keys when
    enough keys must be computed, and sends them each job the run will render."""

    def __init__(self, session: CacheSession, recorded: Callable[[], Mapping[str, dict]], workers: int):
        self.session = session
        self._recorded = recorded         # reads the tree's state: job name -> {"key", "files"}
        self.recorded: Mapping[str, dict] = {}
        self.workers = workers
        self.pool: Optional[RenderPool] = None
        self._asked: set[str] = set()     # jobs whose will_render was asked (once: it may fetch from a remote tier)
        self._pending: list[GroupJob] = []

    def before_keys(self, codegens: Sequence[Codegen], to_compute: int) -> None:
        # The keys no memo had are those of new content: most will render. Those it had are left to
        # produce_all, which knows then whether the cache holds them.
        if worth_a_pool(to_compute, self.workers):
            self.recorded = self._recorded()
            self.pool = RenderPool(codegens, min(self.workers, len(codegens)))

    def keyed(self, job: GroupJob) -> None:
        if self.pool is None:
            return
        recorded = self.recorded.get(job.name)
        if recorded and recorded.get("key") == job.key:
            return  # current in the tree, unless a file is missing: then it is produced here
        self._asked.add(job.name)
        if not self.session.will_render(job):
            return
        self._pending.append(job)
        if len(self._pending) >= CHUNK:
            self._send(more=True)

    def take_pool(self, jobs: Sequence[GroupJob]) -> Optional[RenderPool]:
        """The pool, sent the jobs still pending and those of ``jobs`` (the run's to produce) not
        asked about yet that it will render, and told none follow; None when no pool was forked."""
        if self.pool is None:
            return None
        self._pending += [job for job in jobs if job.name not in self._asked and self.session.will_render(job)]
        self._send(more=False)
        pool, self.pool = self.pool, None
        return pool

    def close(self) -> None:
        """Ends the workers of a run that stopped before producing (an error while keying)."""
        if self.pool is not None:
            self.pool.close()
            self.pool = None

    def _send(self, more: bool) -> None:
        self.pool.send(self._pending, more=more)
        self._pending = []
