"""Fixtures of the cache tests that read the repository's yaml: private copies of it, and a cache
directory of their own (imported by the test modules that use them)."""
import os
import shutil

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def inputs(tmp_path):
    """Private copies of the repository's yaml, tags.yaml and derivatives.yaml."""
    for name in ("native_functions.yaml", "tags.yaml", "derivatives.yaml"):
        shutil.copy(os.path.join(REPO_ROOT, "yaml", name), tmp_path / name)
    return str(tmp_path / "native_functions.yaml"), str(tmp_path / "tags.yaml"), str(tmp_path / "derivatives.yaml")


@pytest.fixture
def cache_dir(tmp_path):
    return str(tmp_path / "cache")
