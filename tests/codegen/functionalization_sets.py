"""The operators registered at the Functionalize key: opgen's ops/<g>_Functionalize.cpp against
torchgen's RegisterFunctionalization_*.cpp. Shared by tests/codegen/test_functionalization_parity.py
and tests/bench/bench_functionalize.py. torchgen's set for PyTorch 2.13's yaml is stored in
tests/data/torchgen_functionalization_2.13.json (bench_functionalize.py --write-reference), so the
test needs no torch.
"""
from __future__ import annotations

import json
import os
import re

TESTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REFERENCE = os.path.join(TESTS_DIR, "data", "torchgen_functionalization_2.13.json")

_IMPL = re.compile(r'm\.impl\(\s*"([^"]+)"')
_FAIL = re.compile(r'::op::fail\("([^"]+?): cannot be functionalized: ([^"]+)"\)')
_TORCHGEN_FILE = re.compile(r"^RegisterFunctionalization(?:_\d+|Everything)\.cpp$")

_NO_FUNCTIONAL = ("mutates its arguments without a functional variant: opgen registers a kernel raising an error "
                  "that names it; torchgen registers nothing and leaves it to the fallback")
_HAND_WRITTEN_IN_PYTORCH = ("PyTorch functionalizes this group by hand (FunctionalizeFallbackKernel.cpp), so torchgen "
                            "registers nothing; opgen generates it like any other mutation or in-place view")

# operator -> why opgen's Functionalize registrations differ from torchgen's there. A listed
# difference that no longer occurs fails the test too, so the list stays true.
KNOWN_DIFFERENCES: dict[str, str] = {
    "_cummax_helper": _NO_FUNCTIONAL,
    "_cummin_helper": _NO_FUNCTIONAL,
    "_fill_mem_eff_dropout_mask_": _NO_FUNCTIONAL,
    "_flash_attention_forward_no_dropout_inplace": _NO_FUNCTIONAL,
    "_slow_conv2d_backward.grad_input": _NO_FUNCTIONAL + " (its functional sibling returns other values)",
    "adaptive_avg_pool3d_backward.grad_input": _NO_FUNCTIONAL + " (the functional variant is in another family)",
    "polygamma_": _NO_FUNCTIONAL + " (polygamma takes n first, so it is in another family)",
    "lift.out": _HAND_WRITTEN_IN_PYTORCH + " (opgen: lift below, then the write-back)",
    "resize.out": _HAND_WRITTEN_IN_PYTORCH + " (opgen: resize below, then the write-back)",
    "set.source_Tensor_out": _HAND_WRITTEN_IN_PYTORCH + " (opgen: set.source_Tensor below, then the write-back)",
    "set_.source_Tensor": _HAND_WRITTEN_IN_PYTORCH + " (opgen: an error kernel, set_ has no out-of-place view)",
    "set_.source_Tensor_storage_offset": _HAND_WRITTEN_IN_PYTORCH + " (opgen: an error kernel, set_ has no out-of-place view)",
}


def _names(text: str) -> list[str]:
    return [name.split("::", 1)[1] if name.startswith("aten::") else name for name in _IMPL.findall(text)]


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def opgen_functionalize(out_dir: str) -> tuple[set[str], dict[str, str]]:
    """(operators registered at Functionalize, {operator: reason} of those whose kernel raises)."""
    names: set[str] = set()
    errors: dict[str, str] = {}
    ops = os.path.join(out_dir, "ops")
    for name in sorted(os.listdir(ops)):
        if name.endswith("_Functionalize.cpp"):
            text = _read(os.path.join(ops, name))
            names.update(_names(text))
            errors.update(_FAIL.findall(text))
    return names, errors


def torchgen_functionalize(out_dir: str) -> set[str]:
    names: set[str] = set()
    for name in sorted(os.listdir(out_dir)):
        if _TORCHGEN_FILE.match(name):
            names.update(_names(_read(os.path.join(out_dir, name))))
    return names


def load_reference(path: str = REFERENCE) -> set[str]:
    with open(path, encoding="utf-8") as handle:
        return set(json.load(handle)["operators"])


def write_reference(names: set[str], source: str, path: str = REFERENCE) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        json.dump({"source": source, "operators": sorted(names)}, handle, indent=1)
        handle.write("\n")
