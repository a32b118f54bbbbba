"""Synthetic native_functions.yaml of any size, shaped like PyTorch's, for scaling benchmarks.

    python tests/bench/synthetic_yaml.py N OUT_DIR

writes OUT_DIR/native_functions.yaml (N operator groups) and OUT_DIR/tags.yaml. The output is a
pure function of N: group i is always the same kind with the same name, so sizes compare.

Group kinds, in rotation:
  binary      structured trio (functional, in-place method, out=) with `Scalar alpha=1`
  reduction   structured functional + out= with `int[1]? dim=None, bool keepdim=False,
              ScalarType? dtype=None`
  unary       structured trio, in-place as function and method
  pointwise   plain function + method with a CPU kernel and `Scalar? min=None` defaults
  composite   CompositeImplicitAutograd (no dispatch table), `Tensor? bias=None`
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Optional

KINDS = ("binary", "reduction", "unary", "pointwise", "composite")

TAGS_YAML = """\
# Tags used by the synthetic operators (PyTorch's tags.yaml format).
- tag: generated
  desc: Derived by autogen; not written in the yaml.
- tag: core
  desc: Part of the core operator set.
- tag: pointwise
  desc: Elementwise with broadcasting.
- tag: reduction
  desc: Reduces over one or more dimensions.
- tag: inplace_view
  desc: Modifies only the tensor's metadata, in place.
- tag: view_copy
  desc: The non-aliasing *_copy twin of a view operator.
"""


def group_name(index: int, count: int) -> str:
    """``op0042_add``-like: unique, sortable, and the kind is readable in the name."""
    width = max(4, len(str(count)))
    stem = {"binary": "add", "reduction": "sum", "unary": "neg", "pointwise": "clamp", "composite": "linear"}
    return f"op{index:0{width}d}_{stem[KINDS[index % len(KINDS)]]}"


def editable_group(count: int) -> str:
    """A binary group (it has `alpha=1`) in the middle of a file of ``count`` groups."""
    middle = count // 2
    index = middle - middle % len(KINDS)
    return group_name(index, count)


def _binary(name: str) -> str:
    return f"""\
- func: {name}.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  device_check: NoCheck
  structured_delegate: {name}.out
  variants: function, method
  tags: [core, pointwise]

- func: {name}_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
  device_check: NoCheck
  structured_delegate: {name}.out
  variants: method
  tags: pointwise

- func: {name}.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
  device_check: NoCheck
  structured: True
  structured_inherits: TensorIteratorBase
  dispatch:
    CPU: {name}_out
  tags: pointwise
"""


def _reduction(name: str) -> str:
    args = "Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None"
    return f"""\
- func: {name}.dim_IntList({args}) -> Tensor
  structured_delegate: {name}.IntList_out
  variants: function, method
  tags: [core, reduction]

- func: {name}.IntList_out({args}, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CPU: {name}_out
  tags: reduction
"""


def _unary(name: str) -> str:
    return f"""\
- func: {name}(Tensor self) -> Tensor
  structured_delegate: {name}.out
  variants: function, method
  tags: [core, pointwise]

- func: {name}_(Tensor(a!) self) -> Tensor(a!)
  structured_delegate: {name}.out
  variants: function, method
  tags: pointwise

- func: {name}.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  structured_inherits: TensorIteratorBase
  dispatch:
    CPU: {name}_out
  tags: pointwise
"""


def _pointwise(name: str) -> str:
    return f"""\
- func: {name}(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor
  variants: function, method
  dispatch:
    CPU: {name}_cpu
  tags: pointwise
"""


def _composite(name: str) -> str:
    return f"""\
- func: {name}(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor
  variants: function
"""


RENDER = {"binary": _binary, "reduction": _reduction, "unary": _unary, "pointwise": _pointwise,
          "composite": _composite}


def synthetic_yaml(count: int) -> str:
    if count < 1:
        raise ValueError("the yaml needs at least one operator group")
    header = f"# Synthetic operators for opgen's scaling benchmarks: {count} operator groups.\n"
    entries = [RENDER[KINDS[i % len(KINDS)]](group_name(i, count)) for i in range(count)]
    return header + "\n" + "\n".join(entries)


def write_synthetic(count: int, out_dir: str) -> tuple[str, str]:
    """(native_functions.yaml, tags.yaml) written into ``out_dir``."""
    os.makedirs(out_dir, exist_ok=True)
    paths = os.path.join(out_dir, "native_functions.yaml"), os.path.join(out_dir, "tags.yaml")
    for path, text in zip(paths, (synthetic_yaml(count), TAGS_YAML)):
        with open(path, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
    return paths


def edit_one_default(yaml_text: str, group: str, old: str = "alpha=1", new: str = "alpha=2") -> str:
    """``yaml_text`` with ``old`` -> ``new`` in every schema of operator group ``group``.

    Every overload of the group changes together (functional, in-place and out= must keep
    matching signatures). Works on PyTorch's yaml too (``group="add"``).
    """
    func_line = re.compile(rf"^- func: {re.escape(group)}_?[.(].*$", re.MULTILINE)
    edits = 0

    def edit(match: re.Match) -> str:
        nonlocal edits
        if old not in match.group(0):
            return match.group(0)
        edits += 1
        return match.group(0).replace(old, new)

    edited = func_line.sub(edit, yaml_text)
    if edits == 0:
        raise ValueError(f"no schema of operator group '{group}' contains '{old}'")
    return edited


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int, help="number of operator groups")
    parser.add_argument("out_dir", help="directory for native_functions.yaml and tags.yaml")
    args = parser.parse_args(argv)
    if args.count < 1:
        parser.error("N must be at least 1")
    yaml_path, tags_path = write_synthetic(args.count, args.out_dir)
    print(f"wrote {yaml_path} ({args.count} operator groups) and {tags_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
