"""opgen.runtime_location: the one rule that finds the runtime a project builds against (an
installed SDK, else $OPGEN_RUNTIME, else the built checkout opgen is installed from), on fake
runtimes: no build needed."""
import importlib
import json
import os

import pytest

from opgen import runtime_location
from opgen.runtime_location import VIEW_DIR, RuntimeNotFound, link_python_package, locate


def fake_checkout(root, built=True):
    """The files the rule looks at: SConstruct, csrc/core, and when built build/lib/libopdispatch.so,
    build/gen/ops and build/python/opdispatch."""
    (root / "csrc" / "core").mkdir(parents=True)
    (root / "SConstruct").write_text("")
    (root / "yaml").mkdir()
    (root / "yaml" / "native_functions.yaml").write_text("")
    if built:
        (root / "build" / "lib").mkdir(parents=True)
        (root / "build" / "lib" / "libopdispatch.so").write_text("")
        (root / "build" / "gen" / "ops").mkdir(parents=True)
        (root / "build" / "gen" / "Functions.h").write_text("")
        (root / "build" / "python" / "opdispatch").mkdir(parents=True)
    return root


def fake_sdk(site, prefix):
    package = site / "opdispatch"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (prefix / "include" / "opdispatch").mkdir(parents=True)
    (prefix / "lib").mkdir(exist_ok=True)
    sdk = {name: os.path.relpath(prefix / name, package) for name in ("include", "lib")}
    sdk.update(yaml=None, tags=None)
    sdk["include"] = os.path.relpath(prefix / "include" / "opdispatch", package)
    (package / "sdk.json").write_text(json.dumps(sdk))
    return package


def snapshot(root):
    return {os.path.join(d, n): os.lstat(os.path.join(d, n)).st_mtime_ns
            for d, dirs, files in os.walk(root) for n in dirs + files}


@pytest.fixture
def no_sdk(monkeypatch):
    """No opdispatch on the path, no $OPGEN_RUNTIME, opgen installed from no checkout."""
    monkeypatch.setattr(runtime_location.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(runtime_location, "opgen_checkout", lambda: None)


def test_nothing_found_says_what_was_tried(no_sdk, tmp_path):
    with pytest.raises(RuntimeNotFound) as error:
        locate(str(tmp_path / "build"))
    message = str(error.value)
    assert message.startswith("no opdispatch runtime found; tried an installed SDK: no opdispatch package")
    assert "$OPGEN_RUNTIME: not set" in message and "the checkout opgen is installed from: none" in message
    assert "OPGEN_RUNTIME=DIR" in message


def test_the_checkout_opgen_is_installed_from_is_used_and_left_untouched(no_sdk, monkeypatch, tmp_path):
    checkout = fake_checkout(tmp_path / "opgen")
    monkeypatch.setattr(runtime_location, "opgen_checkout", lambda: str(checkout))
    before = snapshot(checkout)
    build_dir = tmp_path / "project" / "build"
    runtime = locate(str(build_dir))
    assert snapshot(checkout) == before  # a downstream build writes nothing into the runtime's tree
    assert runtime.include_dir == str(build_dir / VIEW_DIR)
    assert os.readlink(build_dir / VIEW_DIR / "core") == str(checkout / "csrc" / "core")
    assert os.readlink(build_dir / VIEW_DIR / "Functions.h") == str(checkout / "build" / "gen" / "Functions.h")
    assert runtime.library_dir == str(checkout / "build" / "lib") and "the opgen checkout" in runtime.origin
    link = link_python_package(runtime, str(build_dir / "python"))
    assert os.readlink(link) == str(checkout / "build" / "python" / "opdispatch")


def test_an_unbuilt_checkout_is_named_in_what_was_tried(no_sdk, monkeypatch, tmp_path):
    checkout = fake_checkout(tmp_path / "opgen", built=False)
    monkeypatch.setattr(runtime_location, "opgen_checkout", lambda: str(checkout))
    with pytest.raises(RuntimeNotFound, match=f"installed from: {checkout} is not built"):
        locate(str(tmp_path / "build"))


def test_OPGEN_RUNTIME_comes_before_the_checkout_and_a_bad_one_is_an_error(no_sdk, monkeypatch, tmp_path):
    monkeypatch.setattr(runtime_location, "opgen_checkout", lambda: str(fake_checkout(tmp_path / "opgen")))
    named = fake_checkout(tmp_path / "other")
    assert locate(str(tmp_path / "build"), str(named)).library_dir == str(named / "build" / "lib")
    with pytest.raises(RuntimeNotFound, match="OPGEN_RUNTIME: /no/such/prefix holds no opdispatch runtime"):
        locate(str(tmp_path / "build"), "/no/such/prefix")


def test_pip_s_record_names_the_checkout_of_a_regular_install(monkeypatch, tmp_path):
    """Not editable: the package is in site-packages, and direct_url.json names the directory."""
    checkout = fake_checkout(tmp_path / "opgen")
    monkeypatch.setattr(runtime_location, "__file__", str(tmp_path / "site" / "opgen" / "runtime_location.py"))

    class Distribution:
        def read_text(self, name):
            return json.dumps({"url": checkout.as_uri(), "dir_info": {}}) if name == "direct_url.json" else None

    monkeypatch.setattr(runtime_location.importlib.metadata, "distribution", lambda name: Distribution())
    assert runtime_location.opgen_checkout() == str(checkout)


def test_an_installed_sdk_comes_first_and_OPGEN_RUNTIME_may_not_name_another(monkeypatch, tmp_path):
    monkeypatch.setattr(runtime_location, "opgen_checkout", lambda: None)
    site, prefix = tmp_path / "site", tmp_path / "prefix"
    fake_sdk(site, prefix)
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    runtime = locate(str(tmp_path / "build"))
    assert runtime.include_dir == str(prefix / "include" / "opdispatch") and runtime.python == str(site)
    with pytest.raises(RuntimeNotFound, match="but `import opdispatch` loads the installed opdispatch package"):
        locate(str(tmp_path / "build"), str(fake_checkout(tmp_path / "opgen")))
