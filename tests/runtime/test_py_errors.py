"""A newcomer's mistakes in Python get messages that say what would work: a misspelt or
wrong-typed dtype lists the valid dtypes, and opdispatch.__version__ says which release it is."""
import os
import re

import pytest

import opgen

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DTYPE_NAMES = ("bool", "int32", "int64", "float32", "float64")


def _assert_lists_valid_dtypes(message: str) -> None:
    assert "valid dtypes: " + ", ".join(f"opdispatch.{n}" for n in DTYPE_NAMES) in message, message


def test_package_version_is_opgens_without_building():
    """The source of opdispatch/__init__.py carries opgen's version (checked before any build)."""
    with open(os.path.join(REPO_ROOT, "csrc", "python", "opdispatch", "__init__.py"), encoding="utf-8") as handle:
        found = re.search(r'^__version__ = "([^"]+)"$', handle.read(), re.M)
    assert found and found.group(1) == opgen.__version__


def test_version_of_the_built_package(opdispatch):
    assert isinstance(opdispatch.__version__, str)
    assert opdispatch.__version__ == opgen.__version__


@pytest.mark.parametrize("call", [
    lambda od: od.zeros([2], dtype="flaot32"),
    lambda od: od.ones([2, 3], dtype="flaot32"),
    lambda od: od.full([2], 1.0, dtype="flaot32"),
    lambda od: od.zeros([2]).to(dtype="flaot32"),
    lambda od: od.tensor([1.0, 2.0], dtype="flaot32"),
], ids=["zeros", "ones", "full", "to", "tensor"])
def test_a_misspelt_dtype_suggests_the_closest_and_lists_the_valid_ones(opdispatch, call):
    with pytest.raises(TypeError) as info:
        call(opdispatch)
    message = str(info.value)
    assert "'flaot32' is no dtype; did you mean opdispatch.float32?" in message, message
    _assert_lists_valid_dtypes(message)


@pytest.mark.parametrize("dtype", ["float32", "Float64"])
def test_a_dtype_given_as_a_string_names_the_object_to_pass(opdispatch, dtype):
    with pytest.raises(TypeError) as info:
        opdispatch.zeros([2], dtype=dtype)
    message = str(info.value)
    if dtype == "float32":
        assert "pass opdispatch.float32, not the string 'float32'" in message, message
    else:
        assert "did you mean opdispatch.float64?" in message, message
    _assert_lists_valid_dtypes(message)


@pytest.mark.parametrize("dtype", [float, 3, "complex128"])
def test_any_other_value_as_a_dtype_lists_the_valid_dtypes(opdispatch, dtype):
    with pytest.raises(TypeError) as info:
        opdispatch.zeros([2], dtype=dtype)
    _assert_lists_valid_dtypes(str(info.value))
    with pytest.raises(TypeError) as info:
        opdispatch.tensor([1, 2], dtype=dtype)
    _assert_lists_valid_dtypes(str(info.value))


def test_a_string_close_to_a_dtype_given_to_to_names_the_dtype(opdispatch):
    x = opdispatch.ones([2])
    with pytest.raises(TypeError) as info:
        x.to("flaot32")
    message = str(info.value)
    assert "did you mean the dtype opdispatch.float32?" in message and "opdispatch.int64" in message
    with pytest.raises(TypeError) as info:
        x.to("cpux")  # no dtype is close: the device message as before
    assert "did you mean the dtype" not in str(info.value) and "unknown device type 'cpux'" in str(info.value)
    assert x.to("cpu").tolist() == [1.0, 1.0]
