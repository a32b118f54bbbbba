"""A real distccd on loopback for the distcc tests, started like servers.py's servers: a free port,
waited for, stopped at teardown, a clean skip when it cannot start."""
from __future__ import annotations

import os
import re
import shutil

import pytest

from servers import Server, free_port, start

# One line per job distccd finished: "... (dcc_job_summary) client: 127.0.0.1:50000 COMPILE_OK ... g++ csrc/x.cpp"
JOB_SUMMARY = re.compile(r"\(dcc_job_summary\) client: \S+ (\S+) .* (\S+)$")


def start_distccd(workdir: str, slots: int) -> Server:
    """distccd on 127.0.0.1:<free port> serving 127.0.0.1 only, in the foreground.

    It logs to stderr, which start() sends to <workdir>/distccd.log: run as root, distccd drops
    to the distcc user, which could not open a log file under pytest's private tmp directories."""
    binary = shutil.which("distccd")
    if binary is None:
        pytest.skip("distccd is not installed (apt-get install distcc)")
    port = free_port()
    command = [binary, "--no-detach", "--daemon", "--listen", "127.0.0.1", "--allow", "127.0.0.1",
               "--port", str(port), "--jobs", str(slots), "--log-stderr", "--log-level", "info"]
    return start(command, port, workdir, "distccd")


def finished_jobs(server: Server) -> list[tuple[str, str]]:
    """(status, source) of every job the server finished so far, e.g. ("COMPILE_OK", "csrc/x.cpp")."""
    with open(server.log, errors="replace") as handle:
        return [match.groups() for match in map(JOB_SUMMARY.search, handle.read().splitlines()) if match]


def distcc_state_dir(tmp_path) -> str:
    """A DISTCC_DIR of the test's own: distcc remembers hosts that failed (back-off) in ~/.distcc,
    and a port another test used could be on that list."""
    path = os.path.join(str(tmp_path), "distcc-state")
    os.makedirs(path, exist_ok=True)
    return path
