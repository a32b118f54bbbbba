"""Benchmark: the edit matrix (tests/scons/edit_cases.py) as a table, beside torchgen; cold builds.

    python tests/bench/bench_edits.py [--work DIR] [--no-torchgen] [--cold | --only-cold] [--baseline REV|none]

A report, not a test: it prints tables and exits 0 (1 when a build or generator failed).

1. Our yaml, through SCons (--cuda=off): a temp copy of the project is built once (through
   ccache); each edit is applied to its own copy of that built tree and rebuilt with
   --ccache=off, so the rebuild compiles for real. Columns: groups
   regenerated, generated files rewritten, objects recompiled, rebuild wall time.
2. PyTorch 2.13's yaml (../shared/data/pytorch-2.13), the same kind of edit where PyTorch's yaml
   has it: `opgen generate` and torchgen (torch==2.13.0 in build/bench-venv, per-operator
   headers) each regenerate an output tree made from the unedited yaml; files and bytes they
   rewrite. Every edit is content neither tool has seen (fresh caches, fresh trees).
3. --cold: the whole default build (`scons -j2 --ccache=off`, CUDA as detected) of this tree
   with the autograd layer (the default: yaml/derivatives.yaml) and without it
   (`--derivatives=off`), wall and CPU seconds and their ratio (goal: at most 1.15x); then the
   build of --baseline REV (default: the commit before the TensorBase split; `none` skips it)
   beside this tree's, one after the other in this run, and for three groups the translation
   units each tree compiles for them: count, preprocessed lines and compile seconds.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Callable, Optional

_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)), _TESTS, os.path.join(_TESTS, "scons"),
                os.path.dirname(_TESTS)]
from edit_cases import EDITS, apply_edit  # noqa: E402
from helpers import copy_built, copy_project, run_scons, snapshot, written  # noqa: E402
from peer_env import REPO, ensure_torchgen, pytorch_yaml  # noqa: E402
from scons_helpers import GEN, scons  # noqa: E402
from table import render_table  # noqa: E402

BASELINE = "d11c74a"  # main before issue 15: class op::Tensor included every group's methods
TYPICAL_GROUPS = ("add", "sum", "view")
AUTOGRAD_COLD_GOAL = 1.15  # the cold build with the autograd layer / without it


# ----- 1. our yaml through SCons -----

def our_matrix(work: str) -> list[list[str]]:
    base = copy_project(_fresh(os.path.join(work, "ours-base")))
    first = scons(base, target=None)
    if first.result.returncode:
        raise RuntimeError("the base build failed:\n" + first.output[-2000:])
    rows = []
    for edit in EDITS:
        project = os.path.join(work, "ours-" + edit.name)
        shutil.rmtree(project, ignore_errors=True)
        copy_built(base, project)
        before = snapshot(os.path.join(project, GEN))
        apply_edit(pathlib.Path(project), edit)
        start = time.perf_counter()
        # --ccache=off (it changes no signature): the edit's objects really compile, even where
        # the edit-matrix tests left them in ccache. --pch=off: the tree was built through ccache,
        # so without a precompiled header, and its objects keep those commands.
        build = scons(pathlib.Path(project), "--ccache=off", "--pch=off", target=None)
        seconds = time.perf_counter() - start
        if build.result.returncode:
            raise RuntimeError(f"{edit.name}: the build failed:\n" + build.output[-2000:])
        after = snapshot(os.path.join(project, GEN))
        rewritten = [p for p in written(before, after) if not _is_state(p)]
        regenerated = build.regenerated[0] if build.regenerated else 0
        rows.append([edit.name, edit.group or "-", str(regenerated), str(len(rewritten)), str(len(build.compiled)),
                     f"{seconds:.1f}"])
        shutil.rmtree(project)
    return rows


def _is_state(path: str) -> bool:
    return os.path.basename(path).startswith(".opgen-")


# ----- 2. PyTorch's yaml: opgen generate and torchgen -----

def _entries(text: str) -> list[str]:
    """The yaml split before each '- func:' line; joining the pieces gives the text back."""
    return re.split(r"(?m)^(?=- func: )", text)


def _edit_entry(text: str, func_prefix: str, change: Callable[[str], str]) -> str:
    pieces = _entries(text)
    hits = [i for i, piece in enumerate(pieces) if piece.startswith("- func: " + func_prefix)]
    assert len(hits) == 1, f"{func_prefix!r}: {len(hits)} entries"
    pieces[hits[0]] = change(pieces[hits[0]])
    return "".join(pieces)


def _edit_all(text: str, func_prefixes: tuple[str, ...], change: Callable[[str], str]) -> str:
    for prefix in func_prefixes:
        text = _edit_entry(text, prefix, change)
    return text


def _replace(old: str, new: str) -> Callable[[str], str]:
    def change(entry: str) -> str:
        assert entry.count(old) == 1, old
        return entry.replace(old, new)
    return change


def _append(entries: str) -> Callable[[str], str]:
    return lambda text: text.rstrip("\n") + "\n\n" + entries


PYTORCH_EDITS: dict[str, Callable[[str], str]] = {
    # torchgen requires a structured family to agree: the default changes in all three entries.
    "default_value": lambda t: _edit_all(t, ("add.Tensor(", "add_.Tensor(", "add.out("), _replace("alpha=1", "alpha=2")),
    "argument_added": lambda t: _edit_entry(t, "zero_(", _replace("zero_(Tensor(a!) self)", "zero_(Tensor(a!) self, Scalar value=0)")),
    "return_type": lambda t: _edit_entry(t, "matmul(", _replace("-> Tensor\n", "-> (Tensor, Tensor)\n")),
    "new_composite_operator": _append("- func: opgen_square(Tensor self) -> Tensor\n  variants: function, method\n"),
    "new_structured_operator": _append(
        "- func: opgen_cube(Tensor self) -> Tensor\n  structured_delegate: opgen_cube.out\n  variants: function, method\n\n"
        "- func: opgen_cube.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
        "  structured_inherits: TensorIteratorBase\n  dispatch:\n    CPU: opgen_cube_out\n"),
    "operator_removed": lambda t: "".join(p for p in _entries(t) if not p.startswith(("- func: cos(", "- func: cos_(", "- func: cos.out("))),
    "method_added": lambda t: _edit_entry(t, "zeros_like(", lambda e: e.replace("\n", "\n  variants: function, method\n", 1)),
    "method_removed": lambda t: _edit_entry(t, "sin(", _replace("variants: function, method", "variants: function")),
    "kernel_renamed": lambda t: _edit_entry(t, "uniform_(", _replace("CPU, CUDA, MPS: uniform_\n", "CPU, CUDA, MPS: uniform_sample_\n")),
    "overload_renamed": lambda t: _edit_entry(t, "div.Scalar(", _replace("div.Scalar(", "div.Scalar_other(")),
    "tag_added": lambda t: _edit_entry(t, "matmul(", lambda e: e.replace("  variants:", "  tags: core\n  variants:", 1)),
    "reordered_and_commented": lambda t: _move_to_end(t, "sin(").replace("- func: zeros_like(", "# a comment\n- func: zeros_like(", 1),
}


def _move_to_end(text: str, func_prefix: str) -> str:
    pieces = _entries(text)
    moved = [p for p in pieces if p.startswith("- func: " + func_prefix)]
    assert len(moved) == 1
    rest = [p for p in pieces if p is not moved[0]]
    return "".join(rest).rstrip("\n") + "\n\n" + moved[0].rstrip("\n") + "\n"


@dataclass
class Peer:
    name: str
    command: Callable[[str, str], list[str]]  # (yaml dir, out dir) -> argv
    cwd: str
    env: dict


def _opgen(work: str) -> Peer:
    env = dict(os.environ, OPGEN_CACHE_DIR=os.path.join(work, "opgen-cache"))
    return Peer("opgen", lambda src, out: [sys.executable, "-m", "opgen", "generate", os.path.join(src, "native", "native_functions.yaml"),
                                           "--tags", os.path.join(src, "native", "tags.yaml"), "--out", out], REPO, env)


def _torchgen(python: str, work: str) -> Peer:
    templates = subprocess.run([python, "-c", "import os, torchgen; print(os.path.join(os.path.dirname(torchgen.__file__), "
                                              "'packaged', 'ATen', 'templates'))"],
                               capture_output=True, text=True, check=True).stdout.strip()

    def command(src: str, out: str) -> list[str]:
        if not os.path.exists(os.path.join(src, "templates")):
            os.symlink(templates, os.path.join(src, "templates"))
        return [python, "-m", "torchgen.gen", "--source-path", src, "--per-operator-headers",
                "--aoti-install-dir", os.path.join(out, "aoti"), "--install-dir", out]
    return Peer("torchgen", command, work, dict(os.environ))


def _source_tree(root: str, yaml_text: str, tags_path: str) -> str:
    os.makedirs(os.path.join(root, "native"), exist_ok=True)
    with open(os.path.join(root, "native", "native_functions.yaml"), "w", encoding="utf-8", newline="\n") as handle:
        handle.write(yaml_text)
    shutil.copy(tags_path, os.path.join(root, "native", "tags.yaml"))
    return root


def _run(peer: Peer, src: str, out: str) -> tuple[float, str]:
    start = time.perf_counter()
    run = subprocess.run(peer.command(src, out), cwd=peer.cwd, env=peer.env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if run.returncode:
        raise RuntimeError(f"{peer.name} exited {run.returncode}: {(run.stderr or run.stdout)[-1500:]}")
    return seconds, run.stdout


def pytorch_matrix(work: str, torchgen_python: Optional[str]) -> list[list[str]]:
    yaml_path, tags_path = pytorch_yaml()
    with open(yaml_path, encoding="utf-8") as handle:
        original = handle.read()
    peers = [_opgen(work)] + ([_torchgen(torchgen_python, work)] if torchgen_python else [])
    base_src = _source_tree(os.path.join(work, "pt-base"), original, tags_path)
    bases = {}
    for peer in peers:
        bases[peer.name] = os.path.join(work, f"pt-{peer.name}-base")
        _run(peer, base_src, bases[peer.name])
    rows = []
    for edit in EDITS:
        src = _source_tree(_fresh(os.path.join(work, "pt-src-" + edit.name)), PYTORCH_EDITS[edit.name](original), tags_path)
        row = [edit.name]
        for peer in peers:
            out = os.path.join(work, f"pt-{peer.name}-{edit.name}")
            shutil.rmtree(out, ignore_errors=True)
            shutil.copytree(bases[peer.name], out, symlinks=True)
            before = snapshot(out)
            try:
                seconds, stdout = _run(peer, src, out)
            except RuntimeError as error:  # the generator rejects the edited yaml: say so in its cells
                reason = str(error).strip().splitlines()[-1][:60]
                row += (["-"] if peer.name == "opgen" else []) + [f"rejected: {reason}", "-", "-"]
                shutil.rmtree(out)
                continue
            after = snapshot(out)
            # opgen's state file (every group's key and files) is bookkeeping, not generated code.
            changed = [p for p in written(before, after) if not p.startswith("aoti") and not _is_state(p)]
            removed = len(set(before) - set(after))
            regenerated = re.search(r"(?:regenerated|materialized from the cache) (\d+)/(\d+) groups", stdout)
            row += ([regenerated.group(1)] if peer.name == "opgen" and regenerated else []) + [
                f"{len(changed)}" + (f" (-{removed})" if removed else ""), f"{sum(len(after[p][0]) for p in changed) / 1e3:,.0f}",
                f"{seconds:.1f}"]
            shutil.rmtree(out)
        rows.append(row)
        shutil.rmtree(src)
    return rows


# ----- 3. cold builds -----

def _tree_at(rev: str, where: str) -> str:
    subprocess.run(["git", "worktree", "add", "--detach", "-f", where, rev], cwd=REPO, check=True, capture_output=True)
    return where


def _cold_build(project: str, *options: str) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds (user+sys of scons and every compiler it ran), compiles and the
    build's output (its command lines)."""
    cache = os.path.join(project, "cold-cache")  # an empty codegen cache: render everything
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run = run_scons(project, "-j2", "--ccache=off", *options, env={"OPGEN_CACHE_DIR": cache}, timeout=None)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode:
        raise RuntimeError(f"cold build of {project} {' '.join(options)} failed:\n{(run.stdout + run.stderr)[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # Compiles: command lines under --verbose, else the counted step lines ("[ 3/9] CXX x.os").
    compiles = len(re.findall(r" -c ", run.stdout)) or len(re.findall(r"^\[\s*\d+/\d+\] (?:CXX|CC|NVCC) ", run.stdout, re.M))
    return seconds, cpu, compiles, run.stdout


def _units_of(project: str, group: str) -> list[str]:
    """The generated translation units the build compiles for a group (an in-tree group's unit, or
    before it existed, each of its sources)."""
    ops = os.path.join(project, GEN, "ops")
    names = sorted(n for n in os.listdir(ops) if re.fullmatch(re.escape(group) + r"_[A-Za-z]+\.cpp", n))
    unit = f"{group}_unit.cpp"
    return [os.path.join(ops, unit)] if unit in names else [os.path.join(ops, n) for n in names]


def _compile_figures(project: str, build_log: str, sources: list[str]) -> tuple[int, float]:
    """Preprocessed lines and compile seconds of each source, compiled by the command the tree's
    own build ran (its flags, optimisation level and precompiled header)."""
    lines, seconds = 0, 0.0
    for source in sources:
        relative = os.path.relpath(source, project)
        command = next((shlex.split(line) for line in build_log.splitlines()
                        if " -c " in line and line.rstrip().endswith(" " + relative)), None)
        if command is None:
            raise RuntimeError(f"the cold build of {project} did not compile {relative}")
        out = command.index("-o")
        to_null = command[:out] + ["-o", os.devnull] + command[out + 2:]
        preprocess = [arg for arg in command[:out] + command[out + 2:] if arg != "-c"] + ["-E"]  # to stdout
        pre = subprocess.run(preprocess, cwd=project, capture_output=True, text=True, check=True).stdout
        lines += pre.count("\n")
        start = time.perf_counter()
        subprocess.run(to_null, cwd=project, check=True, capture_output=True)
        seconds += time.perf_counter() - start
    return lines, seconds


def cold_autograd(work: str) -> tuple[list[list[str]], tuple[str, str, float, float]]:
    """This tree's cold build without the autograd layer, then with it: rows, and the build with
    autograd (project, log, wall and CPU seconds) for the baseline comparison."""
    rows, built = [], {}
    for label, name, options in (("this tree, --derivatives=off", "cold-no-autograd", ("--derivatives=off",)),
                                 ("this tree, with autograd (default)", "cold-after", ())):
        project = str(copy_project(_fresh(os.path.join(work, name))))
        seconds, cpu, compiles, log = _cold_build(project, *options)
        built[name] = (project, log, seconds, cpu)
        rows.append([label, str(compiles), f"{seconds:.0f}", f"{cpu:.0f}", "", ""])
    (_, _, off_s, off_cpu), (_, _, on_s, on_cpu) = built["cold-no-autograd"], built["cold-after"]
    wall_ratio, cpu_ratio = on_s / off_s, on_cpu / off_cpu
    rows.append(["with / without", "", f"{wall_ratio:.2f}x", f"{cpu_ratio:.2f}x", f"<= {AUTOGRAD_COLD_GOAL}x",
                 f"wall {'yes' if wall_ratio <= AUTOGRAD_COLD_GOAL else 'NO'}, "
                 f"CPU {'yes' if cpu_ratio <= AUTOGRAD_COLD_GOAL else 'NO'}"])
    shutil.rmtree(built["cold-no-autograd"][0])
    return rows, built["cold-after"]


def cold_baseline(work: str, baseline: str, built_after: tuple[str, str, float, float]) -> tuple[list[list[str]], list[list[str]]]:
    """The cold build of ``baseline`` beside this tree's (``built_after``: cold_autograd's)."""
    before = _tree_at(baseline, os.path.join(work, "cold-before"))
    after, after_log, after_s, after_cpu = built_after
    builds, units = [], []
    try:
        seconds, cpu, compiles, before_log = _cold_build(before)
        logs = {before: before_log, after: after_log}
        builds.append([f"before ({baseline})", str(compiles), f"{seconds:.0f}", f"{cpu:.0f}"])
        builds.append(["after (this tree, with autograd)", str(len(re.findall(r" -c ", after_log))),
                       f"{after_s:.0f}", f"{after_cpu:.0f}"])
        builds.append(["after / before", "", f"{after_s / seconds:.2f}x", f"{after_cpu / cpu:.2f}x"])
        for group in TYPICAL_GROUPS:
            row = [group]
            for project in (before, after):
                sources = _units_of(project, group)
                lines, seconds = _compile_figures(project, logs[project], sources)
                row += [str(len(sources)), f"{lines:,}", f"{seconds:.1f}"]
            units.append(row)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", before], cwd=REPO, capture_output=True)
    return builds, units


# ----- report -----

def edit_tables(work: str, torchgen: Optional[str]) -> None:
    print("Our yaml, SCons (--cuda=off; edits rebuilt without ccache): one single-operator edit per row, each on a copy of one built tree\n")
    print(render_table(["edit", "group", "groups regenerated", "files rewritten", "objects recompiled", "rebuild s"],
                       our_matrix(work), "<<>>>>"))
    print("\nPyTorch 2.13's yaml, the same kind of edit: files and kB each generator rewrites in a tree made from "
          "the unedited yaml\n")
    header = ["edit", "opgen groups", "opgen files", "opgen kB", "opgen s"]
    header += ["torchgen files", "torchgen kB", "torchgen s"] if torchgen else []
    print(render_table(header, pytorch_matrix(work, torchgen), "<" + ">" * (len(header) - 1)))


def _fresh(path: str) -> pathlib.Path:
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return pathlib.Path(path)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default=None, help="scratch directory (default: a temp dir, removed after)")
    parser.add_argument("--no-torchgen", action="store_true", help="measure opgen only")
    parser.add_argument("--cold", action="store_true",
                        help="also time cold builds of this tree with and without autograd, and of --baseline")
    parser.add_argument("--only-cold", action="store_true", help="--cold without the edit tables")
    parser.add_argument("--baseline", default=BASELINE,
                        help=f"the tree --cold compares with (default {BASELINE}; none: no baseline build)")
    args = parser.parse_args(argv)
    work = args.work or tempfile.mkdtemp(prefix="bench-edits-")
    torchgen = None if args.no_torchgen or args.only_cold else ensure_torchgen()
    try:
        if not args.only_cold:
            edit_tables(work, torchgen)
        if args.cold or args.only_cold:
            rows, built_after = cold_autograd(work)
            print("\nCold default build, `scons -j2 --ccache=off` (the whole library, tests and bindings), "
                  "without the autograd layer and with it, one after the other\n")
            print(render_table(["tree", "compiles", "wall s", "CPU s", "goal", "met"], rows, "<>>><<"))
            if args.baseline != "none":
                builds, units = cold_baseline(work, args.baseline, built_after)
                print(f"\nThe same build of {args.baseline} beside this tree's (with autograd)\n")
                print(render_table(["tree", "compiles", "wall s", "CPU s"], builds, "<>>>"))
                print("\nGenerated translation units compiled for a group: count, preprocessed lines, seconds to compile "
                      "with the command its build ran\n")
                print(render_table(["group", "before TUs", "before lines", "before s", "after TUs", "after lines", "after s"],
                                   units, "<>>>>>>"))
        return 0
    except (RuntimeError, subprocess.CalledProcessError) as error:
        print(f"bench_edits: {error}", file=sys.stderr)
        return 1
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
