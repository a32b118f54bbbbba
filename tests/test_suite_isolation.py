"""The test suite keeps out of the user's checkout: its caches live in a session directory
(tests/conftest.py sets $OPGEN_CACHE_DIR)."""
import os
import subprocess
import sys

from helpers import REPO_ROOT
from opgen.fingerprint import default_cache_dir


def test_the_session_cache_is_outside_the_checkout():
    session_cache = os.environ["OPGEN_CACHE_DIR"]
    assert os.path.isdir(session_cache)
    assert os.path.commonpath([session_cache, REPO_ROOT]) != REPO_ROOT


def test_opgen_in_process_and_in_subprocesses_uses_it():
    assert default_cache_dir() == os.environ["OPGEN_CACHE_DIR"]
    run = subprocess.run([sys.executable, "-c", "from opgen.fingerprint import default_cache_dir; print(default_cache_dir())"],
                         cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    assert run.stdout.strip() == os.environ["OPGEN_CACHE_DIR"]
