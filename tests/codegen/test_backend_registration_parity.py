"""Registration parity with torchgen for external backends: on PyTorch 2.13's yaml, opgen registers
at a backend's key and its autograd key exactly the operators torchgen 2.13 does, for
pytorch/xla's xla_native_functions.yaml and PyTorch's lazy ts_native_functions.yaml
(tests/data/torchgen_backend_registrations_2.13.json, written by
tests/bench/make_backend_registrations_reference.py). Needs ../shared/data; skips without it."""
import hashlib
import json
import os

import pytest

from generate_helpers import run_generate
from registrations import BACKEND_REFERENCE, opgen_backend_registrations

# (folder of ../shared/data, backend yaml, the dispatch key it names)
BACKENDS = [("pytorch-xla", "xla_native_functions.yaml", "XLA"), ("pytorch-lazy", "ts_native_functions.yaml", "Lazy")]
REMAKE = "python tests/bench/make_backend_registrations_reference.py"


def _reference(relative: str) -> dict:
    with open(BACKEND_REFERENCE, encoding="utf-8") as handle:
        return json.load(handle)["backends"][relative]


def _sha256(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


@pytest.mark.parametrize("folder,name,key", BACKENDS, ids=[b[2] for b in BACKENDS])
def test_backend_registers_what_torchgen_registers(real_data_dir, tmp_path, folder, name, key):
    path = os.path.join(os.path.dirname(real_data_dir), folder, name)
    if not os.path.isfile(path):
        pytest.skip(f"{folder}/{name} is not in ../shared/data")
    reference = _reference(f"{folder}/{name}")
    assert _sha256(path) == reference["sha256"], f"{path} is not the file the reference was made from; remake it: {REMAKE}"
    result = run_generate(os.path.join(real_data_dir, "native_functions.yaml"), tmp_path / "gen", "--tags",
                          os.path.join(real_data_dir, "tags.yaml"), "--backend-yaml", path, "--no-cache")
    assert result.returncode == 0, result.stderr
    ours = opgen_backend_registrations(str(tmp_path / "gen"), key)
    theirs = {k: set(names) for k, names in reference["keys"].items()}
    assert sorted(ours) == sorted(theirs) == [f"Autograd{key}", key]
    differences = [f"{k}: torchgen only {sorted(theirs[k] - ours[k])[:10]}, opgen only {sorted(ours[k] - theirs[k])[:10]}"
                   for k in sorted(theirs) if ours[k] != theirs[k]]
    assert not differences, "; ".join(differences)


def test_reference_holds_the_issues_counts():
    """The figures torchgen 2.13 was measured at (issue 38): 825 + 7 for xla, 424 + 3 for lazy."""
    xla = _reference("pytorch-xla/xla_native_functions.yaml")["keys"]
    lazy = _reference("pytorch-lazy/ts_native_functions.yaml")["keys"]
    assert (len(xla["XLA"]), len(xla["AutogradXLA"])) == (825, 7)
    assert (len(lazy["Lazy"]), len(lazy["AutogradLazy"])) == (424, 3)
    assert "t_" not in xla["XLA"] and "t" in xla["XLA"]  # t_ stays with its CompositeExplicitAutograd kernel
    assert {"native_layer_norm.out", "native_group_norm.out"} <= set(xla["AutogradXLA"])
    assert "native_group_norm.out" in lazy["AutogradLazy"]
