"""`opgen init DIR`: the scaffold renders the same bytes every time, refuses a directory in use,
builds with real scons against the session's runtime (installed in the plugin venv, or a built
checkout named by $OPGEN_RUNTIME) and its own `python -m pytest` passes."""
import os
import shutil
import subprocess
import sys

import pytest

from helpers import DROPPED_ENV, REPO_ROOT, run_scons, scons_env
from opgen import cli
from opgen.scaffold import default_namespace, scaffold

DOWNSTREAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "downstream")

TESTS_PASSED = "3 passed"


def tree(root):
    result = {}
    for directory, _, files in os.walk(root):
        for name in files:
            path = os.path.join(directory, name)
            result[os.path.relpath(path, root)] = open(path, "rb").read()
    return result


def test_init_writes_the_same_bytes_for_the_same_namespace(tmp_path):
    written = scaffold(str(tmp_path / "a"), "vecops")
    scaffold(str(tmp_path / "b"), "vecops")
    assert tree(tmp_path / "a") == tree(tmp_path / "b")
    assert sorted(written) == sorted(tree(tmp_path / "a"))
    assert {"SConstruct", "vecops.yaml", "kernels/vecops.cpp", "tests/test_vecops.py", ".gitignore",
            "README.md", "opgen.json"} <= set(written)
    assert "- func: vecops::scale(Tensor x, float f=2.0) -> Tensor" in (tmp_path / "a" / "vecops.yaml").read_text()
    assert 'env.OpgenOperatorLibrary("vecops", yaml="vecops.yaml"' in (tmp_path / "a" / "SConstruct").read_text()


@pytest.mark.parametrize("directory, namespace", [("my-proj", "my_proj"), ("Vec Ops", "vec_ops"), ("2d", "ops_2d"),
                                                  ("---", "myops")])
def test_the_default_namespace_is_the_directory_name_as_an_identifier(directory, namespace):
    assert default_namespace(os.path.join("somewhere", directory)) == namespace


def test_init_refuses_a_directory_in_use_and_bad_namespaces(tmp_path, capsys):
    used = tmp_path / "used"
    used.mkdir()
    (used / "keep.txt").write_text("mine")
    assert cli.main(["init", str(used)]) == 2
    assert f"{used} exists and is not empty" in capsys.readouterr().err
    assert os.listdir(used) == ["keep.txt"]
    for bad in ("1x", "a-b", "class", "aten"):
        assert cli.main(["init", str(tmp_path / "new"), "--namespace", bad]) == 2
        assert f"namespace '{bad}'" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli.main(["init", str(empty)]) == 0
    assert "next: cd" in capsys.readouterr().out and (empty / "empty.yaml").is_file()


def test_opgen_ops_in_a_scaffold_lists_the_project_s_own_yaml(tmp_path, monkeypatch, capsys):
    """opgen.json names the yaml: `opgen ops` (and `opgen select`) need no --yaml there, from a subdirectory too."""
    project = tmp_path / "vecops"
    assert cli.main(["init", str(project)]) == 0
    capsys.readouterr()
    monkeypatch.chdir(project / "kernels")
    assert cli.main(["ops", "--no-cache"]) == 0
    listing = capsys.readouterr().out
    assert "vecops::scale" in listing and "vecops.yaml:" in listing, listing
    monkeypatch.chdir(tmp_path)
    assert cli.main(["ops", "--no-cache"]) == 2
    assert "no opgen.json here or above" in capsys.readouterr().err


