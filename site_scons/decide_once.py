"""Decide whether a file target is out of date once, not twice, while nothing is being built; and
record an up-to-date file's signatures once, not twice.

With --implicit-cache (SConstruct sets it) SCons asks every target whether it is up to date
twice: when the taskmaster first meets it (``Node.scan``: are the implicit dependencies stored
by the last build still valid?) and again when its children are done (``make_ready_current``).
``File.changed`` recomputes the answer each time: the build info, every child's decider and the
signature of the action (a compile command is costly to expand). A no-op over PyTorch's
groups made about two such calls per target (docs/benchmarks.md).

Here ``File.changed()`` remembers its answer together with the count of tasks that have started
or finished executing so far, and gives it again while that count is the same. Whether a
target changed depends only on its children's signatures, its stored info and its action, and
only an executed task can change a child: a child built in between makes the target wait for
it (the count moves on when its task finishes, under the taskmaster's lock, before the target is
asked again), and any task that runs in between moves the count on too, so its answer is then
computed again, as SCons would. A node that is built clears its memo (``Node.clear``), and with
it this answer.

Likewise ``File.visited()`` (the node's content signature, timestamp and size, queued for the
.sconsign) runs for an up-to-date target when the taskmaster finds it up to date and again when
its task completes, in the same critical section; the second run, with no task run in between,
would record the same values again and is skipped.
"""
import SCons.Node
import SCons.Node.FS
import SCons.Taskmaster

_changed = SCons.Node.FS.File.changed
_visited = SCons.Node.FS.File.visited
_prepare = SCons.Taskmaster.Task.prepare
_postprocess = SCons.Taskmaster.Task.postprocess
_MEMO = "opgen_changed"
_VISITED = "opgen_visited"
_UP_TO_DATE = SCons.Node.up_to_date
_tasks_run = 0  # tasks that were found out of date (at prepare) or executed (at postprocess) so far


def _changed_once(self, node=None, allowcache=False):
    if node is not None:
        return _changed(self, node, allowcache)
    memo = self._memo
    if "changed" in memo:  # File.changed's own cache: kept once the target's executor is released
        return memo["changed"]
    remembered = memo.get(_MEMO)
    if remembered is not None and remembered[0] == _tasks_run:
        result = remembered[1]
    else:
        result = _changed(self, None, False)
        memo[_MEMO] = (_tasks_run, result)
    if allowcache:
        memo["changed"] = result
    return result


def _visited_once(self):
    if self._memo.get(_VISITED) == _tasks_run and self.get_state() == _UP_TO_DATE:
        return
    _visited(self)
    self._memo[_VISITED] = _tasks_run


def _count_if_running(task) -> None:
    global _tasks_run
    if any(t.get_state() != _UP_TO_DATE for t in task.targets):
        _tasks_run += 1


def _prepare_counted(self):
    result = _prepare(self)
    _count_if_running(self)
    return result


def _postprocess_counted(self):
    _count_if_running(self)
    return _postprocess(self)


def install():
    SCons.Node.FS.File.changed = _changed_once
    SCons.Node.FS.File.visited = _visited_once
    SCons.Taskmaster.Task.prepare = _prepare_counted
    SCons.Taskmaster.Task.postprocess = _postprocess_counted
