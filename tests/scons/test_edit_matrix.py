"""The edit matrix: every kind of single-operator edit a user makes to the yaml (and to the
operator's kernel, where the edit needs it) regenerates that operator's group and recompiles
exactly the objects that depend on what changed, on real SCons builds of a temp copy.

Most edits are made to operators with a Tensor method variant: before the TensorBase split, any
edit to a method operator recompiled every object, because every object saw class op::Tensor.

For each edit, three things are checked against the build's own compile lines:
- the recompiled set equals the objects whose source or included files (read from the sources,
  tests/scons/include_graph.py) changed: SCons missed nothing and added nothing;
- that set lies within the edited group's objects, the objects that include the group's headers
  by name, the kernel files the edit touched, and UMBRELLA_CONSUMERS;
- the generated files that changed belong to the edited group, or are umbrella headers.
Then the library links and opdispatch imports from the built tree and runs the operator.

One project is built once (module scope, its objects mostly from ccache); each edit runs on a
copy of that built tree, so edits never depend on each other's reverts.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass, field

import pytest

from include_graph import IncludeGraph
from scons_helpers import GEN, copy_project, ok, scons, snapshot

# The one object built from code that calls operators as methods (api/tensor.h includes every
# group's methods): any edit that touches a method recompiles it, and nothing else may.
UMBRELLA_CONSUMERS = {"build/obj/tests/test_tensor_methods.o"}
UMBRELLA_HEADERS = {"Functions.h", "MetaFunctions.h", "MethodOperators.h", "NativeFunctions.h", "Operators.h",
                    "TensorMethods.h"}
YAML = "yaml/native_functions.yaml"


@dataclass(frozen=True)
class Edit:
    name: str
    group: str                                     # the operator group the edit is about
    yaml: tuple[tuple[str, str], ...]              # (old, new) replacements in the yaml, each found once
    sources: tuple[tuple[str, str, str], ...] = ()  # (path, old, new): kernel edits; old "" creates the file
    check: str = ""                                # Python run against the built opdispatch (names: op, t)
    has_method: bool = True                        # the edited operator has a method variant
    changes_code: bool = True                      # False: the group regenerates to the same bytes


SQUARE_KERNEL = """\
// square: a CompositeImplicitAutograd operator added by the edit-matrix test.
#include "ops/mul.h"
#include "ops/square_native.h"

namespace op {

TensorBase native::square(const TensorBase& self) { return op::mul(self, self); }

}  // namespace op
"""

CUBE_KERNEL = """\
// cube: a structured operator added by the edit-matrix test (meta() here, impl() on CPU).
#include "core/tensor.h"
#include "ops/cube_native.h"
#include "ops/mul.h"

namespace op {

void meta::structured_cube::meta(const TensorBase& self) {
  set_output_raw_strided(0, self.sizes(), {}, TensorOptions(self.dtype()).with_device(self.device()));
}

void native::structured_cube_out::impl(const TensorBase& self, const TensorBase& out) {
  op::mul_out(const_cast<TensorBase&>(out), op::mul(self, self), self);
}

}  // namespace op
"""

MATMUL_PAIR = """\
std::tuple<TensorBase, TensorBase> native::matmul(const TensorBase& self, const TensorBase& other) {
  const TensorBase result = matmul_one(self, other);
  return {result, result};
}

