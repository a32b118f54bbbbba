"""Virtualenvs for the plugin tests, made the same way inside a virtualenv and outside one."""
import os
import subprocess
import sys


def make_venv(root) -> str:
    """A venv at ``root`` (no pip: the outer pip installs into it with --python) that sees this
    interpreter's site-packages (SCons, jinja2, ... from requirements.txt's install) after its
    own, so the tests need no network; returns its python.

    Not --system-site-packages: run from inside a virtualenv, that names the *base* interpreter's
    site-packages, which has none of them (the plugin tests failed in every virtualenv). The
    directories go in as plain .pth lines, so .pth files inside them are not processed and an
    editable opgen installed there cannot shadow what the test installs into the venv."""
    root = str(root)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", root], check=True)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    outer = dict.fromkeys(path for path in sys.path
                          if os.path.isdir(path) and os.path.basename(path) in ("site-packages", "dist-packages"))
    with open(os.path.join(root, "lib", version, "site-packages", "outer-interpreter.pth"), "w",
              encoding="utf-8") as handle:
        handle.writelines(path + "\n" for path in outer)
    return os.path.join(root, "bin", "python")
