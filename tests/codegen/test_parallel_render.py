"""`opgen generate -j N` renders the groups the cache lacks in N worker processes
(gen/engine/workers.py): the trees, the state files and the reports are those of `-j 1`, a
render's error reaches the caller as it does serially, no worker outlives the run, and a run
with little to render forks nothing. Counts and bytes, never times."""
import collections
import multiprocessing
import os
import re
import threading

import pytest

from generate_helpers import REPO_TAGS, REPO_YAML, run_generate
from helpers import snapshot
from opgen import cli
from opgen.errors import Location, OpgenError
from opgen.gen.engine import workers
from opgen.gen.group import GroupCodegen

EVERY_RUN_FORKS = {workers.THRESHOLD_VARIABLE: "1"}  # a pool even for a handful of groups


def contents(root) -> dict[str, bytes]:
    """Every file under ``root``, the state file too."""
    return {path: data for path, (data, _) in snapshot(root, ignore=()).items()}


def generate_serially_and_in_parallel(tmp_path, yaml, *extra, env=None):
    """(-j1 run, -j2 run) of ``yaml`` into fresh trees, each with an empty cache of its own."""
    runs = []
    for jobs in ("1", "2"):
        run_env = dict(env or {}, OPGEN_CACHE_DIR=str(tmp_path / f"cache-j{jobs}"))
        result = run_generate(yaml, tmp_path / f"out-j{jobs}", *extra, "-j", jobs, env=run_env)
        assert result.returncode == 0, result.stderr
        runs.append(result)
    return runs


def test_our_yaml_in_two_workers_gives_the_serial_bytes(tmp_path):
    serial, parallel = generate_serially_and_in_parallel(tmp_path, REPO_YAML, "--tags", REPO_TAGS, env=EVERY_RUN_FORKS)
    assert contents(tmp_path / "out-j2") == contents(tmp_path / "out-j1")
    assert parallel.stdout == serial.stdout  # the report: regenerated, written, the cache's hits and renders


def test_pytorch_yaml_in_two_workers_gives_the_serial_bytes(real_data_dir, tmp_path):
    yaml = os.path.join(real_data_dir, "native_functions.yaml")
    serial, parallel = generate_serially_and_in_parallel(tmp_path, yaml, "--tags", os.path.join(real_data_dir, "tags.yaml"))
    serial_tree, parallel_tree = contents(tmp_path / "out-j1"), contents(tmp_path / "out-j2")
    assert sorted(parallel_tree) == sorted(serial_tree)
    assert parallel_tree == serial_tree
    assert parallel.stdout == serial.stdout
    assert "regenerated 1342/1342 groups" in parallel.stdout and "0 hits, 1342 rendered" in parallel.stdout


@pytest.mark.parametrize("value", ["0", "-2", "two"])
def test_jobs_must_be_a_positive_number(tmp_path, value):
    result = run_generate(REPO_YAML, tmp_path / "out", "-j", value)
    assert result.returncode == 2
    assert "expected a whole number of at least 1" in result.stderr


# ----- in this process: forks counted, a render made to fail -----

@pytest.fixture
def forks(monkeypatch):
    """The pids of the processes forked from here on (the children's own forks are theirs). The
    test process must have one thread, or nothing forks at all (engine/workers.py: a lock another
    thread holds would stay held in the workers): tests/parallel_schedule.py runs this file first."""
    assert threading.active_count() == 1, f"threads left by earlier tests: {threading.enumerate()}"
    counted = []
    fork = os.fork

    def counting_fork():
        pid = fork()
        if pid:
            counted.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", counting_fork)
    return counted


def generate_in_process(out, *extra) -> int:
    return cli.main(["generate", REPO_YAML, "--tags", REPO_TAGS, "--out", str(out), *extra])


def assert_no_child_is_left(forked):
    """Every worker forked is reaped: none running, none a zombie. (Only those: in the whole
    suite this process has other children, a fixture's servers among them.)"""
    assert multiprocessing.active_children() == []
    for pid in forked:
        with pytest.raises(ChildProcessError):  # no longer a child: reaped
            os.waitpid(pid, os.WNOHANG)


