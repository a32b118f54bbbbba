"""The Autograd / ADInplaceOrView decisions (opgen/gen/layers/autograd_plan.py), one rule at a time, on a
tiny operator yaml and derivatives.yaml."""
import pytest

from generate_helpers import REPO_TAGS
from opgen.gen.layers.autograd_plan import (
    AD_INPLACE_OR_VIEW, AUTOGRAD, AutogradKind as K, InplaceOrViewKind as V, plan_autograd, registration_sets,
)
from opgen.model import load_model
from opgen.model.derivatives import load_derivatives

OPS = """\
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  dispatch:
    CPU: add
- func: add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
  dispatch:
    CPU: add_
- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU: add_out
- func: t(Tensor(a) self) -> Tensor(a)
  dispatch:
    CompositeExplicitAutograd: t
- func: t_(Tensor(a!) self) -> Tensor(a!)
  tags: inplace_view
  dispatch:
    CompositeExplicitAutograd: t_
- func: square(Tensor self) -> Tensor
- func: zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
  dispatch:
    CompositeExplicitAutograd: zeros
- func: zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
  dispatch:
    CompositeExplicitAutograd: zeros_like
- func: copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)
  dispatch:
    CompositeExplicitAutograd: copy_
- func: sin(Tensor self) -> Tensor
  dispatch:
    CPU: sin
- func: _bump(Tensor[] self) -> Tensor[]
  dispatch:
    CPU: bump
- func: _bump.out(Tensor[] self, *, Tensor(a!)[] out) -> ()
  dispatch:
    CPU: bump_out
- func: numel_of(Tensor self) -> int
  dispatch:
    CPU: numel_of
"""

DERIVATIVES = """\
- name: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  self: grad
  other: maybe_multiply(grad, alpha.conj())
- name: t(Tensor(a) self) -> Tensor(a)
  dispatch:
    Default:
      self: grad.t()
    AutogradNestedTensor:
      self: grad.t()
- name: t_(Tensor(a!) self) -> Tensor(a!)
  self: grad.t()
- name: copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)
  self: zeros_like(grad)
  src: grad
"""


@pytest.fixture
def plan(tmp_path):
    ops, derivatives = tmp_path / "native_functions.yaml", tmp_path / "derivatives.yaml"
    ops.write_text(OPS, encoding="utf-8")
    derivatives.write_text(DERIVATIVES, encoding="utf-8")
    model = load_model(str(ops), REPO_TAGS)
    decisions = plan_autograd(model, load_derivatives(str(derivatives), model))
    return {d.name: d for d in decisions}, registration_sets(decisions)


@pytest.mark.parametrize("name, kind, node, inplace_or_view", [
    ("add.Tensor", K.differentiable, "AddBackward0", V.none),
    ("add_.Tensor", K.differentiable, "AddBackward0", V.inplace),     # the functional variant's entry
    ("add.out", K.differentiable, "AddBackward0", V.out),
    ("t", K.differentiable, "TBackward0", V.view),
    ("t_", K.differentiable, "TBackward1", V.inplace_view),
    ("square", K.none, None, V.none),                               # decomposes: its pieces have kernels
    ("zeros", K.not_implemented, None, V.none),                     # a factory: nothing requires grad
    ("zeros_like", K.non_differentiable, None, V.none),             # the values never matter
    ("copy_", K.none, None, V.none),                                # the runtime writes it by hand
    ("sin", K.not_implemented, None, V.none),                       # no formula: backward raises
    ("_bump", K.not_implemented, None, V.none),
    ("_bump.out", K.non_differentiable, None, V.none),              # returns nothing: no version bump kernel
    ("numel_of", K.non_differentiable, None, V.none),               # no Tensor output
])
def test_decisions(plan, name, kind, node, inplace_or_view):
    decision = plan[0][name]
    assert (decision.kind, decision.node, decision.inplace_or_view) == (kind, node, inplace_or_view)


def test_dispatch_sections_register_at_their_keys_and_sets_follow(plan):
    decisions, sets = plan
    assert decisions["t"].autograd_keys == (AUTOGRAD, "AutogradNestedTensor")
    assert decisions["add_.Tensor"].info == "add.Tensor"
    assert sets[AUTOGRAD] == ["_bump", "_bump.out", "add.Tensor", "add.out", "add_.Tensor", "numel_of", "sin", "t",
                              "t_", "zeros", "zeros_like"]
    assert sets[AD_INPLACE_OR_VIEW] == ["add.out", "add_.Tensor", "t", "t_"]
