"""opgen's SCons codegen: one node per operator group, over opgen's codegen plan (opgen/gen/engine/plan.py).

``env.OpgenCodegen(model, "build/gen")`` declares, for every job of the plan's in-tree section,
a builder whose only source is ``Value("<group>:<content key>")`` and whose targets are the
group's files as ``plan.files`` lists them; plus the umbrella headers.  A group whose key did not
change is up to date without any codegen work; the action of one whose key changed calls
``plan.produce``, which materializes it from the codegen cache or renders it.  With
``node_per_file=False`` (--codegen-only: nothing compiles) a group is one node, and only the
groups the plan finds out of date are declared at all.
``env.OpgenBackendCodegen(model, backend, "build/gen")`` does the same for an external backend's
section (build/gen/backends/<Key>/).  What to generate, when, and the report all come from the plan.

With -jN (N > 1) the groups render in worker processes, as in ``opgen generate``: the workers
are forked while the SConscripts are read (``_Workers``), and the first codegen action sends
them every group of the build that neither the tree nor the cache holds; each action then
takes its own group's files and writes them.
"""
import atexit
import json
import os
import threading
import time

import SCons.Script

from opgen.scons.frozen import FROZEN, frozen_groups, open_build_record
from opgen.scons.noop import cache_directory, noop_line
from opgen.scons.sizes import cache_dir_of
from opgen.scons.stop import stop
from opgen.scons.toolset.messages import report, shown
from opgen.scons.scan_rules import unscanned

from opgen.cache.remote import remote_from_environment
from opgen.cache.session import CacheSession, open_codegen_cache
from opgen.errors import OpgenError
from opgen.fingerprint import digest
from opgen.gen.engine.config import CodegenConfig
from opgen.gen.engine.layout import compiled_sources, folded_sources
from opgen.gen.engine.plan import CodegenPlan, Report, Section
from opgen.gen.engine.workers import RenderPool, available_cores, worth_a_pool
from opgen.cache.session import render_here
from opgen.gen.engine.render import compiled_templates_dir, keep_compiled_templates
from opgen.gen.sections import backend_section, in_tree_section

class CodegenResult:
    def __init__(self):
        self.sources_by_group: dict[str, list] = {}  # group -> the nodes the build compiles
        self.folded_by_group: dict[str, list[str]] = {}  # group -> absolute paths of the sources its unit folds in
        self.codegen_of: dict = {}  # group -> what renders its files (declarations: gen/layers/declarations.py)
        self.key_of: dict[str, str] = {}  # group -> its content key
        self.targets: list = []
        # One target of each codegen step (a group's files, the umbrellas): building one builds
        # all its step's files, so an alias of these is an alias of every file, at a tenth of the
        # children to walk.
        self.steps: list = []
        self.groups = 0
        self.keys = ""  # a digest of every declared group's content key
        self.frozen_groups: set[str] = set()  # the groups declared without a codegen step (frozen.py)


class _PlanNodes:
    """The SCons face of one plan section: actions that find their job from their target (no
    per-node overrides: only strings could travel in them, and each costs an environment), and
    the report printed once the build ends."""

    def __init__(self, plan: CodegenPlan, section: Section):
        self.plan = plan
        self.section = section
        self.jobs = {job.name: job for job in section.jobs}
        self.layout = plan.layout(section)  # {group: files}, as declared
        self.job_of_node: dict[str, str] = {}  # abspath of a group's first file -> its job's name
        atexit.register(self.finish)
        noop_line(Report(plan.report.label, plan.report.groups, plan.report.backend_key).summary().splitlines()[0])  # what a no-op prints

    def job_name(self, target) -> str:
        return self.job_of_node[target[0].abspath]

    def produce(self, target, source, env):
        self.plan.produce(self.jobs[self.job_name(target)], WORKERS.renderer())
        return 0

    def describe(self, target, source, env):
        name = self.job_name(target)
        return shown(env, f"GEN {name}", f"[opgen] generate {name}")

    def write_umbrellas(self, target, source, env):
        self.plan.write_umbrellas(self.section, self.layout)
        return 0

    def finish(self):
        WORKERS.close()
        result = self.plan.finish()
        summary = result.summary()
        report(summary if result.regenerated else summary.splitlines()[0])


