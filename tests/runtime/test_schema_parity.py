"""The C++ schema parser agrees with opgen's: same accepted schemas, same canonical text, same
error messages, on real schemas and on mutations of them."""
import os
import random
import re
import subprocess

import yaml

from opgen.errors import OpgenError
from opgen.model import FunctionSchema

# Characters the schema language gives meaning to, plus a few it does not.
ALPHABET = "()[]?!*,=->.|_ :'\"aZ09"

HAND_WRITTEN = [
    "f(Tensor self) -> (Tensor)",
    "f(Tensor self) -> Tensor ",
    "f(Tensor  self) -> Tensor",
    "f(Tensor self)",
    "f.a-b(Tensor x) -> Tensor",
    "f_out(Tensor x) -> Tensor",
    "__iadd__(Tensor(a!) self, Tensor other) -> Tensor(a!)",
    "__ifoo__(Tensor(a!) self) -> Tensor(a!)",
    "f(Tensor(a -> *) self) -> Tensor(a)[]",
    "f(Tensor(a|b!) self) -> Tensor(a|b!)",
    "f(int[0] x) -> Tensor",
    "f(int[01] x) -> Tensor",
    "f(int x=Mean, str s=\"a,b\", float f=-inf, Scalar a=True) -> Tensor",
    "f(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "f_(Tensor(a!) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor(a!)",
    "f.functional(Tensor(a!) self) -> Tensor(a!)",
    "f(Tensor self, *, Tensor(a!)[] out) -> ()",
    "f(Tensor self, *, Tensor(a!)[] out) -> Tensor",
    "f(Tensor self, *, Tensor(a!) _scratch_x, Tensor(b!) out) -> Tensor(b!)",
]


def _real_schemas(path):
    with open(path, encoding="utf-8") as f:
        return [entry["func"] for entry in yaml.safe_load(f) if isinstance(entry, dict) and "func" in entry]


def _mutants(schemas, count, seed=0):
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        text = rng.choice(schemas)
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(text) + 1)
            op = rng.choice(("delete", "insert", "replace"))
            if op == "delete" and i < len(text):
                text = text[:i] + text[i + 1:]
            elif op == "replace" and i < len(text):
                text = text[:i] + rng.choice(ALPHABET) + text[i + 1:]
            else:
                text = text[:i] + rng.choice(ALPHABET) + text[i:]
        out.append(text)
    return out


def _python_result(text):
    try:
        return f"ok {FunctionSchema.parse(text)}"
    except OpgenError as exc:
        return "error " + " ".join(d.message for d in exc.diagnostics).replace("\n", " ")


def _cpp_results(binary, schemas, tmp_path):
    listing = tmp_path / "schemas.txt"
    listing.write_text("".join(s + "\n" for s in schemas), encoding="utf-8")
    run = subprocess.run([binary, "--parse-schemas", str(listing)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    return run.stdout.splitlines()


# What each side offers after naming an unknown type differs on purpose: opgen's command line
# suggests the closest type ("did you mean 'float'?"), the runtime lists every known type.
# Parity is about which text is rejected and why, so the help after the name is left out.
_UNKNOWN_TYPE_HELP = re.compile(r"^(.*unknown type '.*')(?:; did you mean '[^']*'\?|; known types: [A-Za-z, ]*)$")


def _without_help(result):
    return _UNKNOWN_TYPE_HELP.sub(r"\1", result)


def _compare(binary, schemas, tmp_path):
    schemas = [s for s in schemas if "\n" not in s]
    cpp = _cpp_results(binary, schemas, tmp_path)
    assert len(cpp) == len(schemas)
    mismatches = [
        f"{s!r}\n    python: {py}\n    c++:    {c}"
        for s, c in zip(schemas, cpp)
        for py in [_python_result(s)]
        if _without_help(py) != _without_help(c)
    ]
    assert not mismatches, f"{len(mismatches)} of {len(schemas)} differ:\n" + "\n".join(mismatches[:20])


def test_parity_on_our_yaml_and_hand_written_cases(cpp_test_binary, repo_root, tmp_path):
    ours = _real_schemas(os.path.join(repo_root, "yaml", "native_functions.yaml"))
    _compare(cpp_test_binary, ours + HAND_WRITTEN + _mutants(ours, 2000, seed=1), tmp_path)


def test_parity_on_pytorch_yaml(cpp_test_binary, real_data_dir, tmp_path):
    real = _real_schemas(os.path.join(real_data_dir, "native_functions.yaml"))
    assert len(real) > 2500
    _compare(cpp_test_binary, real + _mutants(real, 5000, seed=2), tmp_path)
