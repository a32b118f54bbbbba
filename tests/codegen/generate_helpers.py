"""Helpers for the codegen tests: run ``python -m opgen generate`` and compare output trees
(snapshots are the shared harness's: tests/helpers.py).
(A module of its own: a test importing from `conftest` gets whichever conftest pytest loaded last.)"""
import os
import random
import re
import shutil
import subprocess
import sys

from helpers import REPO_ROOT

REPO_YAML = os.path.join(REPO_ROOT, "yaml", "native_functions.yaml")
REPO_TAGS = os.path.join(REPO_ROOT, "yaml", "tags.yaml")


def repo_group_count() -> int:
    """How many operator groups the repo's yaml has (tests count regenerations against it)."""
    from opgen.model import load_model
    return len(load_model(REPO_YAML, REPO_TAGS).operator_groups)


GROUPS = repo_group_count()


def run_generate(yaml, out, *extra, hashseed="0", cwd=REPO_ROOT, python_path=None, env=None):
    """``env``: variables added to the run's."""
    env = dict(os.environ, PYTHONHASHSEED=hashseed, **(env or {}))
    env.pop("OPGEN_DEBUG", None)
    if python_path:
        env["PYTHONPATH"] = python_path
    return subprocess.run([sys.executable, "-m", "opgen", "generate", str(yaml), "--out", str(out), *extra],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def generate(yaml, out, *extra):
    """run_generate that must succeed (its stderr is the failure's message)."""
    result = run_generate(yaml, out, *extra)
    assert result.returncode == 0, result.stderr
    return result


def read(root, path) -> str:
    """A generated file's text."""
    with open(os.path.join(root, path), encoding="utf-8") as handle:
        return handle.read()


def ir_classes(text: str) -> list[str]:
    """The IR node classes a generated _ir.h defines, in order."""
    return re.findall(r"^class (\w+) final : public Node", text, re.M)


def regenerated(stdout: str) -> tuple[int, int]:
    """(N, M) from '[opgen] regenerated N/M groups'."""
    n, m = re.search(r"\[opgen\] (?:regenerated|materialized from the cache) (\d+)/(\d+) groups", stdout).groups()
    return int(n), int(m)


def changed(before: dict, after: dict) -> dict[str, set[str]]:
    return {
        "added": set(after) - set(before),
        "removed": set(before) - set(after),
        "rewritten": {p for p in set(before) & set(after) if before[p][1] != after[p][1]},
        "different": {p for p in set(before) & set(after) if before[p][0] != after[p][0]},
    }


def shuffled_yaml(source, directory, seed):
    """``directory``/native_functions.yaml: ``source``'s entries in a seeded random order, with the
    tags.yaml beside ``source`` copied next to it."""
    text = open(source, encoding="utf-8").read()
    first = text.index("- func:")
    entries = re.split(r"\n(?=- func:)", text[first:])
    random.Random(seed).shuffle(entries)
    directory.mkdir()
    target = directory / "native_functions.yaml"
    target.write_text(text[:first] + "\n".join(e.rstrip("\n") + "\n" for e in entries))
    shutil.copy(os.path.join(os.path.dirname(source), "tags.yaml"), directory / "tags.yaml")
    return target
