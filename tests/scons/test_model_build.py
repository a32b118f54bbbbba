"""The SCons build loads yaml/native_functions.yaml through opgen, and stops cleanly on invalid yaml."""
import os

import pytest

from helpers import REPO_ROOT, copy_project, run_scons

MODEL_JSON = os.path.join("build", "opgen", "model.json")


def scons(project, *args):
    # The one target this room owns; later issues add C++ targets this test has no business building.
    return run_scons(project, *args, MODEL_JSON, timeout=300)


def file_state(path):
    """(bytes, mtime_ns) of one file."""
    stat = os.stat(path)
    with open(path, "rb") as handle:
        return handle.read(), stat.st_mtime_ns


def tree(root):
    if not os.path.isdir(root):
        return []
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A copy of the build's inputs in tmp, built once."""
    root = copy_project(tmp_path_factory.mktemp("project"), names=("SConstruct", "site_scons", "opgen", "yaml"))
    result = scons(root)
    assert result.returncode == 0, result.stdout + result.stderr
    return root


def test_build_writes_the_model_dump(project):
    dump = project / MODEL_JSON
    assert dump.is_file()
    with open(os.path.join(REPO_ROOT, "yaml", "native_functions.yaml"), encoding="utf-8") as handle:
        entries = sum(line.startswith("- func:") for line in handle)
    assert '"functions"' in dump.read_text() and entries > 0


def test_second_build_is_a_noop_and_keeps_the_dump(project):
    before = file_state(project / MODEL_JSON)
    result = scons(project)
    assert result.returncode == 0, result.stderr
    assert "is up to date" in result.stdout
    assert file_state(project / MODEL_JSON) == before


def test_invalid_yaml_fails_the_build_with_file_line_and_touches_nothing(project):
    yaml_path = project / "yaml" / "native_functions.yaml"
    original = yaml_path.read_text(encoding="utf-8")
    lines = original.splitlines(keepends=True)
    bad_line = next(i for i, line in enumerate(lines, 1) if line.strip() == "CPU, CUDA: add_out")
    lines[bad_line - 1] = lines[bad_line - 1].replace("CPU, CUDA: add_out", "CPU, CUDAA: add_out")
    before_dump, before_cache = file_state(project / MODEL_JSON), tree(project / "cache")
    yaml_path.write_text("".join(lines), encoding="utf-8")
    try:
        result = scons(project)
    finally:
        yaml_path.write_text(original, encoding="utf-8")
    assert result.returncode != 0
    assert f"yaml/native_functions.yaml:{bad_line}: error: unknown dispatch key 'CUDAA'" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert file_state(project / MODEL_JSON) == before_dump
    assert tree(project / "cache") == before_cache


def test_invalid_tags_yaml_names_its_repo_relative_line(project):
    tags_path = project / "yaml" / "tags.yaml"
    original = tags_path.read_text(encoding="utf-8")
    line = len(original.splitlines()) + 1
    tags_path.write_text(original + "- tag: core\n", encoding="utf-8")
    try:
        result = scons(project)
    finally:
        tags_path.write_text(original, encoding="utf-8")
    assert result.returncode != 0
    assert f"yaml/tags.yaml:{line}: error: tag 'core' is declared twice" in result.stderr
    assert "Traceback" not in result.stderr


BAD_ENTRY = "- func: foo(Tensor self) -> Tensor\n  dispatch:\n    CPUU: foo\n"


@pytest.fixture
def outside_yaml(project, tmp_path):
    """An invalid yaml (its bad key on line 3) with a tags.yaml beside it, outside the project."""
    directory = tmp_path / "elsewhere"
    directory.mkdir()
    (directory / "native_functions.yaml").write_text(BAD_ENTRY, encoding="utf-8")
    (directory / "tags.yaml").write_text((project / "yaml" / "tags.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    return directory / "native_functions.yaml"


def test_an_absolute_yaml_path_is_printed_as_written(project, outside_yaml):
    result = scons(project, f"--yaml={outside_yaml}")
    assert result.returncode != 0
    assert f"\n{outside_yaml}:3: error: unknown dispatch key 'CPUU'" in "\n" + result.stderr, result.stderr
    assert "../" not in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_a_relative_yaml_path_is_printed_as_written(project, outside_yaml):
    written = os.path.relpath(outside_yaml, project)
    assert written.startswith("..")
    result = scons(project, f"--yaml={written}")
    assert result.returncode != 0
    assert f"\n{written}:3: error: unknown dispatch key 'CPUU'" in "\n" + result.stderr, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
