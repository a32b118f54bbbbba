"""Write tests/data/torchgen_backend_registrations_2.13.json: what torchgen 2.13 registers for
pytorch/xla's backend yaml and PyTorch's lazy (TorchScript) backend yaml, per dispatch key.

    python tests/bench/make_backend_registrations_reference.py [--check] [--python PY]

Runs `python -m torchgen.gen_backend_stubs -s <backend yaml> -o <dir>` for each yaml of
../shared/data (pytorch-xla/xla_native_functions.yaml, pytorch-lazy/ts_native_functions.yaml) and
reads the `m.impl("...")` names of its Register<Key>.cpp files. gen_backend_stubs reads the
native_functions.yaml packaged with torchgen, which must be byte-identical to
../shared/data/pytorch-2.13's (checked). For the lazy yaml, gen_lazy_tensor writes its
RegisterLazy.cpp / RegisterAutogradLazy.cpp with the same registration code
(gen_dispatcher_registrations), so the sets are the same; gen_backend_stubs needs no
shape-inference header. The JSON also records each backend yaml's sha256, so a test can tell
that ../shared/data changed under it.

torchgen comes from the benchmarks' private virtualenv (peer_env: `pip install torch==2.13.0`
into build/bench-venv; torch is never a dependency of opgen), or from --python: any interpreter
that imports torchgen 2.13 (e.g. `PYTHONPATH=<dir of a torch 2.13 wheel unpacked with
pip install --target> python ... --python $(which python)`).
With --check, regenerate in memory and fail (exit 1) when the checked-in file differs.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(os.path.dirname(HERE), "codegen")]
import peer_env  # noqa: E402
from registrations import BACKEND_REFERENCE, torchgen_backend_registrations  # noqa: E402

SHARED_DATA = os.path.dirname(peer_env.PYTORCH_DATA)
# Paths relative to ../shared/data: the reference's keys.
BACKEND_YAMLS = ("pytorch-xla/xla_native_functions.yaml", "pytorch-lazy/ts_native_functions.yaml")


def sha256(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def _check_packaged_yaml(python: str) -> None:
    """gen_backend_stubs reads torchgen's own copy of native_functions.yaml; opgen's test reads ../shared/data's."""
    packaged = subprocess.run([python, "-c", "import os, torchgen; print(os.path.join(os.path.dirname(torchgen.__file__), "
                                             "'packaged', 'ATen', 'native', 'native_functions.yaml'))"],
                              capture_output=True, text=True, check=True).stdout.strip()
    native, _ = peer_env.pytorch_yaml()
    if sha256(packaged) != sha256(native):
        sys.exit(f"make_backend_registrations_reference: {packaged} differs from {native}; use torchgen 2.13")


def _torchgen_version(python: str) -> str:
    found = subprocess.run([python, "-c", "from importlib.metadata import version; print(version('torch'))"],
                           capture_output=True, text=True)
    return found.stdout.strip() or "unknown"


def build_reference(python: str) -> dict:
    _check_packaged_yaml(python)
    backends = {}
    for relative in BACKEND_YAMLS:
        path = os.path.join(SHARED_DATA, relative)
        if not os.path.isfile(path):
            sys.exit(f"make_backend_registrations_reference: {path} is missing")
        with tempfile.TemporaryDirectory() as out:
            run = subprocess.run([python, "-m", "torchgen.gen_backend_stubs", "-s", path, "-o", out],
                                 cwd=out, capture_output=True, text=True)
            if run.returncode != 0:
                sys.exit(f"make_backend_registrations_reference: gen_backend_stubs failed on {path}:\n{run.stderr[-3000:]}")
            keys = torchgen_backend_registrations(out)
        backends[relative] = {"sha256": sha256(path), "keys": {key: sorted(names) for key, names in sorted(keys.items())}}
    return {
        "torch": _torchgen_version(python),
        "source": "torchgen.gen_backend_stubs on each backend yaml, with PyTorch 2.13's native_functions.yaml",
        "backends": backends,
    }


def render(reference: dict) -> str:
    return json.dumps(reference, indent=1, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the checked-in file instead of writing it")
    parser.add_argument("--python", help="an interpreter that imports torchgen 2.13 (default: build/bench-venv's)")
    args = parser.parse_args(argv)
    python = args.python or peer_env.ensure_torchgen()
    if python is None:
        sys.exit("make_backend_registrations_reference: torchgen is unavailable")
    text = render(build_reference(python))
    if args.check:
        with open(BACKEND_REFERENCE, encoding="utf-8") as handle:
            same = handle.read() == text
        print(f"{BACKEND_REFERENCE}: {'up to date' if same else 'DIFFERS from torchgen; rerun without --check'}")
        return 0 if same else 1
    os.makedirs(os.path.dirname(BACKEND_REFERENCE), exist_ok=True)
    with open(BACKEND_REFERENCE, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
    for relative, record in json.loads(text)["backends"].items():
        counts = ", ".join(f"{len(names)} at {key}" for key, names in record["keys"].items())
        print(f"{relative}: {counts}")
    print(f"wrote {BACKEND_REFERENCE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