class _Workers:
    """The render workers of this SCons run, shared by its plans (the core groups, each backend's).

    They are forked while the SConscripts are read: SCons' job threads do not exist yet, and
    fork copies only the thread that forks, so no lock another thread holds (stdout's, jinja2's
    template cache, an import's) is copied held into a worker. A plan read later needs its
    jobs in the workers too, so the idle pool is forked again with them (a few ms a fork).
    Nothing renders then: the first codegen action sends the workers every job of every plan
    that neither the tree nor the cache holds."""

    def __init__(self):
        self.plans: list[tuple[CodegenPlan, list]] = []  # (plan, its jobs whose key the state lacks)
        self.pool = None
        self.sent = False
        self.lock = threading.Lock()

    def add(self, plan: CodegenPlan, section: Section) -> None:
        """At reading time: ``plan``'s jobs whose key changed join the workers' jobs; workers are
        forked when enough of them lack a cache entry too."""
        if _no_build():
            return
        changed = [job for job in section.jobs if not plan.recorded_at_key(job, section)]
        if not changed:
            return
        self.plans.append((plan, changed))
        workers = min(SCons.Script.GetOption("num_jobs"), available_cores())
        uncached = sum(1 for plan, jobs in self.plans for job in jobs if not plan.session.holds(job))
        if self.pool is not None:
            self.pool.close()  # joins its threads: the process has one thread again
            self.pool = None
        if worth_a_pool(uncached, workers):
            self.pool = RenderPool([job.codegen for _, jobs in self.plans for job in jobs], min(workers, uncached))

    def renderer(self):
        """What renders a job in an action: the workers (the first call sends them the jobs), or this process."""
        if self.pool is None:
            return render_here
        with self.lock:
            if not self.sent:
                self.sent = True
                self.pool.send([job for plan, jobs in self.plans for job in jobs if plan.session.will_render(job)])
        return self.pool.render

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()


def _no_build() -> bool:
    """Options under which no codegen action runs: workers would only be forked and ended."""
    return any(SCons.Script.GetOption(name) for name in ("clean", "no_exec", "help", "question", "interactive"))


WORKERS = _Workers()

# This SCons invocation: the builds of its output directories (the core groups, each backend's)
# are recorded as one run, which `opgen cache stats` reports together.
RUN = f"scons-{os.getpid()}-{time.time_ns()}"


def _session(env, label):
    """A cache session on $OPGEN_CACHE_DIR ("" disables the cache; None is the default location),
    with the remote tier $OPGEN_CACHE_REMOTE names (None: the environment's; "off": none)."""
    cache = open_codegen_cache(env.get("OPGEN_CACHE_DIR"))
    cache_directory(cache_dir_of(env))
    try:
        remote = remote_from_environment(env.get("OPGEN_CACHE_REMOTE"), env.get("OPGEN_CACHE_REMOTE_READ_ONLY"),
                                         where="--opgen-cache-remote") if cache is not None else None
    except OpgenError as error:
        stop(error, "bad remote codegen cache setting")
    if cache is not None:
        keep_compiled_templates(compiled_templates_dir(cache.root))
    return CacheSession(cache, label, remote, run=RUN)


def _declare(env, out, plan: CodegenPlan, node_per_file: bool, selective: bool = False, compiled=None) -> CodegenResult:
    """``compiled``: the groups whose units the build compiles (a selective build's registered
    ones; the others it generates are declarations only); None: every group."""
    compiled = None if compiled is None else frozenset(compiled)
    [section] = plan.sections
    nodes_of = _PlanNodes(plan, section)
    WORKERS.add(plan, section)
    group_builder = unscanned(env.Builder(action=env.Action(nodes_of.produce, strfunction=nodes_of.describe)))
    result = CodegenResult()
    result.groups = len(section.jobs)
    layout = nodes_of.layout
    # `scons -c` removes what has a node: every file of every group.
    cleaning = SCons.Script.GetOption("clean")
    every_file = node_per_file or cleaning
    freeze = node_per_file and not cleaning and frozen_groups()
    FROZEN.generated_under(out.abspath)
    out_prefix = os.path.join(out.abspath, "")  # the layout's paths are relative and normalized
    undeclared = []  # files of the groups that have no node in this build
    for job in _jobs_to_declare(plan, section, every_job=every_file):
        files = layout[job.name]
        folded = folded_sources(files)
        if freeze and plan.is_current(job, section):
            # Only codegen inputs changed, and not this group's key: its files stay as they are.
            result.frozen_groups.add(job.codegen.name)
            FROZEN.add(out_prefix + path for path in files)
        else:
            if cleaning:
                declared = files
            elif node_per_file:
                # The sources a unit folds in (scan_rules.py) have nodes only when missing, so that
                # SCons regenerates them; one edited by hand is not noticed until its group is
                # generated again (generated files are not to be edited).
                present = {path for path in folded if os.path.exists(os.path.join(plan.out_dir, path))}
                declared = [path for path in files if path not in present]
                undeclared.extend(present)
            else:
                declared = _first_and_missing(plan.out_dir, files)
            nodes = group_builder(env, target=[out.File(path) for path in declared], source=env.Value(f"{job.name}:{job.key}"))
            nodes_of.job_of_node[nodes[0].abspath] = job.name
            # Precious: SCons would delete targets before the action runs, and a file rewritten with
            # the same bytes gets a new mtime; the plan's writer must see the old file.
            env.Precious(nodes)
            result.targets.extend(nodes)
            result.steps.append(nodes[0])
        if every_file and (compiled is None or job.codegen.name in compiled):
            result.sources_by_group[job.codegen.name] = [out.File(path) for path in compiled_sources(files)]
            result.folded_by_group[job.codegen.name] = [os.path.join(out.abspath, path) for path in folded]
        if every_file:
            result.codegen_of[job.codegen.name] = job.codegen
            result.key_of[job.codegen.name] = job.key
    if result.frozen_groups:
        report(f"[opgen] only codegen inputs changed since the last build: {len(result.frozen_groups)} of "
               f"{result.groups} {section.label} are unchanged and not walked (OPGEN_FROZEN_GROUPS=off walks them)")
    # The umbrellas depend on which files each group has, and on what else the section says they
    # render (a backend's non-native IR nodes).
    layout_key = digest(json.dumps(layout, sort_keys=True).encode())
    result.keys = digest(*(f"{job.name}:{job.key}".encode() for job in section.jobs))
    umbrellas = env.Command([out.File(path) for path in section.umbrellas],
                            env.Value(f"{section.label} umbrellas:{layout_key}{section.umbrella_inputs}"),
                            env.Action(nodes_of.write_umbrellas, strfunction=lambda target, source, env: shown(
                                env, f"WRITE {section.label} umbrella headers", f"[opgen] {section.label} umbrella headers")))
    unscanned(umbrellas[0].builder)
    env.Precious(umbrellas)
    result.targets.extend(umbrellas)
    result.steps.extend(umbrellas[:1])
    if not SCons.Script.GetOption("no_exec"):
        if undeclared:
            open_build_record(env)
        _forget_stored(out, undeclared)
        removed = plan.remove_stale(section, layout)
        if selective and removed:
            # Switching from a full build (or a larger selection): one line, not one per file.
            report(f"[opgen] removed {len(removed)} generated files of operator groups outside the selection")
        else:
            for path in removed:
                report(f"[opgen] removed {path} (its operator group is gone)")
    return result


