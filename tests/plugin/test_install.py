"""opgen installed by pip (non-editable) and the runtime installed by `scons install`, as another
project sees them from a fresh virtualenv outside the checkout."""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from helpers import DROPPED_ENV, PROJECT_BUILD, REPO_ROOT, copy_built, run_scons, scons_env
from plugin_venvs import make_venv


def _site_packages(venv):
    return os.path.join(venv.root, "lib", f"python{sys.version_info.major}.{sys.version_info.minor}", "site-packages")


def _python_files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, subdirs, files in os.walk(root)
                  for f in files if f.endswith((".py", ".j2")) and "__pycache__" not in d)


def test_opgen_runs_from_the_venv_with_a_version(plugin_venv, tmp_path):
    result = plugin_venv.run(["-m", "opgen", "--version"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("opgen ") and result.stdout.split()[1][0].isdigit()
    where = plugin_venv.run(["-c", "import opgen; print(opgen.__file__); print(opgen.scons_toolpath())"], cwd=tmp_path)
    package_file, toolpath = where.stdout.split()
    package = os.path.join(_site_packages(plugin_venv), "opgen")
    assert package_file == os.path.join(package, "__init__.py")
    assert toolpath == os.path.join(package, "scons", "toolset")


def test_the_wheel_holds_every_opgen_module_template_and_tool(plugin_venv):
    installed = os.path.join(_site_packages(plugin_venv), "opgen")
    assert _python_files(installed) == _python_files(os.path.join(REPO_ROOT, "opgen"))
    assert os.path.isfile(os.path.join(installed, "scons", "toolset", "ccache.py"))


def test_scons_install_copies_only(plugin_venv):
    # The session's project was built already: installing compiles and links nothing.
    compiles = [line for line in plugin_venv.install_log.splitlines() if line.startswith(("g++", "gcc", "ar ", "ccache"))
                or " -o " in line or re.match(r"\[\s*\d+/\d+\] (CXX|CC|NVCC|PCH|AR|LINK) ", line)]
    assert compiles == []


def test_opdispatch_says_where_its_headers_and_library_are(plugin_venv, tmp_path):
    script = ("import json, opdispatch\n"
              "print(json.dumps([opdispatch.get_include(), opdispatch.get_library_dir(), opdispatch.__file__]))\n")
    result = plugin_venv.run(["-c", script], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    include, library_dir, package = json.loads(result.stdout)
    assert include == os.path.join(plugin_venv.root, "include", "opdispatch")
    assert library_dir == os.path.join(plugin_venv.root, "lib")
    assert package.startswith(_site_packages(plugin_venv))
    assert os.path.isfile(os.path.join(library_dir, "libopdispatch.so"))
    for header in ("core/tensor.h", "core/dispatch_key_set.h", "dispatch/registration.h",
                   "functionalization/functionalization.h", "ops/mul.h", "ops/mul_ops.h", "ops/mul_native.h",
                   "Functions.h"):
        assert os.path.isfile(os.path.join(include, header)), header
    # The SDK is method-free: op::Tensor's per-operator method headers stay out.
    assert not any(name.endswith("_methods.h") for name in os.listdir(os.path.join(include, "ops")))
    assert not os.path.exists(os.path.join(include, "api", "tensor.h"))


def test_a_build_tree_opdispatch_says_it_is_not_an_sdk(plugin_venv, built_project, tmp_path):
    script = "import opdispatch\ntry:\n    opdispatch.get_include()\nexcept RuntimeError as e:\n    print(e)\n"
    result = plugin_venv.run(["-c", script], cwd=tmp_path,
                             PYTHONPATH=os.path.join(str(built_project.root), "build", "python"))
    assert result.returncode == 0, result.stderr
    assert "is a build tree" in result.stdout and "scons install PREFIX=DIR" in result.stdout


def test_an_editable_install_uses_the_checkouts_tools(tmp_path):
    """`pip install -e`: the package and the tools are the checkout's own files."""
    python = make_venv(tmp_path / "editable")
    env = scons_env(DROPPED_ENV + ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"))
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-build-isolation",
                          "--no-index", "-q", "-e", REPO_ROOT], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    where = subprocess.run([python, "-c", "import opgen; print(opgen.__file__); print(opgen.scons_toolpath())"],
                           cwd=tmp_path, env=env, capture_output=True, text=True)
    assert where.returncode == 0, where.stderr
    assert where.stdout.split() == [os.path.join(REPO_ROOT, "opgen", "__init__.py"),
                                    os.path.join(REPO_ROOT, "opgen", "scons", "toolset")]


def test_the_installed_headers_compile_together_on_their_own(plugin_venv, tmp_path):
    """Every installed header, in one translation unit, with only the install on the include
    path: nothing is missing from the SDK and no two of its headers clash."""
    include = os.path.join(plugin_venv.root, "include", "opdispatch")
    headers = sorted(os.path.relpath(os.path.join(d, f), include) for d, _, files in os.walk(include)
                     for f in files if f.endswith(".h"))
    unit = tmp_path / "every_header.cpp"
    unit.write_text("".join(f'#include "{header}"\n' for header in headers))
    result = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-DOP_ASSERT_NO_TENSOR_METHODS", f"-I{include}", str(unit)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-4000:]
    assert len(headers) > 300


def test_a_fresh_clone_installs_as_users_install_it(tmp_path):
    """`pip install <clone>` with build isolation (pip's default: setuptools is fetched into a
    private build environment) from a fresh `git clone` that no build has touched: it failed once
    because pyproject.toml named a directory only a build creates. Then the `opgen` command runs."""
    if shutil.which("git") is None or not os.path.isdir(os.path.join(REPO_ROOT, ".git")):
        pytest.skip("needs git and a git checkout")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", REPO_ROOT, str(clone)], check=True, timeout=300)
    python = make_venv(tmp_path / "venv")
    env = scons_env(DROPPED_ENV + ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PIP_NO_BUILD_ISOLATION"))
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", python, "install", "-q", str(clone)], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=900)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    opgen = subprocess.run([str(tmp_path / "venv" / "bin" / "opgen"), "--help"], cwd=tmp_path, env=env,
                           capture_output=True, text=True)
    assert opgen.returncode == 0, opgen.stderr
    for command in ("model", "generate", "cache"):
        assert command in opgen.stdout


def test_the_runtime_extra_brings_what_building_the_runtime_imports(plugin_venv, tmp_path):
    """pip install "opgen[runtime]": pybind11 (the Python package's extension) and numpy (which the
    package imports); the wheel's metadata says so."""
    metadata = plugin_venv.run(["-c", "import importlib.metadata as m; print('\\n'.join(m.requires('opgen')))"],
                               cwd=tmp_path)
    assert metadata.returncode == 0, metadata.stderr
    extra = {line.split(";")[0].strip() for line in metadata.stdout.splitlines() if "extra == \"runtime\"" in line}
    assert {re.split("[<>=]", requirement)[0] for requirement in extra} == {"pybind11", "numpy"}, metadata.stdout


def test_an_install_without_its_python_package_fails_and_says_why(built_project, tmp_path):
    """Without pybind11 the build skips the Python extension; installing then must stop (exit 2)
    and say why, not install an SDK whose `opdispatch` is an empty namespace package."""
    project = copy_built(built_project.root, tmp_path / "project")
    shadow = tmp_path / "no-pybind11"
    shadow.mkdir()
    (shadow / "pybind11.py").write_text("raise ImportError('pybind11 is absent in this test')\n")
    prefix = tmp_path / "prefix"
    result = run_scons(project, *PROJECT_BUILD, "install", f"PREFIX={prefix}", env={"PYTHONPATH": str(shadow)})
    assert result.returncode == 2, result.stdout + result.stderr
    assert "pybind11 is not installed (pip install \"opgen[runtime]\"" in result.stderr
    assert not prefix.exists()
