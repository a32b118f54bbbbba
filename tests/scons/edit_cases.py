"""The single-operator edits users make to the yaml (and to the kernel where the edit needs it),
as data: tests/scons/test_edit_matrix.py builds each one, tests/bench/bench_edits.py times them.

Every edit but "method_added" is made to an operator with a Tensor method variant: before the
TensorBase split, an edit to a method operator recompiled every object.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass

YAML = "yaml/native_functions.yaml"
DERIVATIVES = "yaml/derivatives.yaml"


@dataclass(frozen=True)
class Edit:
    name: str
    group: str                                     # the operator group the edit is about
    yaml: tuple[tuple[str, str], ...]              # (old, new) replacements in the yaml, each found once
    sources: tuple[tuple[str, str, str], ...] = ()  # (path, old, new): kernel edits; old "" creates the file
    check: str = ""                                # Python run against the built opdispatch (names: op, t)
    has_method: bool = True                        # the edited operator has a method variant
    changes_code: bool = True                      # False: the group regenerates to the same bytes
    derivatives: tuple[tuple[str, str], ...] = ()  # (old, new) in yaml/derivatives.yaml: a schema edit
                                                   # keeps its entry's name: in step; formula edits


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
         derivatives=(("- name: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
                       "- name: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=2) -> Tensor"),),
         check="assert op.add(t([1.0]), t([3.0])).tolist() == [7.0] and t([1.0]).add(t([3.0])).tolist() == [7.0]"),
    Edit("argument_added", "zero",
         yaml=(("- func: zero_(Tensor(a!) self) -> Tensor(a!)", "- func: zero_(Tensor(a!) self, Scalar value=0) -> Tensor(a!)"),),
         derivatives=(("- name: zero_(Tensor(a!) self) -> Tensor(a!)", "- name: zero_(Tensor(a!) self, Scalar value=0) -> Tensor(a!)"),),
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
    # tanh: an operator no backward formula calls (removing cos would leave sin's formula,
    # grad * self.cos(), calling an operator that no longer exists: an error at its line)
    Edit("operator_removed", "tanh",
         yaml=(("- func: tanh(Tensor self) -> Tensor\n  structured_delegate: tanh.out\n  variants: function, method\n"
                "  tags: [core, pointwise]\n\n", ""),
               ("- func: tanh_(Tensor(a!) self) -> Tensor(a!)\n  structured_delegate: tanh.out\n  variants: function, method\n"
                "  tags: pointwise\n\n", ""),
               ("- func: tanh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
                "  structured_inherits: TensorIteratorBase\n  dispatch:\n    CPU, CUDA: tanh_out\n  tags: pointwise\n\n", "")),
         derivatives=(("- name: tanh(Tensor self) -> Tensor\n  self: grad - grad * result * result\n  result: auto_element_wise\n\n", ""),),
         sources=(("csrc/native/unary_ops.cpp", '#include "ops/tanh_native.h"\n', ""),
                  ("csrc/native/unary_ops.cpp", "OP_DEFINE_FLOAT_UNARY(tanh)\n", "")),
         check="assert not hasattr(op, 'tanh') and not hasattr(t([1.0]), 'tanh')\n"
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
         derivatives=(("- name: div.Scalar(Tensor self, Scalar other) -> Tensor", "- name: div.Scalar_other(Tensor self, Scalar other) -> Tensor"),),
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
    # derivatives.yaml edits: the group's Autograd file regenerates, its unit recompiles, nothing else
    Edit("formula_changed", "sin", yaml=(),
         derivatives=(("  self: grad * self.cos()\n", "  self: grad * self.cos() * 2\n"),),
         check="x = t([0.0], requires_grad=True); op.sin(x).sum().backward(); assert x.grad.tolist() == [2.0]",
         has_method=False),
    Edit("formula_added", "cube",  # a new operator with its formula: its group compiles, nothing else
         yaml=(("- func: matmul(Tensor self, Tensor other) -> Tensor",
                "- func: cube(Tensor self) -> Tensor\n  structured_delegate: cube.out\n  variants: function, method\n\n"
                "- func: cube.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
                "  dispatch:\n    CPU: cube_out\n\n"
                "- func: matmul(Tensor self, Tensor other) -> Tensor"),),
         derivatives=(("- name: amax(", "- name: cube(Tensor self) -> Tensor\n  self: grad * 3 * self * self\n\n- name: amax("),),
         sources=(("csrc/native/cube.cpp", "", CUBE_KERNEL),),
         check="x = t([2.0], requires_grad=True); op.cube(x).sum().backward(); assert x.grad.tolist() == [12.0]\n"
               "assert op.cube(x).grad_fn.name() == 'CubeBackward0'"),
    Edit("entry_removed", "cos", yaml=(),
         derivatives=(("- name: cos(Tensor self) -> Tensor\n  self: -grad * self.sin()\n  result: auto_element_wise\n\n", ""),),
         check="x = t([1.0], requires_grad=True); y = op.cos(x)\n"
               "assert y.grad_fn.name() == 'NotImplemented'\n"
               "try:\n    y.sum().backward()\nexcept op.Error as e:\n    assert 'derivative for aten::cos is not implemented' in str(e)\n"
               "else:\n    raise AssertionError('backward ran')",
         has_method=False),
    Edit("output_differentiability_changed", "amax", yaml=(),
         derivatives=(("- name: amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor\n",
                       "- name: amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor\n  output_differentiability: [False]\n"),),
         check="x = t([1.0, 3.0], requires_grad=True); assert not op.amax(x).requires_grad",
         has_method=False),
)


def _replace_once(text: str, old: str, new: str, where: str) -> str:
    assert text.count(old) == 1, f"{where}: expected exactly one {old!r}"
    return text.replace(old, new)


def apply_edit(project, edit: Edit) -> set[str]:
    """Applies the edit in a later second than the files' mtimes; returns the hand-written files it touched."""
    yaml_path = project / YAML
    text = yaml_path.read_text()
    for old, new in edit.yaml:
        text = _replace_once(text, old, new, YAML)
    touched: dict[str, str] = {}
    if edit.derivatives:
        derivatives = (project / DERIVATIVES).read_text()
        for old, new in edit.derivatives:
            derivatives = _replace_once(derivatives, old, new, DERIVATIVES)
        touched[DERIVATIVES] = derivatives
    for path, old, new in edit.sources:
        current = touched.get(path, (project / path).read_text() if old else "")
        touched[path] = _replace_once(current, old, new, path) if old else new
    # SCons stores source timestamps in whole seconds: write in a second after the built files'.
    newest = max(os.stat(p).st_mtime for p in [yaml_path, *(project / p for p in touched if (project / p).exists())])
    while time.time() < int(newest) + 1:
        time.sleep(0.05)
    if edit.yaml:
        yaml_path.write_text(text)
    for path, content in touched.items():
        (project / path).write_text(content)
    return set(touched)