def test_a_render_error_in_a_worker_reads_as_the_serial_one(tmp_path, monkeypatch, capsys, forks):
    render = GroupCodegen.render

    def failing_render(codegen):
        if codegen.name == "mul":
            raise OpgenError("mul cannot be rendered", Location("native_functions.yaml", 7))
        return render(codegen)

    monkeypatch.setattr(GroupCodegen, "render", failing_render)  # the workers, forked later, inherit it
    monkeypatch.setenv(workers.THRESHOLD_VARIABLE, "1")
    outcomes = {}
    for jobs in ("1", "2"):
        forks.clear()
        status = generate_in_process(tmp_path / f"out-j{jobs}", "--no-cache", "-j", jobs)
        outcomes[jobs] = (status, capsys.readouterr().err, bool(forks))
        assert_no_child_is_left(forks)
    assert outcomes["1"] == (2, "native_functions.yaml:7: error: mul cannot be rendered\n", False)
    assert outcomes["2"] == (2, outcomes["1"][1], True)
    # The groups before mul were written, as serially, and none after it.
    assert contents(tmp_path / "out-j2") == contents(tmp_path / "out-j1")


def test_each_section_renders_in_workers_of_its_own(tmp_path, monkeypatch, capsys, forks):
    """The in-tree groups' workers are gone (joined: one thread again) before the backend's fork."""
    monkeypatch.setenv(workers.THRESHOLD_VARIABLE, "1")
    backend = os.path.join(os.path.dirname(REPO_YAML), "xla_native_functions.yaml")
    reports = []
    for jobs in ("1", "2"):
        forks.clear()
        assert generate_in_process(tmp_path / f"out-j{jobs}", "--no-cache", "--backend-yaml", backend, "-j", jobs) == 0
        reports.append(capsys.readouterr().out)
        assert_no_child_is_left(forks)
    assert len(forks) == 4  # two workers for each section
    assert reports[1] == reports[0]
    assert contents(tmp_path / "out-j2") == contents(tmp_path / "out-j1")


def test_what_the_cache_holds_is_not_rendered_and_forks_nothing(tmp_path, monkeypatch, capsys, forks):
    monkeypatch.setenv("OPGEN_CACHE_DIR", str(tmp_path / "cache"))
    assert generate_in_process(tmp_path / "cold", "-j", "2") == 0  # 90 groups: over the default threshold
    assert forks and "0 hits" in capsys.readouterr().out
    assert_no_child_is_left(forks)
    forks.clear()
    assert generate_in_process(tmp_path / "warm", "-j", "2") == 0
    assert not forks and "hits, 0 rendered" in capsys.readouterr().out
    assert contents(tmp_path / "warm") == contents(tmp_path / "cold")


def test_a_cold_run_sends_each_group_to_the_workers_once(tmp_path, monkeypatch, capsys, forks):
    """Forked before the keys, the workers get each group as its key is known (engine/early.py),
    then the rest when production starts: every group once, none twice."""
    sent = collections.Counter()
    send = workers.RenderPool.send

    def counting_send(pool, jobs, more=False):
        sent.update(job.name for job in jobs)
        return send(pool, jobs, more)

    monkeypatch.setattr(workers.RenderPool, "send", counting_send)
    monkeypatch.setenv("OPGEN_CACHE_DIR", str(tmp_path / "cache"))
    assert generate_in_process(tmp_path / "out", "-j", "2") == 0  # 90 groups: over the default threshold
    groups = int(re.search(r"regenerated (\d+)/", capsys.readouterr().out)[1])
    assert forks and len(sent) == groups and set(sent.values()) == {1}
    assert_no_child_is_left(forks)


def test_a_few_groups_to_render_fork_nothing(tmp_path, monkeypatch, forks):
    monkeypatch.setenv(workers.THRESHOLD_VARIABLE, str(10_000))
    assert generate_in_process(tmp_path / "out", "--no-cache", "-j", "2") == 0
    assert not forks
