"""One build pipeline: this repository's runtime and a downstream project's library are built by
the same public builders (opgen.scons), so each kind of object is compiled with the same command
in both, up to the paths that name the project."""
import os
import re

from helpers import PROJECT_BUILD, copy_built, run_scons

# (the in-tree object, the downstream object) of each kind, relative to their projects.
KINDS = {
    "generated group unit": ("build/obj/gen/ops/mul_unit.os", "build/myops/obj/ops/scale_unit.os"),
    "hand-written kernel": ("build/obj/native/binary_ops.os", "build/myops/obj/kernels/myops.os"),
}


def _command(output: str, target: str) -> list[str]:
    """The compile command of ``target`` in a verbose dry run's output, as words."""
    lines = [line for line in output.splitlines() if f" -o {target} " in line]
    assert len(lines) == 1, output[-3000:]
    return lines[0].split()


def _flags(words: list[str], root) -> list[str]:
    """The command's flags, without what names files of the project: the compiler (and a
    ccache in front), the object, the source and include directories."""
    flags, skip = [], False
    for word in words[1:]:
        if skip:
            skip = False
        elif word in ("-o", "-I", "-isystem"):
            skip = True
        elif word == words[-1] or word.startswith("-I") or os.path.basename(word) == "g++":
            continue
        else:
            flags.append(word.replace(str(root), "ROOT"))
    return flags


def _dry_run_commands(run, root, targets):
    """Each target's compile command, from a verbose dry run after removing its object."""
    for target in targets:
        os.remove(os.path.join(root, target))
    result = run(root, targets)
    assert result.returncode == 0, result.stdout + result.stderr
    return {target: _command(result.stdout, target) for target in targets}


def test_each_kind_of_object_is_compiled_with_the_same_flags_in_tree_and_downstream(
        built_project, downstream_built, plugin_venv, tmp_path):
    in_tree = copy_built(built_project.root, tmp_path / "in-tree")
    downstream = copy_built(downstream_built.root, tmp_path / "downstream")
    ours = _dry_run_commands(lambda root, targets: run_scons(root, *PROJECT_BUILD, "--verbose", "-n", *targets),
                             in_tree, [pair[0] for pair in KINDS.values()])
    theirs = _dry_run_commands(lambda root, targets: plugin_venv.scons(root, "--verbose", "-n", *targets),
                               downstream, [pair[1] for pair in KINDS.values()])
    for kind, (our_object, their_object) in KINDS.items():
        our_flags, their_flags = _flags(ours[our_object], in_tree), _flags(theirs[their_object], downstream)
        assert our_flags == their_flags, f"{kind}:\n  in-tree:    {our_flags}\n  downstream: {their_flags}"
        assert "-fno-gnu-unique" in our_flags and "-DOP_ASSERT_NO_TENSOR_METHODS" in our_flags
    assert re.search(r"-O1\b", " ".join(ours[KINDS["generated group unit"][0]]))
    assert re.search(r"-O2\b", " ".join(ours[KINDS["hand-written kernel"][0]]))
