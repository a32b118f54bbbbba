"""Every patch of SCons' functions checks the SCons version first (opgen/scons/patches.py for the
plugin's, site_scons/scons_patches.py for this repository's): outside its tested range it leaves
SCons' functions as they are and says so in one notice line; inside, it replaces them; and
OPGEN_SCONS_PATCHES_OFF leaves a named one off. pyproject.toml accepts exactly the tested range,
which requirements.txt's pin and CI's oldest run hold the ends of. In-process SCons, no build
(the site patches in a fresh interpreter: installing them pauses the garbage collector)."""
import json
import os
import re
import subprocess
import sys

import SCons
import pytest

from helpers import REPO_ROOT
from opgen.scons import patches


@pytest.fixture
def scons_as_found(monkeypatch):
    """SCons' own functions in place of every shipped patch; what the test installs is undone."""
    for patch in patches.PATCHES.values():
        monkeypatch.setattr(patch.owner, patch.attribute, patch.original)
    monkeypatch.setattr(patches, "_told", set())
    monkeypatch.delenv(patches.OFF_VARIABLE, raising=False)
    return monkeypatch


def test_versions_compare_by_their_numbers():
    assert patches.version_tuple("4.6.0.post1") == (4, 6, 0)
    assert patches.version_tuple("4.10.1") > patches.version_tuple("4.9.1")
    assert patches.in_range("4.5.2", ("4.5.2", "4.11.1")) and patches.in_range("4.11.1", ("4.5.2", "4.11.1"))
    assert not patches.in_range("4.5.1", ("4.5.2", "4.11.1")) and not patches.in_range("4.11.2", ("4.5.2", "4.11.1"))


@pytest.mark.parametrize("version", ["4.4.0", "4.12.0", "5.0.0"])
def test_outside_the_tested_range_scons_is_left_alone(scons_as_found, capsys, version):
    scons_as_found.setattr(SCons, "__version__", version)
    for name, patch in patches.PATCHES.items():
        assert patches.install(name) is False
        assert patches.install(name) is False
        assert getattr(patch.owner, patch.attribute) is patch.original, name
    lines = capsys.readouterr().out.splitlines()
    low, high = patches.TESTED
    assert lines == [f"[opgen] SCons {version} is outside the tested range {low}..{high}: {name} left off"
                     for name in patches.PATCHES]  # once each


def test_inside_the_tested_range_each_patch_replaces_its_function(scons_as_found):
    for version in patches.TESTED:
        scons_as_found.setattr(SCons, "__version__", version)
        for name, patch in patches.PATCHES.items():
            patch.remove()
            assert patches.install(name) is True
            assert getattr(patch.owner, patch.attribute) is patch.replacement, name


def test_a_patch_switched_off_is_left_off(scons_as_found):
    scons_as_found.setenv(patches.OFF_VARIABLE, "scan, max_drift_csig")
    assert patches.install("scan") is False and patches.install("max_drift_csig") is False
    assert patches.install("command_signature") is True
    scons_as_found.setenv(patches.OFF_VARIABLE, "all")
    patches.PATCHES["command_signature"].remove()
    assert patches.install("command_signature") is False


_SITE_PROBE = """
import json, sys
sys.path.insert(0, {site!r})
import SCons
SCons.__version__ = {version!r}
import SCons.Node.FS, SCons.Tool.gcc
import scons_patches
known = {{"File.changed": (SCons.Node.FS.File, "changed"), "gcc.detect_version": (SCons.Tool.gcc, "detect_version")}}
before = {{name: getattr(*where) for name, where in known.items()}}
installed = scons_patches.install()
print(json.dumps({{
    "installed": installed,
    "replaced": sorted(name for name, where in known.items() if getattr(*where) is not before[name]),
    "originals": {{f"{{getattr(owner, '__name__', owner)}}.{{attribute}}": getattr(owner, attribute) is not original
                  for (owner, attribute), original in scons_patches._originals.items()}}}}))
"""


def _site_install(version, off=None):
    """(the notice lines, what installing site_scons/scons_patches.py did) under SCons ``version``."""
    env = {k: v for k, v in os.environ.items() if k != patches.OFF_VARIABLE}
    if off is not None:
        env[patches.OFF_VARIABLE] = off
    probe = _SITE_PROBE.format(site=os.path.join(REPO_ROOT, "site_scons"), version=version)
    run = subprocess.run([sys.executable, "-c", probe], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    lines = run.stdout.strip().splitlines()
    return lines[:-1], json.loads(lines[-1])


def test_site_patches_outside_their_range_leave_scons_alone():
    low, high = _site_tested()
    notices, result = _site_install("4.5.1")
    assert result == {"installed": [], "replaced": [], "originals": {}}
    assert notices == [f"[opgen] SCons 4.5.1 is outside the tested range {low}..{high}: "
                       f"{', '.join(_site_patch_names())} left off"]


def test_site_patches_in_their_range_replace_scons_functions():
    low, high = _site_tested()
    if not patches.in_range(SCons.__version__, (low, high)):
        pytest.skip(f"the site patches are tested on SCons {low}..{high}; this is {SCons.__version__}, "
                    "whose internals they do not fit (the out-of-range test holds that they stay off)")
    notices, result = _site_install(high)
    assert notices == []
    assert result["installed"] == list(_site_patch_names())
    assert result["replaced"] == ["File.changed", "gcc.detect_version"]
    assert len(result["originals"]) >= len(_site_patch_names()) and all(result["originals"].values())
    _, result = _site_install(_site_tested()[1], off="decide_once,compiler_probes")
    assert result["installed"] == [n for n in _site_patch_names() if n not in ("decide_once", "compiler_probes")]
    assert result["replaced"] == []


def _site_source() -> str:
    with open(os.path.join(REPO_ROOT, "site_scons", "scons_patches.py"), encoding="utf-8") as handle:
        return handle.read()


def _site_tested() -> tuple:
    low, high = re.search(r'^TESTED = \("([\d.]+)", "([\d.]+)"\)', _site_source(), re.M).groups()
    return low, high


def _site_patch_names() -> tuple:
    block = _site_source().split("PATCHES = {", 1)[1].split("}", 1)[0]
    return tuple(re.findall(r'"(\w+)":', block))


def test_pyproject_accepts_exactly_the_tested_range():
    with open(os.path.join(REPO_ROOT, "pyproject.toml"), encoding="utf-8") as handle:
        pyproject = handle.read()
    assert f'"scons>={patches.TESTED[0]},<={patches.TESTED[1]}"' in pyproject
    with open(os.path.join(REPO_ROOT, "requirements.txt"), encoding="utf-8") as handle:
        assert f"scons=={patches.TESTED[1]}\n" in handle.read()  # the main run tests the newest
    # The repository's own patches are tested on versions the plugin accepts.
    assert patches.in_range(_site_tested()[0]) and patches.in_range(_site_tested()[1])
