"""Registration parity with torchgen: on PyTorch 2.13's yaml, opgen registers at each in-tree key
exactly the operators torchgen 2.13 does (tests/data/torchgen_registrations_2.13.json, written
by tests/bench/bench_registrations.py --write-reference), apart from the differences listed here
with a reason."""
import os

import pytest

from generate_helpers import run_generate
from registrations import KEYS, REFERENCE, load_reference, opgen_registrations

# (key, operator) -> why opgen differs from torchgen there. A listed difference that no longer
# occurs fails the test too, so the list stays true.
KNOWN_DIFFERENCES: dict[tuple[str, str], str] = {}


@pytest.fixture(scope="module")
def registered(real_data_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("parity-gen")
    result = run_generate(os.path.join(real_data_dir, "native_functions.yaml"), out, "--tags",
                          os.path.join(real_data_dir, "tags.yaml"), "--keys", ",".join(KEYS), "--no-cache")
    assert result.returncode == 0, result.stderr
    return opgen_registrations(str(out))


def _differences(ours: set[str], theirs: set[str]) -> set[str]:
    return (ours - theirs) | (theirs - ours)


@pytest.mark.parametrize("key", KEYS)
def test_registrations_match_torchgen(registered, key):
    reference = load_reference()[key]
    ours = registered[key]
    unexplained = sorted(name for name in _differences(ours, reference) if (key, name) not in KNOWN_DIFFERENCES)
    missing = [n for n in unexplained if n in reference]
    extra = [n for n in unexplained if n in ours]
    assert not unexplained, (f"{key}: {len(missing)} operators torchgen registers and opgen does not "
                             f"({', '.join(missing[:10])}), {len(extra)} only opgen registers ({', '.join(extra[:10])})")
    stale = sorted(name for (k, name) in KNOWN_DIFFERENCES if k == key and name not in _differences(ours, reference))
    assert not stale, f"{key}: listed as differing from torchgen but no longer do: {stale}"


def test_reference_is_torchgens():
    data = load_reference(REFERENCE)
    assert set(data) == set(KEYS)
    assert len(data["CPU"]) == 1067 and len(data["CompositeExplicitAutogradNonFunctional"]) == 442


def test_our_yaml_marks_non_functional_composites_as_pytorch_does(real_data_dir):
    """An operator our yaml shares with PyTorch's decomposes at CompositeExplicitAutogradNonFunctional
    (a decomposition that aliases or mutates, kept from backends that functionalize) exactly
    when PyTorch's does."""
    from generate_helpers import REPO_TAGS, REPO_YAML
    from opgen.model import load_model
    from opgen.model.dispatch_keys import DispatchKey

    key = DispatchKey.CompositeExplicitAutogradNonFunctional

    def marked(model):
        index = model.indices.get(key)
        return {str(f.func.name): index is not None and index.has_kernel(f.func.name)
                for f in model.functions if not f.generated}

    theirs = marked(load_model(os.path.join(real_data_dir, "native_functions.yaml"),
                               os.path.join(real_data_dir, "tags.yaml")))
    ours = marked(load_model(REPO_YAML, REPO_TAGS))
    shared = sorted(set(ours) & set(theirs))
    assert sum(ours[name] for name in shared) >= 12
    assert [name for name in shared if ours[name] != theirs[name]] == []