def test_the_scaffold_builds_and_passes_its_tests_in_the_plugin_venv(plugin_venv, tmp_path):
    """The venv's `opgen` console script (templates from the wheel), then the README's two commands."""
    project = tmp_path / "first-ops"
    init = subprocess.run([os.path.join(plugin_venv.root, "bin", "opgen"), "init", str(project)], cwd=tmp_path,
                          env=plugin_venv.env(), capture_output=True, text=True, timeout=120)
    assert init.returncode == 0, init.stdout + init.stderr
    build = plugin_venv.scons(project, "-j2")
    assert build.returncode == 0, (build.stdout + build.stderr)[-4000:]
    assert (project / "build" / "libfirst_ops.so").is_file()
    tests = plugin_venv.run(["-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project)
    assert tests.returncode == 0 and TESTS_PASSED in tests.stdout, tests.stdout + tests.stderr


def linked_checkout(built_project, root):
    """The session's built project seen through links, as a checkout of its own."""
    (root / "build").mkdir(parents=True)
    for name in ("SConstruct", "csrc", "yaml"):
        os.symlink(os.path.join(built_project.root, name), root / name)
    for name in ("lib", "gen", "python"):
        os.symlink(os.path.join(built_project.root, "build", name), root / "build" / name)
    return root


def mtimes(root):
    return {os.path.join(d, n): os.lstat(os.path.join(d, n)).st_mtime_ns
            for d, dirs, files in os.walk(root) for n in dirs + files}


def imports_opdispatch(project, **settings):
    """`python -c "import opdispatch"` in the project, with PYTHONPATH=build/python (no pytest)."""
    env = scons_env(DROPPED_ENV + ("PYTHONPATH", "OPGEN_RUNTIME"), {"PYTHONPATH": "build/python", **settings})
    return subprocess.run([sys.executable, "-c", "import opdispatch; print(opdispatch.tensor([1.0]).tolist())"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=120)


def test_the_scaffold_builds_against_a_checkout_named_by_OPGEN_RUNTIME(built_project, tmp_path):
    """A built checkout as $OPGEN_RUNTIME, no install; the build writes nothing into the checkout
    (the header view is under the project's build/) and links its Python package into build/python."""
    checkout = linked_checkout(built_project, tmp_path / "checkout")
    project = tmp_path / "vecops"
    assert cli.main(["init", str(project)]) == 0
    settings = {"OPGEN_RUNTIME": str(checkout), "PYTHONPATH": REPO_ROOT, "OPGEN_CACHE_DIR": str(tmp_path / "cache")}
    before = {**mtimes(checkout), **mtimes(os.path.join(built_project.root, "build"))}
    build = run_scons(project, "-j2", env=settings)
    assert build.returncode == 0, (build.stdout + build.stderr)[-4000:]
    # The scaffold's SConstruct takes the no-op shortcut (opgen/scons/noop.py) as opgen's own does.
    again = run_scons(project, "-j2", env=settings)
    assert again.returncode == 0 and "[opgen] nothing changed since the last build" in again.stdout, again.stdout
    assert {**mtimes(checkout), **mtimes(os.path.join(built_project.root, "build"))} == before
    assert os.path.islink(project / "build" / "opgen-runtime" / "include" / "opdispatch" / "core")
    headers = [line for line in build.stdout.splitlines() if "HEADERS" in line]
    assert headers and all("build/opgen-runtime/include/opdispatch/" in line for line in headers), headers
    imported = imports_opdispatch(project)
    assert imported.returncode == 0 and imported.stdout == "[1.0]\n", imported.stdout + imported.stderr
    # The scaffold's conftest imports the runtime the build linked into build/python.
    env = scons_env(DROPPED_ENV + ("PYTHONPATH", "OPGEN_RUNTIME"))
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project, env=env,
                           capture_output=True, text=True, timeout=300)
    assert tests.returncode == 0 and TESTS_PASSED in tests.stdout, tests.stdout + tests.stderr
    # The downstream test project has a structured operator (axpby: meta, impl, out=, Functionalize):
    # every header directory of the runtime must be in the checkout's view.
    downstream = shutil.copytree(DOWNSTREAM, tmp_path / "downstream")
    built = run_scons(downstream, "-j2", env=settings)
    assert built.returncode == 0, (built.stdout + built.stderr)[-4000:]
    unbuilt = tmp_path / "unbuilt"
    unbuilt.mkdir()
    for name in ("SConstruct", "csrc"):
        os.symlink(os.path.join(built_project.root, name), unbuilt / name)
    refused = run_scons(project, env={**settings, "OPGEN_RUNTIME": str(unbuilt)})
    assert refused.returncode == 2 and "is an opgen checkout that is not built" in refused.stderr, refused.stderr


def test_the_scaffold_builds_against_the_checkout_opgen_is_installed_from(built_project, tmp_path):
    """README's promise, in the venv of its set-up (opgen installed from a built checkout, no SDK,
    no $OPGEN_RUNTIME): `opgen init myproj && cd myproj && scons && python -m pytest`."""
    checkout = linked_checkout(built_project, tmp_path / "checkout")
    os.symlink(os.path.join(REPO_ROOT, "opgen"), checkout / "opgen")  # opgen imported from this checkout
    env = scons_env(DROPPED_ENV + ("PYTHONPATH", "OPGEN_RUNTIME"),
                    {"PYTHONPATH": str(checkout), "OPGEN_CACHE_DIR": str(tmp_path / "cache")})
    init = subprocess.run([sys.executable, "-m", "opgen", "init", "myproj"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert init.returncode == 0, init.stdout + init.stderr
    project = tmp_path / "myproj"
    build = subprocess.run([sys.executable, "-m", "SCons", "-Q", "-j2"], cwd=project, env=env, capture_output=True,
                           text=True, timeout=900)
    assert build.returncode == 0, (build.stdout + build.stderr)[-4000:]
    assert os.readlink(project / "build" / "python" / "opdispatch") == str(checkout / "build" / "python" / "opdispatch")
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project, env=env,
                           capture_output=True, text=True, timeout=300)
    assert tests.returncode == 0 and TESTS_PASSED in tests.stdout, tests.stdout + tests.stderr
    listed = subprocess.run([sys.executable, "-m", "opgen", "ops", "--no-cache"], cwd=project, env=env,
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0 and "myproj::scale" in listed.stdout, listed.stdout + listed.stderr