def _jobs_to_declare(plan: CodegenPlan, section: Section, every_job: bool):
    """Every job when the build uses the nodes (compiles depend on them; `scons -c` removes
    them). Otherwise (--codegen-only) only the jobs the plan finds not current: nothing
    consumes the others' nodes and SCons would only confirm them up to date, paying for each
    node and each Value (docs/benchmarks.md). A declared job keeps its Value, so
    --debug=explain still names the group whose key changed."""
    return [job for job in section.jobs if every_job or not plan.is_current(job, section)]


def _forget_stored(out, paths: list[str]) -> None:
    """Drops the .sconsign entries of files under ``out`` that have no node. SCons keeps an entry
    for every file that was ever one, and a cold build declares every folded source (none exists
    yet): on a large yaml, a large share of build/gen/ops' record, read again by every later
    build. The record is rewritten once, the first time they are found there."""
    by_directory: dict[str, list[str]] = {}
    for path in paths:
        directory, name = os.path.split(path)
        by_directory.setdefault(directory, []).append(name)
    for directory, names in by_directory.items():
        stored = out.Dir(directory).sconsign()
        entries = getattr(stored, "entries", None)
        if entries is None:
            continue
        found = [name for name in names if name in entries]
        for name in found:
            del entries[name]
        if found:
            stored.dirty = True


def _first_and_missing(out_dir: str, files: list[str]) -> list[str]:
    """The targets of a group when nothing compiles (--codegen-only): its first file stands for
    all, the others are written beside it without nodes. When the first exists but another file
    is missing, that one is declared too: SCons must see a group whose key is unchanged but
    whose file vanished out of date (one missing target is enough; a cold build declares one
    node per group, not one per file)."""
    first, others = files[0], files[1:]
    if not os.path.exists(os.path.join(out_dir, first)):
        return [first]
    missing = next((path for path in others if not os.path.exists(os.path.join(out_dir, path))), None)
    return [first, missing] if missing else [first]


def _codegen(env, model, out_dir, config=None, node_per_file=True, groups=None, listed=None):
    """``groups``: only these operator groups (a selective build, e.g. env.OpgenSelection(...).generated);
    None: every group of the model. ``listed``: the groups the umbrella headers list (a selective
    build's registered ones, OperatorSelection.groups); None: every group generated."""
    out = env.Dir(out_dir)
    session = _session(env, "scons")
    section = in_tree_section(model, config or CodegenConfig(), session.cache, groups, listed=listed)
    plan = CodegenPlan(out.abspath, [section], session)
    return _declare(env, out, plan, node_per_file, selective=groups is not None, compiled=listed)


def _backend_codegen(env, model, backend, out_dir, node_per_file=True, groups=None, compiled=None):
    """The backend's files for every group it lists (of ``groups``, when given), under <out_dir>/backends/<Key>/;
    ``compiled``: the groups whose registrations compile (a selective build's registered ones: its
    kernels, compiled whole, include the headers of the declared ones too); None: every group."""
    out = env.Dir(out_dir)
    session = _session(env, f"scons --backend {backend.backend_key}")
    plan = CodegenPlan(out.abspath, [backend_section(model, backend, groups)], session)
    return _declare(env, out, plan, node_per_file, selective=groups is not None, compiled=compiled)


def register(env):
    # On a terminal, the groups' GEN steps are one line updated in place (the build_output tool).
    env["BUILD_OUTPUT_TERMINAL_PROGRESS"] = dict(env.get("BUILD_OUTPUT_TERMINAL_PROGRESS") or {},
                                                 GEN="[opgen] generating {done}/{total} groups")
    env.AddMethod(_codegen, "OpgenCodegen")
    env.AddMethod(_backend_codegen, "OpgenBackendCodegen")
