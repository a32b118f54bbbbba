"""Rendering on every core: the jobs a run renders, in worker processes.

Rendering is pure Python, so threads (SCons' -jN) take turns on one core. A ``RenderPool``
forks its workers once the model and what renders each job (its ``Codegen``) exist, which is
before the jobs' keys (``opgen generate`` sends each job as soon as its key is known,
engine/early.py): each worker inherits them, receives indices and sends back each job's files
and its render's seconds, or the error the render raised, which ``render`` raises where the job
is produced, as a serial run would. Cache lookups and stores, file writes, state and reports
stay in the calling process (the cache is sqlite).

Fork copies only the thread that forks, so a pool is forked while its process has no other
thread (the CLI; SCons while it reads the SConscripts, before its job threads start): a lock
another thread held at that moment would stay locked in the workers. Off Linux, jobs render in
the calling process.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import traceback
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_all_start_methods, get_context
from typing import Optional, Sequence

from ...cache.session import Rendered, render_codegen, render_here
from .jobs import Codegen, GroupJob
from .render import load_templates

# The fewest jobs to render that start workers: below it, forking and sending the files back
# cost more than they save (docs/architecture.md, "The codegen engine"). Tests set it to 1.
THRESHOLD_VARIABLE = "OPGEN_RENDER_POOL_THRESHOLD"
DEFAULT_THRESHOLD = 64
CHUNK = 8  # jobs per message to a worker (a few ms of rendering); results come back per chunk


def available_cores() -> int:
    """The cores this process may run on (its affinity, which a container or taskset narrows)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def pool_threshold() -> int:
    try:
        return max(1, int(os.environ.get(THRESHOLD_VARIABLE, DEFAULT_THRESHOLD)))
    except ValueError:
        return DEFAULT_THRESHOLD


def worth_a_pool(jobs_to_render: int, workers: int) -> bool:
    """Whether rendering that many jobs in ``workers`` processes pays for starting them."""
    return workers > 1 and jobs_to_render >= pool_threshold() and _can_fork()


class WorkerTraceback(Exception):
    """Where a render failed in its worker: the cause of the error raised in the caller."""

    def __str__(self) -> str:
        return "\n" + self.args[0]


@dataclass(frozen=True)
class _Failure:
    error: BaseException
    traceback: str


class RenderPool:
    """``workers`` processes forked now, inheriting ``codegens`` (what renders each job that may
    be sent); ``send`` gives them jobs to render, ``render`` gives one job's ``Rendered`` once its
    worker sent it back (a job not sent renders here). Safe to call from several threads;
    ``close`` ends the workers."""

    def __init__(self, codegens: Sequence[Codegen], workers: int):
        if not _can_fork():
            raise RuntimeError("a render pool is forked only from a process with one thread")
        # By identity: two plans of one SCons run may each have a job of the same name.
        self._position = {id(codegen): index for index, codegen in enumerate(codegens)}
        self._sent: dict[int, tuple[Future, int]] = {}  # id(job's codegen) -> (its chunk's future, place in it)
        self._sending = True
        self._waiting = 0  # threads between taking a sent job and having its result
        self._lock = threading.Lock()
        load_templates()
        self._executor = ProcessPoolExecutor(workers, mp_context=get_context("fork"),
                                             initializer=_adopt, initargs=(tuple(codegens), os.getpid()))
        # With fork the executor starts every worker at its first submit: make that now.
        self._executor.submit(os.getpid)

    def send(self, jobs: Sequence[GroupJob], more: bool = False) -> None:
        """Sends the workers jobs to render, in this order; ``more``: others follow in a later
        call (the last one says ``more=False``). They end once every job sent was picked: their
        memory is of no more use."""
        with self._lock:
            for first in range(0, len(jobs), CHUNK):
                chunk = jobs[first:first + CHUNK]
                future = self._executor.submit(_render_chunk, [self._position[id(job.codegen)] for job in chunk])
                for place, job in enumerate(chunk):
                    self._sent[id(job.codegen)] = (future, place)
            self._sending = more
        self._end_when_done()

    def render(self, job: GroupJob) -> Rendered:
        with self._lock:
            sent = self._sent.pop(id(job.codegen), None)
            self._waiting += sent is not None
        if sent is None:
            return render_here(job)
        future, place = sent
        try:
            outcome = future.result()[place]
        finally:
            with self._lock:
                self._waiting -= 1
        self._end_when_done()
        if isinstance(outcome, _Failure):
            raise outcome.error from WorkerTraceback(outcome.traceback)
        return outcome

    def close(self) -> None:
        """Ends the workers (jobs not yet rendered are dropped) and waits for them to exit."""
        self._executor.shutdown(wait=True, cancel_futures=True)

    def _end_when_done(self) -> None:
        with self._lock:
            # The last job taken is not the last awaited: another thread may still wait for an
            # earlier chunk, which closing now would cancel.
            done = not self._sending and not self._sent and not self._waiting
        if done:  # nothing is waited for any more: the workers exit at once, and are joined
            self.close()


def render_pool(jobs: Sequence[GroupJob], workers: int) -> Optional[RenderPool]:
    """A pool rendering ``jobs`` when that pays (``worth_a_pool``), else None."""
    if not worth_a_pool(len(jobs), workers):
        return None
    pool = RenderPool([job.codegen for job in jobs], min(workers, len(jobs)))
    pool.send(jobs)
    return pool


def _can_fork() -> bool:
    # Linux only (macOS's system libraries do not survive a fork). Fork copies only the thread
    # that forks: a lock another thread holds (stdout's, jinja2's template cache, an import's)
    # would stay held in the workers forever.
    return sys.platform.startswith("linux") and "fork" in get_all_start_methods() and threading.active_count() == 1


# ----- in a worker -----

_codegens: tuple[Codegen, ...] = ()


def _adopt(codegens: tuple[Codegen, ...], parent: int) -> None:
    """A worker's start: what renders the jobs comes with the fork (nothing is pickled); Ctrl-C
    is the parent's to handle, which ends the workers; a parent killed outright (SIGKILL) ends them too."""
    global _codegens
    _codegens = codegens
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _end_with_parent(parent)


# prctl(PR_SET_PDEATHSIG, SIGKILL): a worker inherits the queues' pipe ends, so a parent killed
# outright leaves it waiting for a job forever (tests/codegen's SIGKILL test left two per run).
_PR_SET_PDEATHSIG = 1


def _end_with_parent(parent: int) -> None:
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # it died before the call: nobody will send a job
        os._exit(0)


def _render_chunk(positions: list[int]) -> list:
    outcomes = []
    for position in positions:
        try:
            outcomes.append(render_codegen(_codegens[position]))
        except Exception as error:  # raised in the caller when it produces this job
            outcomes.append(_Failure(error, traceback.format_exc()))
    return outcomes
