"""The quick tier's list (tests/quick_tier.py) stays true to the tests: every pattern names test
files that exist, and a pattern naming a test names one that its file defines, so a rename never
shrinks the tier unnoticed. What each quick test checks is the full run's business."""
import fnmatch
import os
import re

import pytest

from helpers import REPO_ROOT
from quick_tier import QUICK, is_quick

TEST_FILES = sorted(os.path.relpath(os.path.join(directory, name), REPO_ROOT)
                    for directory, _, names in os.walk(os.path.join(REPO_ROOT, "tests"))
                    for name in names if name.startswith("test_") and name.endswith(".py"))


@pytest.mark.parametrize("pattern", QUICK)
def test_every_pattern_names_tests_that_exist(pattern):
    files = [path for path in TEST_FILES if fnmatch.fnmatchcase(path, pattern.split("::")[0])]
    assert files, f"{pattern}: no test file matches"
    if "::" in pattern:
        name = pattern.split("::")[1].rstrip("*")
        if name:
            defined = [path for path in files
                       if re.search(rf"^def {re.escape(name)}", open(os.path.join(REPO_ROOT, path)).read(), re.M)]
            assert defined, f"{pattern}: {files} define no test {name}"


def test_the_tier_leaves_out_the_trees_the_full_run_builds():
    for heavy in ("tests/plugin/test_downstream.py::x", "tests/remote/test_distcc.py::x",
                  "tests/scons/test_edit_matrix.py::x", "tests/runtime/test_cuda_emulated.py::x",
                  "tests/runtime/test_py_permutations.py::x", "tests/codegen/test_generate_determinism.py::x"):
        assert not is_quick(heavy), heavy
    assert is_quick("tests/model/test_cli.py::test_x") and is_quick("tests/runtime/test_py_api.py::test_x")
