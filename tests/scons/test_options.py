"""The build's options as a user meets them: `scons -h` lists --yaml, --tags and the install
target; a missing or invalid --yaml / --tags stops with the file (and line) and exit status 2."""
import pytest

from helpers import copy_project, run_scons_loud

INPUTS = ("SConstruct", "site_scons", "opgen", "yaml")  # nothing compiles: no csrc/


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return copy_project(tmp_path_factory.mktemp("options"), names=INPUTS)


def scons(project, *args):
    """Without -Q: the tests read opgen's notices ("[opgen] N functions in M operator groups")."""
    return run_scons_loud(project, "--codegen-only", *args, timeout=300)


def test_help_lists_the_yaml_options_and_install(project):
    result = scons(project, "-h")
    assert result.returncode == 0, result.stderr
    for text in ("--yaml=PATH", "--tags=PATH", "--missing-kernels=error|stub", "--kernels=auto|builtin|none",
                 "--cuda-arch=native|all|LIST", "--cublas=auto|on|off", "install PREFIX=DIR"):
        assert text in result.stdout, text


@pytest.mark.parametrize("option", ["--yaml=yaml/missing.yaml", "--tags=yaml/missing.yaml"])
def test_a_missing_file_stops_with_its_name_and_status_2(project, option):
    result = scons(project, option)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "yaml/missing.yaml: error: cannot read: No such file or directory" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_an_invalid_yaml_stops_with_file_line_and_status_2(project):
    bad = project / "yaml" / "bad.yaml"
    bad.write_text("- func: scale(Tensor x) -> Tensor\n\n- func: scale(Tensor x -> Tensor\n", encoding="utf-8")
    result = scons(project, f"--yaml={bad.relative_to(project)}")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "yaml/bad.yaml:3: error:" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_another_yaml_builds_with_its_own_groups(project):
    own = project / "yaml" / "own.yaml"
    own.write_text("- func: myops::scale(Tensor x, float f=2.0) -> Tensor\n  dispatch:\n    CPU: scale_cpu\n",
                   encoding="utf-8")
    # yaml/derivatives.yaml beside it is native_functions.yaml's: this yaml has no autograd layer
    result = scons(project, "--yaml=yaml/own.yaml", "--derivatives=off", "--opgen-cache=off")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[opgen] 1 functions in 1 operator groups" in result.stdout
    assert (project / "build" / "gen" / "ops" / "scale_schema.cpp").is_file()


@pytest.mark.parametrize("yaml, option, kernels", [
    ("yaml/native_functions.yaml", None, "csrc/native"),
    ("yaml/own.yaml", None, "none (every kernel is missing: --missing-kernels=error)"),  # auto: another yaml
    ("yaml/native_functions.yaml", "--kernels=none", "none (every kernel is missing: --missing-kernels=error)"),
    ("yaml/own.yaml", "--kernels=builtin", "csrc/native"),
])
def test_the_hand_written_kernels_belong_to_their_yaml(project, yaml, option, kernels):
    """csrc/native implements yaml/native_functions.yaml: --kernels=auto builds it with that yaml only."""
    own = project / "yaml" / "own.yaml"
    own.write_text("- func: myops::scale(Tensor x, float f=2.0) -> Tensor\n  dispatch:\n    CPU: scale_cpu\n",
                   encoding="utf-8")
    result = scons(project, f"--yaml={yaml}", "--derivatives=off", "--opgen-cache=off", *([option] if option else []))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"[opgen] kernels: {kernels}\n" in result.stdout


def test_an_unknown_kernels_value_stops_with_status_2(project):
    result = scons(project, "--kernels=mine")
    assert result.returncode == 2
    assert "invalid choice: 'mine'" in result.stderr
