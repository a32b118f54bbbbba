"""Benchmark: what a one-operator edit of PyTorch's native_functions.yaml costs while SCons reads
its SConscripts: the model's load (parse cache: one entry parsed again) and the autograd model's
load (load_autograd_cached, as opgen/scons/model.py calls it: the collector paused), after an
edit no cache has seen.

    python tests/bench/bench_native_edit_autograd.py [--runs N] [--edit cov|addcmul] [--profile]

A warm start (the unedited yaml loaded through both caches, untimed), then --runs edits, each a
new default value: cov's `int correction=1` (no derivatives entry), or addcmul's `Scalar value=1`
(its derivatives.yaml `- name:` repeats the schema, so both files change); prints each run's
seconds and the medians. Exits 2 when PyTorch's yaml is absent.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import shutil
import statistics
import sys
import tempfile
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(_HERE))
sys.path.insert(0, REPO)
DATA = os.path.join(os.path.dirname(REPO), "shared", "data", "pytorch-2.13")

from opgen.cache.autograd_cache import load_autograd_cached  # noqa: E402
from opgen.collector import paused_for_resident_objects  # noqa: E402
from opgen.cache.parse_cache import load_model_cached  # noqa: E402
from opgen.gen.layers.autograd_kernels import AutogradModel  # noqa: E402

ADDCMUL = "addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1)"
# name -> ((old, new) in native_functions.yaml, (old, new) in derivatives.yaml or None); {} is the new value.
EDITS = {
    "cov": (("- func: cov(Tensor self, *, int correction=1,", "- func: cov(Tensor self, *, int correction={},"), None),
    "addcmul": (("- func: " + ADDCMUL, "- func: " + ADDCMUL.replace("value=1", "value={}")),
                ("- name: " + ADDCMUL, "- name: " + ADDCMUL.replace("value=1", "value={}"))),
}


def _edit(path: str, original: str, change, value: int) -> None:
    old, new = change
    assert original.count(old) == 1, old
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(original.replace(old, new.format(value), 1))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--edit", choices=sorted(EDITS), default="cov")
    parser.add_argument("--profile", action="store_true", help="cProfile the last run's autograd load")
    args = parser.parse_args(argv)
    if not os.path.isfile(os.path.join(DATA, "native_functions.yaml")):
        print(f"PyTorch 2.13's yaml not found at {DATA}")
        return 2
    work = tempfile.mkdtemp(prefix="bench-native-edit-")
    try:
        yaml, tags = os.path.join(work, "native_functions.yaml"), os.path.join(DATA, "tags.yaml")
        derivatives, cache = os.path.join(work, "derivatives.yaml"), os.path.join(work, "cache")
        originals = {}
        for path in (yaml, derivatives):
            shutil.copy(os.path.join(DATA, os.path.basename(path)), path)
            with open(path, encoding="utf-8") as handle:
                originals[path] = handle.read()
        native_change, derivatives_change = EDITS[args.edit]
        load_autograd_cached(load_model_cached(yaml, tags, cache_dir=cache), derivatives, AutogradModel, cache_dir=cache)
        model_s, autograd_s = [], []
        for run in range(args.runs):
            value = random.Random().randrange(2, 10**9)  # content no cache has seen
            _edit(yaml, originals[yaml], native_change, value)
            if derivatives_change is not None:
                _edit(derivatives, originals[derivatives], derivatives_change, value)
            start = time.perf_counter()
            with paused_for_resident_objects():  # as opgen/scons/model.py loads both
                model = load_model_cached(yaml, tags, cache_dir=cache)
            middle = time.perf_counter()
            profile = cProfile.Profile() if args.profile and run == args.runs - 1 else None
            if profile:
                profile.enable()
            with paused_for_resident_objects():
                load_autograd_cached(model, derivatives, AutogradModel, cache_dir=cache)
            if profile:
                profile.disable()
            end = time.perf_counter()
            model_s.append(middle - start)
            autograd_s.append(end - middle)
            print(f"run {run + 1}: model {model_s[-1]:.3f} s, autograd {autograd_s[-1]:.3f} s", flush=True)
        print(f"median of {args.runs} ({args.edit} default edited): model {statistics.median(model_s):.3f} s, "
              f"autograd {statistics.median(autograd_s):.3f} s, "
              f"both {statistics.median(m + a for m, a in zip(model_s, autograd_s)):.3f} s")
        if profile:
            pstats.Stats(profile).sort_stats("cumulative").print_stats(30)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
