"""Write tests/data/torchgen_autograd_2.13.json: what torchgen 2.13 derives from PyTorch's derivatives.yaml.

Runs in the benchmarks' private virtualenv (peer_env: torch from the local wheel; torch is never a
dependency of opgen). Usage: python tests/bench/make_autograd_reference.py [--check]

The JSON holds
  - "nodes": {class name: record} for every backward node class torchgen declares (Functions.h),
    each record with the info's function ("func"), its dispatch key ("Default" or an Autograd key),
    the sorted saved input and output names and output_differentiability as written;
  - "default_nodes": the sorted class names of the "Default" formulas (the entries' own formulas
    and the *_copy infos torchgen derives from them): what opgen's model is compared with;
  - "autograd_operators" / "ad_inplace_or_view_operators": the sorted operator names gen_autograd
    registers at the Autograd and ADInplaceOrView keys (read from its generated registrations), for
    the codegen's parity test;
  - "forward_ad_operators": those of the Autograd ones whose kernel computes forward gradients
    (torchgen's `_any_has_forward_grad_` in the kernel's body), for forward mode's parity test.
With --check, regenerate in memory and fail (exit 1) when the checked-in file differs.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import peer_env  # noqa: E402

REPO = peer_env.REPO
OUTPUT = os.path.join(REPO, "tests", "data", "torchgen_autograd_2.13.json")

# Runs inside the peer virtualenv: argv = native yaml, tags yaml, derivatives yaml; prints JSON.
_PEER = r'''
import glob, json, os, re, shutil, sys, tempfile
import torchgen, torchgen.packaged.autograd as pkg
from torchgen.packaged.autograd.load_derivatives import load_derivatives
from torchgen.packaged.autograd.gen_autograd import gen_autograd
from torchgen.selective_build.selector import SelectiveBuilder

native, tags, derivatives = sys.argv[1:4]
work = tempfile.mkdtemp()
autograd_dir = os.path.join(work, "autograd")
os.makedirs(autograd_dir)
shutil.copy(derivatives, os.path.join(autograd_dir, "derivatives.yaml"))
os.symlink(os.path.join(os.path.dirname(pkg.__file__), "templates"), os.path.join(autograd_dir, "templates"))

def name_of(attr):
    n = attr.nctype.name
    return getattr(n, "name", n)

out = os.path.join(work, "out")
os.makedirs(out)
gen_autograd(native, tags, out, autograd_dir, SelectiveBuilder.get_nop_selector())

# after gen_autograd: it adds the foreach infos to the (cached) dict
infos, _ = load_derivatives(os.path.join(autograd_dir, "derivatives.yaml"), native, tags)
nodes = {}
for per_key in infos.values():
    for key, info in per_key.items():
        if not info.args_with_derivatives:
            continue
        assert info.op not in nodes, info.op
        nodes[info.op] = {
            "func": str(info.func.func.name),
            "dispatch_key": key,
            "saved_inputs": sorted({name_of(a) for a in info.all_saved_inputs}),
            "saved_outputs": sorted({name_of(a) for a in info.all_saved_outputs}),
            "output_differentiability": info.output_differentiability,
        }

def registered(pattern, key):
    names = set()
    for path in sorted(glob.glob(os.path.join(out, pattern))):
        text = open(path).read()
        for block in re.finditer(r"TORCH_LIBRARY_IMPL\(aten, (\w+), m\) \{(.*?)\n\}", text, re.S):
            if block.group(1) == key:
                names.update(re.findall(r'm\.impl\("([^"]+)"', block.group(2)))
    return sorted(names)

def forward_ad(pattern):
    """The operators whose Autograd kernel computes forward gradients (torchgen emits
    `_any_has_forward_grad_<output>` in exactly those kernels)."""
    bodies, names = {}, set()
    for path in sorted(glob.glob(os.path.join(out, pattern))):
        text = open(path).read()
        for fn, body in re.findall(r"^\S[^\n]*? (\w+)\(c10::DispatchKeySet ks[^\n]*\{\n(.*?)\n\}", text, re.S | re.M):
            bodies[fn] = "_any_has_forward_grad_" in body
        for block in re.finditer(r"TORCH_LIBRARY_IMPL\(aten, Autograd, m\) \{(.*?)\n\}", text, re.S):
            for op, fn in re.findall(r'm\.impl\("([^"]+)",\s*TORCH_FN\(VariableType::(\w+)\)', block.group(1)):
                names.add((op, fn))
    return sorted(op for op, fn in names if bodies.get(fn))

declared = re.findall(r"^struct TORCH_API (\w+) : public (?:TraceableFunction|Node)\b", open(os.path.join(out, "Functions.h")).read(), re.M)
print(json.dumps({
    "nodes": nodes,
    "declared_in_functions_h": len(declared),
    "autograd_operators": registered("VariableType_*.cpp", "Autograd"),
    "ad_inplace_or_view_operators": registered("ADInplaceOrViewType_*.cpp", "ADInplaceOrView"),
    "forward_ad_operators": forward_ad("VariableType_*.cpp"),
}))
shutil.rmtree(work)
'''


def build_reference() -> dict:
    python = peer_env.ensure_torchgen()
    if python is None:
        sys.exit("make_autograd_reference: torchgen is unavailable")
    native, tags = peer_env.pytorch_yaml()
    derivatives = os.path.join(peer_env.PYTORCH_DATA, "derivatives.yaml")
    with tempfile.TemporaryDirectory() as scratch:
        run = subprocess.run([python, "-c", _PEER, native, tags, derivatives], cwd=scratch,
                             capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"make_autograd_reference: torchgen failed:\n{run.stderr[-3000:]}")
    found = json.loads(run.stdout.strip().splitlines()[-1])
    nodes = found["nodes"]
    if len(nodes) != found["declared_in_functions_h"]:
        sys.exit(f"make_autograd_reference: {len(nodes)} infos with derivatives, "
                 f"but Functions.h declares {found['declared_in_functions_h']}")
    return {
        "torch": peer_env.PEER_REQUIREMENT,
        "source": "PyTorch 2.13 native_functions.yaml, tags.yaml, derivatives.yaml",
        "nodes": dict(sorted(nodes.items())),
        "default_nodes": sorted(op for op, record in nodes.items() if record["dispatch_key"] == "Default"),
        "dispatch_specific_nodes": sorted(op for op, record in nodes.items() if record["dispatch_key"] != "Default"),
        "autograd_operators": found["autograd_operators"],
        "ad_inplace_or_view_operators": found["ad_inplace_or_view_operators"],
        "forward_ad_operators": found["forward_ad_operators"],
    }


def render(reference: dict) -> str:
    return json.dumps(reference, indent=1, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    text = render(build_reference())
    if "--check" in argv:
        with open(OUTPUT, encoding="utf-8") as handle:
            same = handle.read() == text
        print(f"{OUTPUT}: {'up to date' if same else 'DIFFERS from torchgen; rerun without --check'}")
        return 0 if same else 1
    os.makedirs(os.path.dirname(OUTPUT), exist_ok=True)
    with open(OUTPUT, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
    reference = json.loads(text)
    print(f"wrote {OUTPUT}: {len(reference['nodes'])} node classes ({len(reference['default_nodes'])} default, "
          f"{len(reference['dispatch_specific_nodes'])} dispatch-specific), "
          f"{len(reference['autograd_operators'])} Autograd and "
          f"{len(reference['ad_inplace_or_view_operators'])} ADInplaceOrView operators, "
          f"{len(reference['forward_ad_operators'])} with forward AD")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
