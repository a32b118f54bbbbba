"""opgen installed by pip (non-editable) and the runtime installed by `scons install`, as another
project sees them from a fresh virtualenv outside the checkout."""
import json
import os
import re
import subprocess
import sys

from helpers import DROPPED_ENV, REPO_ROOT, scons_env


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
    assert toolpath == os.path.join(package, "site_tools")


def test_the_wheel_holds_every_opgen_module_template_and_tool(plugin_venv):
    installed = os.path.join(_site_packages(plugin_venv), "opgen")
    expected = _python_files(os.path.join(REPO_ROOT, "opgen"))
    tools = _python_files(os.path.join(REPO_ROOT, "site_scons", "site_tools"))
    assert _python_files(installed) == sorted(expected + [os.path.join("site_tools", t) for t in tools])


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
    for header in ("core/tensor.h", "dispatch/registration.h", "ops/mul.h", "ops/mul_ops.h", "ops/mul_native.h",
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
    venv = tmp_path / "editable"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    env = scons_env(DROPPED_ENV + ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"))
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-build-isolation",
                          "--no-index", "-q", "-e", REPO_ROOT], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    where = subprocess.run([python, "-c", "import opgen; print(opgen.__file__); print(opgen.scons_toolpath())"],
                           cwd=tmp_path, env=env, capture_output=True, text=True)
    assert where.returncode == 0, where.stderr
    assert where.stdout.split() == [os.path.join(REPO_ROOT, "opgen", "__init__.py"),
                                    os.path.join(REPO_ROOT, "site_scons", "site_tools")]


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
