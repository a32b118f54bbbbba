"""Report: does every operator group of PyTorch 2.13's yaml compile against csrc/?

    python tests/bench/check_pytorch_units.py [--gen DIR] [--jobs N] [--only GROUP,...] [--show N] [--log FILE]

Generates PyTorch's groups (../shared/data/pytorch-2.13) for the default keys into --gen (kept
between runs: opgen rewrites only what changed), precompiles csrc/dispatch/precompiled.h with the
generated objects' flags (opgen/scons/flags.py) and runs `g++ -fsyntax-only` over every
ops/<group>_unit.cpp, N at a time (2 by default). Prints how many units pass and the failing
units bucketed by their first error (the C++ type a CppKind / Unbox / IValue lacks, the
construct, or the message). Syntax only: the units declare the hand-written kernels they register, which
PyTorch's yaml names and nothing here defines. A report, not a test: exits 0, or 1 when a unit
failed. Two cores: about 12 minutes.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__))]
from peer_env import REPO, pytorch_yaml  # noqa: E402

sys.path.insert(0, REPO)
from opgen.scons.flags import COMMON_CXXFLAGS, DEFAULTS  # noqa: E402

KEYS = ("CPU", "Meta", "BackendSelect", "CompositeImplicitAutograd", "CompositeExplicitAutograd",
        "CompositeExplicitAutogradNonFunctional", "Functionalize")
# The flags of a generated group's object (opgen/scons/flags.py).
FLAGS = (*COMMON_CXXFLAGS, "-DOP_ASSERT_NO_TENSOR_METHODS", *DEFAULTS["OPGEN_GENERATED_CXXFLAGS"])

# What a failing unit lacks, from its first error: the C++ type named, or the construct.
_BUCKETS = (
    (r"‘op::ops::(\w+)::\w+’ has not been declared", "handle struct op::ops::{0} hides namespace {0}"),
    (r"incomplete type ‘op::CppKind<(.+?), void>’", "CppKind<{}>"),
    (r"incomplete type ‘op::boxing::Unbox(?:For)?<(.+?)(?:, void)?>’", "Unbox<{}>"),
    (r"no matching function for call to ‘op::IValue::IValue\((?:const )?(.+?)&?\)’", "IValue({})"),
    (r"‘(\w+)’ does not name a type", "undeclared type {}"),
    (r"‘(\w+)’ was not declared in this scope", "undeclared name {}"),
    (r"‘(\w+)’ is not a member of ‘op’", "undeclared op::{}"),
)


def generate(out: str) -> None:
    yaml_path, tags_path = pytorch_yaml()
    subprocess.run([sys.executable, "-m", "opgen", "generate", yaml_path, "--tags", tags_path, "--keys", ",".join(KEYS),
                    "--out", out], cwd=REPO, check=True, capture_output=True, text=True)


def precompile(work: str) -> list[str]:
    """The flags that force-include csrc/dispatch/precompiled.h, precompiled into ``work``."""
    header = os.path.join(work, "precompiled.h")
    with open(os.path.join(REPO, "csrc", "dispatch", "precompiled.h")) as src, open(header, "w") as dst:
        dst.write(src.read())
    subprocess.run(["g++", *FLAGS, "-I" + os.path.join(REPO, "csrc"), "-x", "c++-header", header, "-o", header + ".gch"],
                   check=True)
    return ["-include", header, "-Winvalid-pch"]


def check_unit(gen: str, group: str, extra: list[str]) -> tuple[str, str]:
    unit = os.path.join(gen, "ops", f"{group}_unit.cpp")
    proc = subprocess.run(["g++", *FLAGS, *extra, "-fsyntax-only", "-I" + os.path.join(REPO, "csrc"), "-I" + gen, unit],
                          capture_output=True, text=True)
    return group, proc.stderr if proc.returncode else ""


def bucket_of(stderr: str) -> str:
    """What a unit's first error says is missing, or its text (the later errors often follow from it)."""
    first = next((line for line in stderr.splitlines() if " error: " in line), "")
    for pattern, label in _BUCKETS:
        m = re.search(pattern, first)
        if m:
            return label.format(m.group(1).replace("op::", "").replace("std::", ""))
    return re.sub(r"^.*? error: ", "", first)[:160]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gen", default=os.path.join(tempfile.gettempdir(), "opgen-pytorch-units"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", default="", help="comma-separated groups (default: all)")
    parser.add_argument("--show", type=int, default=4, help="groups listed per bucket")
    parser.add_argument("--log", help="write each failing unit's errors here")
    args = parser.parse_args()
    generate(args.gen)
    groups = sorted(name[:-len("_unit.cpp")] for name in os.listdir(os.path.join(args.gen, "ops")) if name.endswith("_unit.cpp"))
    if args.only:
        groups = [g for g in groups if g in set(args.only.split(","))]
    with tempfile.TemporaryDirectory() as work:
        extra = precompile(work)
        with ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda g: check_unit(args.gen, g, extra), groups))
    failed = {group: err for group, err in results if err}
    by_bucket: dict[str, list[str]] = defaultdict(list)
    for group, err in failed.items():
        by_bucket[bucket_of(err)].append(group)
    print(f"{len(groups) - len(failed)}/{len(groups)} units pass g++ -fsyntax-only")
    for bucket, members in sorted(by_bucket.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        shown = ", ".join(members[:args.show]) + (", ..." if len(members) > args.show else "")
        print(f"{len(members):5}  {bucket}  ({shown})")
    if args.log:
        with open(args.log, "w") as log:
            for group, err in sorted(failed.items()):
                log.write(f"==== {group}\n{err}\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
