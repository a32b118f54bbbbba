"""How the test command splits the suite between its parallel workers (pytest-xdist's -n, set in
pyproject.toml): a test file is one unit of work, so its module fixtures are made once and its
tests run in their order; a room whose files share state beyond a file runs whole on one worker,
in its files' order, as in a plain run:

- tests/runtime: the checkout's own build/, which its fixtures (re)build and its tests load, copy
  and run programs from (a second worker's build must not rewrite it under them);
- tests/plugin: one venv whose opgen and ccache caches the files' builds fill in turn;
- tests/remote: servers and caches of the remote tiers, and its builds' counters.

The session fixtures that build whole trees (built_project and its backends, the plugin's venv)
are made once for all workers (tests/worker_share.py). Costly units are handed out first
(EARLY), so that the run does not end with one worker busy and the other idle.
"""
from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling

WHOLE_ROOMS = ("tests/runtime/", "tests/plugin/", "tests/remote/")
# Handed out first, in this order. First the file whose tests count the render workers this very
# process forks: it must run before anything leaves a thread behind in its worker (the remote
# room's servers do), since a process with more than one thread never forks (engine/workers.py).
# Then the longest units (the rooms: 90-250 s each in a run on 2 loaded cores), so the files
# (under 60 s each) fill in around them. The other units follow in collection order.
EARLY = ("tests/codegen/test_parallel_render.py", "tests/runtime/", "tests/plugin/", "tests/remote/")


def unit_of(nodeid: str) -> str:
    """The unit of work a test belongs to: its whole room, or its file."""
    for room in WHOLE_ROOMS:
        if nodeid.startswith(room):
            return room
    return nodeid.split("::", 1)[0]


def rank(unit: str) -> int:
    """A unit's place in the queue: EARLY's units by their order there, then every other."""
    return next((place for place, name in enumerate(EARLY) if unit.startswith(name)), len(EARLY))


class RoomOrFileScheduling(LoadScopeScheduling):
    """xdist's --dist loadscope with unit_of as the scope and EARLY's units first."""

    def _split_scope(self, nodeid: str) -> str:
        return unit_of(nodeid)

    def schedule(self) -> None:
        # Not loadscope's order (by each unit's test count): the count says little about seconds
        # here (7,000 operator tests take less than one downstream build).
        self.config.option.loadscopereorder = False
        super().schedule()

    def _assign_work_unit(self, node) -> None:
        if not getattr(self, "_ranked", False):  # the queue is complete at the first assignment
            self._ranked = True
            units = sorted(self.workqueue.items(), key=lambda unit: rank(unit[0]))  # stable: collection order
            self.workqueue.clear()
            self.workqueue.update(units)
        super()._assign_work_unit(node)
