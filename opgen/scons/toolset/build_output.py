"""SCons tool: build output a person can follow: one short, numbered line per build step.

    [ 12/158] CXX build/obj/core/tensor.os
    [ 80/158] LINK build/lib/libopdispatch.so

Sets the command strings of the compile, link, archive and install actions (CXXCOMSTR,
SHLINKCOMSTR, ARCOMSTR, CUDA_SHOBJCOMSTR, PCHCOMSTR, INSTALLSTR, ...) to ``KIND $TARGET`` and
PRINT_CMD_LINE_FUNC to a printer that numbers each step (one per executor: an archive's ranlib
is part of its AR step) against the number of steps this build runs. That number is counted
once, when the first step prints (a no-op build counts nothing): every node with an action in
the targets' dependency trees that is missing, was never built, has a new dependency or a new
command, or depends on a file whose timestamp changed or on a node counted before it. That is
what makes SCons rebuild a node, read from .sconsign without computing any signature, so the
count is never below what runs: a full build ends at N/N; an incremental one may end below N
when a rebuilt file came out unchanged. Should a step print that was not counted, the
denominator grows with it rather than be passed.

``scons --verbose`` (an option this tool adds) prints the full commands instead, as SCons does
by default; ``scons -s`` prints no step. On a terminal, the kinds listed in
BUILD_OUTPUT_TERMINAL_PROGRESS ({kind: "text {done}/{total}"}) show as one line updated in place.

Other tools' Python actions show ``messages.shown(env, short, full)``: ``short`` ("GEN add")
under this tool, ``full`` otherwise. Messages go through ``messages.notice`` (what the
SConscripts found: quiet with -Q or -s) and ``messages.report`` (what the build did or where its
work goes: quiet with -s); errors and warnings are printed as they are. SConscripts call them as ``env.BuildNotice(text)`` and
``env.BuildReport(text)``. Knows nothing of operators.
"""
import os
import stat
import sys
import threading
import time

import SCons.Node.Alias
import SCons.Node.FS
import SCons.Script
import SCons.Util

from opgen.scons.toolset.messages import notice, report, verbose

# Command-string variables and the kind of step each prints.
COMMAND_STRINGS = {
    "CCCOMSTR": "CC", "SHCCCOMSTR": "CC", "CXXCOMSTR": "CXX", "SHCXXCOMSTR": "CXX",
    "ASCOMSTR": "AS", "ASPPCOMSTR": "AS", "SHASCOMSTR": "AS", "SHASPPCOMSTR": "AS",
    "CUDA_SHOBJCOMSTR": "NVCC", "PCHCOMSTR": "PCH",
    "LINKCOMSTR": "LINK", "SHLINKCOMSTR": "LINK", "LDMODULECOMSTR": "LINK",
    "ARCOMSTR": "AR", "RANLIBCOMSTR": "RANLIB", "INSTALLSTR": "INSTALL",
}
THROTTLE_S = 0.1


