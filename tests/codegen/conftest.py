"""Fixtures of the codegen tests; helpers live in generate_helpers.py."""
import shutil

import pytest

from generate_helpers import REPO_TAGS, REPO_YAML


@pytest.fixture
def yaml_copy(tmp_path):
    """The repo's yaml and tags in a temp dir, to edit."""
    directory = tmp_path / "yaml"
    directory.mkdir()
    shutil.copy(REPO_YAML, directory / "native_functions.yaml")
    shutil.copy(REPO_TAGS, directory / "tags.yaml")
    return directory / "native_functions.yaml"
