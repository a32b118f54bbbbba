"""What a generated tree registers, per dispatch key: operator names from `m.impl("...")`.

Shared by tests/codegen/test_registration_parity.py and tests/bench/bench_registrations.py.
torchgen's sets for PyTorch 2.13's yaml are stored in tests/data/torchgen_registrations_2.13.json
(written by `python tests/bench/bench_registrations.py --write-reference`), so the test needs no
torch. The external backends' sets (pytorch/xla's and PyTorch's lazy yaml) are in
tests/data/torchgen_backend_registrations_2.13.json (tests/bench/make_backend_registrations_reference.py),
compared by tests/codegen/test_backend_registration_parity.py.
"""
from __future__ import annotations

import json
import os
import re

TESTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REFERENCE = os.path.join(TESTS_DIR, "data", "torchgen_registrations_2.13.json")
BACKEND_REFERENCE = os.path.join(TESTS_DIR, "data", "torchgen_backend_registrations_2.13.json")

# The in-tree keys compared, in the order the table prints them.
KEYS = ("CPU", "CUDA", "Meta", "BackendSelect", "CompositeImplicitAutograd", "CompositeExplicitAutograd",
        "CompositeExplicitAutogradNonFunctional")

_IMPL = re.compile(r'm\.impl\(\s*"([^"]+)"')
_OPGEN_KEY = re.compile(r"^// Kernels of operator group '[^']+' at dispatch key (\w+),", re.MULTILINE)
_TORCHGEN_FILE = re.compile(r"^Register(\w+?)(?:_\d+|Everything)?\.cpp$")
_TORCHGEN_BACKEND_FILE = re.compile(r"^Register(\w+)\.cpp$")


def _names(text: str) -> list[str]:
    # torchgen writes some names with their namespace ("aten::empty.memory_format"), most without.
    return [name.split("::", 1)[1] if name.startswith("aten::") else name for name in _IMPL.findall(text)]


def opgen_registrations(out_dir: str) -> dict[str, set[str]]:
    """Operators registered per key by an `opgen generate` tree (its ops/<group>_<Key>.cpp files)."""
    result: dict[str, set[str]] = {key: set() for key in KEYS}
    ops = os.path.join(out_dir, "ops")
    for name in sorted(os.listdir(ops)):
        if not name.endswith(".cpp") or name.endswith(("_schema.cpp", "_unit.cpp")):
            continue
        with open(os.path.join(ops, name), encoding="utf-8") as handle:
            text = handle.read()
        match = _OPGEN_KEY.search(text)
        if match and match.group(1) in result:
            result[match.group(1)].update(_names(text))
    return result


def torchgen_registrations(out_dir: str) -> dict[str, set[str]]:
    """Operators registered per key by torchgen's Register<Key>[_N|Everything].cpp files in ``out_dir``
    (the shards and the one-file form list the same registrations; the union is taken)."""
    result: dict[str, set[str]] = {key: set() for key in KEYS}
    for name in sorted(os.listdir(out_dir)):
        match = _TORCHGEN_FILE.match(name)
        if match and match.group(1) in result:
            with open(os.path.join(out_dir, name), encoding="utf-8") as handle:
                result[match.group(1)].update(_names(handle.read()))
    return result


def opgen_backend_registrations(out_dir: str, backend_key: str) -> dict[str, set[str]]:
    """Operators registered per key (the backend's and its autograd key) by the backend files of an
    `opgen generate --backend-yaml` tree (backends/<Key>/ops/<group>_<key>.cpp)."""
    result: dict[str, set[str]] = {}
    ops = os.path.join(out_dir, "backends", backend_key, "ops")
    for name in sorted(os.listdir(ops)):
        if name.endswith(".cpp"):
            with open(os.path.join(ops, name), encoding="utf-8") as handle:
                text = handle.read()
            match = _OPGEN_KEY.search(text)
            if match:
                result.setdefault(match.group(1), set()).update(_names(text))
    return result


def torchgen_backend_registrations(out_dir: str) -> dict[str, set[str]]:
    """Operators registered per key by gen_backend_stubs' Register<Key>.cpp files in ``out_dir``."""
    result: dict[str, set[str]] = {}
    for name in sorted(os.listdir(out_dir)):
        match = _TORCHGEN_BACKEND_FILE.match(name)
        if match:
            with open(os.path.join(out_dir, name), encoding="utf-8") as handle:
                result[match.group(1)] = set(_names(handle.read()))
    return result


def load_reference(path: str = REFERENCE) -> dict[str, set[str]]:
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    return {key: set(data["keys"][key]) for key in KEYS}


def write_reference(sets: dict[str, set[str]], source: str, path: str = REFERENCE) -> None:
    data = {"source": source, "keys": {key: sorted(sets[key]) for key in KEYS}}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        json.dump(data, handle, indent=1, sort_keys=False)
        handle.write("\n")