class Steps:
    """The numbered step lines of one build (one per process: every environment shares it)."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stdout
        self.lock = threading.Lock()
        self.total = None  # counted when the first step prints
        self.done = 0
        self.seen = set()  # the first target of each step printed
        self.planned_kinds = {}  # kind -> steps of that kind counted, for terminal progress
        self.kind_done = {}  # kind -> its steps shown as terminal progress so far
        self.progress = None  # (kind, done, text) of the line being updated in place
        self.last_update = 0.0

    def print_step(self, text, target, source, env):
        with self.lock:
            key = target[0] if target else text
            if key in self.seen:
                return  # a later action of the same step (ranlib after ar)
            self.seen.add(key)
            if self.total is None:
                self.total = self._count(env)
            self.done += 1
            self.total = max(self.total, self.done)
            kind = text.split(" ", 1)[0]
            formats = env.get("BUILD_OUTPUT_TERMINAL_PROGRESS") or {}
            if kind in formats and self._terminal():
                self._update(kind, formats[kind])
                return
            self._end_progress()
            width = len(str(self.total))
            self.stream.write(f"[{self.done:>{width}}/{self.total}] {text}\n")
            self.stream.flush()

    def _terminal(self):
        return hasattr(self.stream, "isatty") and self.stream.isatty()

    def _update(self, kind, template):
        if self.progress and self.progress[0] != kind:
            self._end_progress()
        done = self.kind_done[kind] = self.kind_done.get(kind, 0) + 1
        total = max(done, self.planned_kinds.get(kind, 0))
        self.progress = (kind, done, template.format(done=done, total=total))
        now = time.monotonic()
        if done == total:
            self._end_progress()
        elif now - self.last_update >= THROTTLE_S:
            self.last_update = now
            self.stream.write("\r" + self.progress[2] + "\x1b[K")
            self.stream.flush()

    def _end_progress(self):
        if self.progress:
            self.stream.write("\r" + self.progress[2] + "\x1b[K\n")
            self.stream.flush()
            self.progress = None

    def finish(self):
        with self.lock:
            self._end_progress()

    def _count(self, env):
        try:
            counter = _PendingSteps(env.get("BUILD_OUTPUT_TERMINAL_PROGRESS") or {} if self._terminal() else {})
            for node in build_target_nodes():
                counter.pending(node)
            self.planned_kinds = counter.kinds
            return len(counter.steps)
        except Exception:  # the count is a courtesy: never fail a build over it
            return 0


def build_target_nodes():
    """The nodes this run builds: the command line's targets, else the defaults, else the top directory."""
    fs = SCons.Node.FS.get_default_fs()
    names = list(SCons.Script.COMMAND_LINE_TARGETS) or list(SCons.Script.DEFAULT_TARGETS) or [fs.Top]
    nodes = []
    for name in SCons.Util.flatten(names):
        if isinstance(name, SCons.Node.Node):
            nodes.append(name)
        else:
            nodes.append(SCons.Node.Alias.default_ans.lookup(name) or fs.Entry(name, fs.Top))
    return SCons.Util.flatten(nodes)