TensorBase& native::matmul_out("""

EDITS = (
    Edit("default_value", "add",
         yaml=(("- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
                "- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=2) -> Tensor"),),
         check="assert op.add(t([1.0]), t([3.0])).tolist() == [7.0] and t([1.0]).add(t([3.0])).tolist() == [7.0]"),
    Edit("argument_added", "zero",
         yaml=(("- func: zero_(Tensor(a!) self) -> Tensor(a!)", "- func: zero_(Tensor(a!) self, Scalar value=0) -> Tensor(a!)"),),
         sources=(("csrc/native/fill.cpp", "TensorBase& native::zero_(TensorBase& self) { return op::fill_(self, 0); }",
                   "TensorBase& native::zero_(TensorBase& self, const Scalar& value) { return op::fill_(self, value); }"),),
         check="x = t([1.0, 2.0]); x.zero_(3); assert x.tolist() == [3.0, 3.0]; assert op.zero_(x).tolist() == [0.0, 0.0]"),
    Edit("return_type", "matmul",
         yaml=(("- func: matmul(Tensor self, Tensor other) -> Tensor", "- func: matmul(Tensor self, Tensor other) -> (Tensor, Tensor)"),),
         sources=(("csrc/native/matmul.cpp", "TensorBase native::matmul(const TensorBase& self, const TensorBase& other) {",
                   "static TensorBase matmul_one(const TensorBase& self, const TensorBase& other) {"),
                  ("csrc/native/matmul.cpp", "const TensorBase result = native::matmul(self, other);",
                   "const TensorBase result = matmul_one(self, other);"),
                  ("csrc/native/matmul.cpp", "TensorBase& native::matmul_out(", MATMUL_PAIR),
                  ("csrc/tests/test_native_kernels.cpp", "{ return ops::matmul::call(a, b); }",
                   "{ return std::get<0>(ops::matmul::call(a, b)); }")),
         check="a, b = op.matmul(t([[1.0, 2.0]]), t([[3.0], [4.0]])); assert a.tolist() == b.tolist() == [[11.0]]"),
    Edit("new_composite_operator", "square",
         yaml=(("- func: matmul(Tensor self, Tensor other) -> Tensor",
                "- func: square(Tensor self) -> Tensor\n  variants: function, method\n\n"
                "- func: matmul(Tensor self, Tensor other) -> Tensor"),),
         sources=(("csrc/native/square.cpp", "", SQUARE_KERNEL),),
         check="assert op.square(t([3.0])).tolist() == [9.0] and t([-2.0]).square().tolist() == [4.0]"),
    Edit("new_structured_operator", "cube",
         yaml=(("- func: matmul(Tensor self, Tensor other) -> Tensor",
                "- func: cube(Tensor self) -> Tensor\n  structured_delegate: cube.out\n  variants: function, method\n\n"
                "- func: cube.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
                "  dispatch:\n    CPU: cube_out\n\n"
                "- func: matmul(Tensor self, Tensor other) -> Tensor"),),
         sources=(("csrc/native/cube.cpp", "", CUBE_KERNEL),),
         check="assert op.cube(t([2.0])).tolist() == [8.0] and t([3.0]).cube().tolist() == [27.0]\n"
               "assert tuple(op.cube(op.empty([2, 5], device='meta')).shape) == (2, 5)"),
    Edit("operator_removed", "cos",
         yaml=(("- func: cos(Tensor self) -> Tensor\n  structured_delegate: cos.out\n  variants: function, method\n"
                "  tags: [core, pointwise]\n\n", ""),
               ("- func: cos_(Tensor(a!) self) -> Tensor(a!)\n  structured_delegate: cos.out\n  variants: function, method\n"
                "  tags: pointwise\n\n", ""),
               ("- func: cos.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
                "  structured_inherits: TensorIteratorBase\n  dispatch:\n    CPU, CUDA: cos_out\n  tags: pointwise\n\n", "")),
         sources=(("csrc/native/unary_ops.cpp", '#include "ops/cos_native.h"\n', ""),
                  ("csrc/native/unary_ops.cpp", "OP_DEFINE_FLOAT_UNARY(cos)\n", "")),
         check="assert not hasattr(op, 'cos') and not hasattr(t([1.0]), 'cos')\n"
               "assert op.sin(t([0.0])).tolist() == [0.0]"),
    Edit("method_added", "zeros_like",
         yaml=(("- func: zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
                "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor\n",
                "- func: zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
                "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor\n  variants: function, method\n"),),
         check="assert t([5.0, 6.0]).zeros_like().tolist() == [0.0, 0.0]", has_method=False),
    Edit("method_removed", "sin",
         yaml=(("- func: sin(Tensor self) -> Tensor\n  structured_delegate: sin.out\n  variants: function, method\n",
                "- func: sin(Tensor self) -> Tensor\n  structured_delegate: sin.out\n  variants: function\n"),),
         check="assert op.sin(t([0.0])).tolist() == [0.0] and not hasattr(t([0.0]), 'sin')"),
    Edit("kernel_renamed", "uniform",
         yaml=(("    CPU, CUDA: uniform_\n", "    CPU, CUDA: uniform_sample_\n"),),
         sources=(("csrc/native/random.cpp", "TensorBase& native::uniform_(TensorBase& self, double from",
                   "TensorBase& native::uniform_sample_(TensorBase& self, double from"),),
         check="x = op.empty([100]); x.uniform_(2.0, 3.0); assert all(2.0 <= v < 3.0 for v in x.tolist())"),
    Edit("overload_renamed", "div",
         yaml=(("- func: div.Scalar(Tensor self, Scalar other) -> Tensor", "- func: div.Scalar_other(Tensor self, Scalar other) -> Tensor"),),
         check="assert op.div(t([3.0]), 2).tolist() == [1.5] and t([3.0]).div(2).tolist() == [1.5]\n"
               "assert op.ops.aten.div.Scalar_other(t([1.0]), 4).tolist() == [0.25]"),
    Edit("tag_added", "matmul",
         yaml=(("- func: matmul(Tensor self, Tensor other) -> Tensor\n  variants: function, method\n",
                "- func: matmul(Tensor self, Tensor other) -> Tensor\n  variants: function, method\n  tags: core\n"),),
         check="assert op.matmul(t([[2.0]]), t([[4.0]])).tolist() == [[8.0]]",
         changes_code=False),  # tags are in the group's key but in no generated line
    Edit("reordered_and_commented", "",
         yaml=(("- func: zeros_like(", "# a comment a user adds\n- func: zeros_like("),
               ("- func: sin(Tensor self) -> Tensor\n  structured_delegate: sin.out\n  variants: function, method\n"
                "  tags: [core, pointwise]\n\n", ""),
               ("- func: relu(Tensor self) -> Tensor\n", "- func: sin(Tensor self) -> Tensor\n  structured_delegate: sin.out\n"
                "  variants: function, method  # sin moved below cos\n  tags: [core, pointwise]\n\n"
                "- func: relu(Tensor self) -> Tensor\n")),
         check="assert op.sin(t([0.0])).tolist() == [0.0] and t([0.0]).sin().tolist() == [0.0]"),
)


def _replace_once(text: str, old: str, new: str, where: str) -> str:
    assert text.count(old) == 1, f"{where}: expected exactly one {old!r}"
    return text.replace(old, new)


def _apply(project, edit: Edit) -> set[str]:
    """Applies the edit in a later second than the files' mtimes; returns the hand-written files it touched."""
    yaml_path = project / YAML
    text = yaml_path.read_text()
    for old, new in edit.yaml:
        text = _replace_once(text, old, new, YAML)
    touched: dict[str, str] = {}
    for path, old, new in edit.sources:
        current = touched.get(path, (project / path).read_text() if old else "")
        touched[path] = _replace_once(current, old, new, path) if old else new
    # SCons stores source timestamps in whole seconds: write in a second after the built files'.
    newest = max(os.stat(p).st_mtime for p in [yaml_path, *(project / p for p in touched if (project / p).exists())])
    while time.time() < int(newest) + 1:
        time.sleep(0.05)
    yaml_path.write_text(text)
    for path, content in touched.items():
        (project / path).write_text(content)
    return set(touched)


def _group_files(project, group: str) -> set[str]:
    """The edited group's generated files (project-relative), from the build's layout cache."""
    with open(project / GEN / ".opgen-layout.json", encoding="utf-8") as handle:
        layout = json.load(handle)
    return {os.path.join(GEN, path) for path in layout.get(group, [None, []])[1]}


def _group_objects(graph: IncludeGraph, files: set[str]) -> set[str]:
    return {graph.objects[f] for f in files if f in graph.objects}


def _run_check(project, code: str):
    program = "import opdispatch as op\nt = op.tensor\n" + textwrap.dedent(code)
    env = {**os.environ, "PYTHONPATH": str(project / "build" / "python")}
    run = subprocess.run([sys.executable, "-c", program], cwd=project, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = copy_project(tmp_path_factory.mktemp("matrix"))
    ok(scons(root, target=None))
    return root


@pytest.mark.parametrize("edit", EDITS, ids=[e.name for e in EDITS])
def test_one_operator_edit_recompiles_only_what_depends_on_it(built, tmp_path, edit):
    project = tmp_path / "project"
    shutil.copytree(built, project, symlinks=True)
    before = {p: data for p, (data, _) in snapshot(project / GEN).items()}
    graph_before = IncludeGraph(str(project))
    by_name_before = graph_before.objects_including_by_name(_headers_by_name(project, edit.group))

    touched = _apply(project, edit)
    build = ok(scons(project, target=None))

    after = {p: data for p, (data, _) in snapshot(project / GEN).items()}
    changed_gen = {os.path.join(GEN, p) for p in set(before) | set(after) if before.get(p) != after.get(p)}
    graph = IncludeGraph(str(project))

    # 1. SCons recompiled exactly what depends on a changed file.
    expected = graph.objects_depending_on(changed_gen | touched)
    assert build.compiled == expected, (f"recompiled but nothing it includes changed: {sorted(build.compiled - expected)}; "
                                        f"not recompiled though it changed: {sorted(expected - build.compiled)}")

    # 2. ... which is the group's own objects, its includers by name, the edited kernels, the umbrella consumers.
    group_files = _group_files(project, edit.group) | (_group_files(built, edit.group) if edit.group else set())
    allowed = (_group_objects(graph, group_files) | by_name_before
               | graph.objects_including_by_name(_headers_by_name(project, edit.group))
               | {graph.objects[p] for p in touched if p in graph.objects} | UMBRELLA_CONSUMERS)
    assert build.compiled <= allowed, f"objects outside the edited group recompiled: {sorted(build.compiled - allowed)}"

    # 3. Only the group's files (and umbrella include lists) were rewritten.
    assert changed_gen <= group_files | {os.path.join(GEN, u) for u in UMBRELLA_HEADERS}, sorted(changed_gen - group_files)

    if edit.name == "reordered_and_commented":
        assert build.regenerated == (0, build.regenerated[1]) and build.compiled == set() and not build.linked
    elif edit.name == "operator_removed":
        removed = _group_files(built, edit.group)
        assert removed and not _group_files(project, edit.group)
        assert not any((project / path).exists() for path in removed)
        assert build.linked
    else:
        assert build.regenerated[0] >= 1 and edit.group in build.regenerated_names
        assert bool(build.compiled) == edit.changes_code and bool(changed_gen) == edit.changes_code
    if edit.has_method and edit.changes_code and edit.name not in ("reordered_and_commented", "kernel_renamed"):
        assert UMBRELLA_CONSUMERS <= build.compiled  # a method changed: the method test object recompiles

    _run_check(project, edit.check)


def _headers_by_name(project, group: str) -> set[str]:
    """Names as sources include them ("ops/add.h", "ops/add_native.h", ...) of the group's headers."""
    if not group:
        return set()
    return {f"ops/{group}{suffix}.h" for suffix in ("", "_ops", "_native", "_meta", "_methods")}


def test_every_edit_kind_of_the_issue_is_covered():
    assert len(EDITS) == 12 and len({e.name for e in EDITS}) == 12
    assert sum(e.has_method for e in EDITS) >= 10  # all but "method added" (and the no-op reorder) hit method operators