class _PendingSteps:
    """The steps SCons may run for some targets: see the module's docstring."""

    def __init__(self, terminal_kinds):
        self.memo = {}  # node -> may it be rebuilt
        self.steps = set()  # executors that may run
        self.mtimes = {}
        self.terminal_kinds = terminal_kinds
        self.kinds = {}

    def pending(self, node) -> bool:
        try:
            return self.memo[node]
        except KeyError:
            pass
        self.memo[node] = False  # a cycle (SCons reports those) is not pending
        result = self._evaluate(node)
        self.memo[node] = result
        return result

    def _evaluate(self, node) -> bool:
        if isinstance(node, SCons.Node.FS.Dir):
            children = [n for name, n in node.entries.items() if name not in (".", "..")] + (node.depends or [])
            return any([self.pending(child) for child in children])
        if isinstance(node, SCons.Node.FS.Entry) and not isinstance(node, (SCons.Node.FS.File, SCons.Node.FS.Dir)):
            node = node.disambiguate()
            if isinstance(node, SCons.Node.FS.Dir):
                return self.pending(node)
        if not isinstance(node, SCons.Node.FS.File) or not node.has_builder():
            # Aliases, Values and sources: no step of their own (SCons' Alias and Value have none here)
            return any([self.pending(child) for child in (node.sources or []) + (node.depends or [])])
        executor = node.get_executor()
        if executor is None:
            return False  # SCons found it up to date already and released its executor
        targets = executor.get_all_targets()
        binfo = targets[0].get_stored_info().binfo
        if hasattr(binfo, "prepare_dependencies"):
            binfo.prepare_dependencies()
        stored = [(dep, sig) for names, sigs in (("bsources", "bsourcesigs"), ("bdepends", "bdependsigs"),
                                                 ("bimplicit", "bimplicitsigs"))
                  for dep, sig in zip(getattr(binfo, names, None) or [], getattr(binfo, sigs, None) or [])]
        explicit = list(executor.get_all_sources()) + [d for t in targets for d in (t.depends or []) + (t.implicit or [])]
        ignored = {d for t in targets for d in (t.ignore_set or ())}  # env.Ignore: no reason to rebuild, as in SCons
        if ignored:
            explicit = [d for d in explicit if d not in ignored]
        # What must be built first (SCons' Requires) is counted, and is no reason for this node.
        for prerequisite in [p for t in targets for p in (t.prerequisites or [])]:
            self.pending(prerequisite)
        # Every child is visited (all of them count), then the node's own reasons.
        changed_child = any([self.pending(child) for child in explicit + [dep for dep, _ in stored
                                                                          if isinstance(dep, SCons.Node.Node)]])
        result = (changed_child or node.always_build
                  or not all(t.exists() for t in targets)  # memoized: SCons asks too
                  or getattr(binfo, "bactsig", None) is None
                  or not {str(child) for child in explicit} <= {str(dep) for dep, _ in stored}
                  or any(self._timestamp_changed(dep, sig) for dep, sig in stored)
                  or SCons.Util.hash_signature(executor.get_contents()) != binfo.bactsig)
        if result and executor not in self.steps:
            self.steps.add(executor)
            self._count_kind(executor, targets)
        return result

    def _timestamp_changed(self, dep, sig) -> bool:
        if not hasattr(sig, "timestamp") or not isinstance(dep, SCons.Node.FS.File):
            return False  # a Value's name is its content: a new one is a new dependency
        path = dep.get_abspath()
        if path not in self.mtimes:
            try:
                self.mtimes[path] = os.stat(path)[stat.ST_MTIME]  # whole seconds, as SCons stores them
            except OSError:
                self.mtimes[path] = None
        return self.mtimes[path] != sig.timestamp

    def _count_kind(self, executor, targets):
        """Steps of each kind shown as terminal progress: what their first action prints."""
        if not self.terminal_kinds:
            return
        actions = executor.get_action_list()
        strfunction = getattr(actions[0], "strfunction", None) if actions else None
        if strfunction is None:
            return
        try:
            text = strfunction(targets, executor.get_all_sources(), executor.get_build_env(), executor)
        except TypeError:
            text = strfunction(targets, executor.get_all_sources(), executor.get_build_env())
        kind = str(text or "").split(" ", 1)[0]
        if kind in self.terminal_kinds:
            self.kinds[kind] = self.kinds.get(kind, 0) + 1


def _steps() -> Steps:
    """The build's one Steps: kept on the SCons.Script module, so that every environment (and a
    second copy of this module, loaded from another toolpath) numbers against the same count."""
    steps = getattr(SCons.Script, "_build_output_steps", None)
    if steps is None:
        steps = SCons.Script._build_output_steps = Steps()
        import atexit
        atexit.register(steps.finish)
    return steps


def _add_option():
    parser = getattr(SCons.Script.Main, "OptionsParser", None)
    if parser is not None and parser.has_option("--verbose"):
        return
    SCons.Script.AddOption("--verbose", dest="build_output_verbose", action="store_true", default=False,
                           help="print each build step's full command line instead of one short numbered line")


def exists(env):
    return True


def generate(env):
    _add_option()
    env.AddMethod(lambda env, text: notice(text), "BuildNotice")
    env.AddMethod(lambda env, text: report(text), "BuildReport")
    if verbose():
        env["BUILD_OUTPUT_SHORT"] = False
        return
    env["BUILD_OUTPUT_SHORT"] = True
    for variable, kind in COMMAND_STRINGS.items():
        env[variable] = f"{kind} $TARGET"
    env["PRINT_CMD_LINE_FUNC"] = _steps().print_step
