"""Autograd registration parity with torchgen: on PyTorch 2.13's yaml and derivatives.yaml, the
functions opgen decides to give Autograd and ADInplaceOrView kernels (opgen/gen/layers/autograd_plan.py)
are exactly those torchgen 2.13's gen_autograd registers there (tests/data/torchgen_autograd_2.13.json,
written by tests/bench/make_autograd_reference.py), apart from the differences listed here with a
reason. And on our own yaml: what the plan decides follows from the derivatives and the schemas.
"""
import json
import os

import pytest

from generate_helpers import REPO_ROOT, REPO_TAGS, REPO_YAML
from opgen.gen.layers.autograd_plan import (
    AD_INPLACE_OR_VIEW, AUTOGRAD, HAND_WRITTEN, AutogradKind, InplaceOrViewKind, NOT_RECORDED_AS_VIEWS, is_abstract,
    plan_autograd,
    registration_sets,
)
from opgen.model import load_model
from opgen.model.derivatives import DEFAULT, load_derivatives
from opgen.model.native_function import cpp_name
from opgen.model.schema import SchemaKind

REFERENCE = os.path.join(REPO_ROOT, "tests", "data", "torchgen_autograd_2.13.json")
REFERENCE_KEYS = {AUTOGRAD: "autograd_operators", AD_INPLACE_OR_VIEW: "ad_inplace_or_view_operators"}

# (key, function) -> why opgen's decision differs from torchgen's there. A listed difference that
# no longer occurs fails the test too, so the table stays true. (Empty: the sets are equal.)
KNOWN_DIFFERENCES: dict[tuple[str, str], str] = {}


@pytest.fixture(scope="module")
def pytorch_plan(real_data_dir):
    model = load_model(os.path.join(real_data_dir, "native_functions.yaml"), os.path.join(real_data_dir, "tags.yaml"))
    derivatives = load_derivatives(os.path.join(real_data_dir, "derivatives.yaml"), model)
    return plan_autograd(model, derivatives)


@pytest.fixture(scope="module")
def reference():
    with open(REFERENCE, encoding="utf-8") as handle:
        return json.load(handle)


def test_reference_sizes(reference):
    assert len(reference["autograd_operators"]) == 2358 and len(reference["ad_inplace_or_view_operators"]) == 1093


@pytest.mark.parametrize("key", [AUTOGRAD, AD_INPLACE_OR_VIEW])
def test_registrations_match_torchgen(pytorch_plan, reference, key):
    ours, theirs = set(registration_sets(pytorch_plan)[key]), set(reference[REFERENCE_KEYS[key]])
    differing = (ours - theirs) | (theirs - ours)
    unexplained = sorted(n for n in differing if (key, n) not in KNOWN_DIFFERENCES)
    missing = [n for n in unexplained if n in theirs]
    extra = [n for n in unexplained if n in ours]
    assert not unexplained, (f"{key}: {len(missing)} functions torchgen registers and opgen does not "
                             f"({', '.join(missing[:10])}), {len(extra)} only opgen registers ({', '.join(extra[:10])})")
    stale = sorted(n for (k, n) in KNOWN_DIFFERENCES if k == key and n not in differing)
    assert not stale, f"{key}: listed as differing from torchgen but no longer do: {stale}"


def test_registration_sets_are_sorted_and_deterministic(pytorch_plan):
    sets = registration_sets(pytorch_plan)
    assert all(names == sorted(set(names)) for names in sets.values())
    assert [d.name for d in pytorch_plan] == sorted(d.name for d in pytorch_plan)


def test_pytorch_kinds_follow_torchgen(pytorch_plan):
    """A few decisions spelled out: out= and in-place variants reuse the functional's node; a
    dispatch section registers at its own key; hand-written and decomposing functions get none;
    shape-only and boolean operators pass through; a factory gets the not-implemented kernel
    (torchgen registers it; no input can require grad, so it never records anything)."""
    by_name = {d.name: d for d in pytorch_plan}
    expect = {
        "add.Tensor": (AutogradKind.differentiable, "AddBackward0", InplaceOrViewKind.none),
        "add_.Tensor": (AutogradKind.differentiable, "AddBackward0", InplaceOrViewKind.inplace),
        "add.out": (AutogradKind.differentiable, "AddBackward0", InplaceOrViewKind.out),
        "transpose_": (AutogradKind.differentiable, "TransposeBackward1", InplaceOrViewKind.inplace_view),
        "view": (AutogradKind.differentiable, "ViewBackward0", InplaceOrViewKind.view),
        "view_copy": (AutogradKind.differentiable, "ViewBackward0_copy", InplaceOrViewKind.none),
        "copy_": (AutogradKind.none, None, InplaceOrViewKind.none),
        "reshape": (AutogradKind.none, None, InplaceOrViewKind.none),
        "avg_pool1d.out": (AutogradKind.none, None, InplaceOrViewKind.none),
        "zeros_like": (AutogradKind.non_differentiable, None, InplaceOrViewKind.none),
        "logical_and_": (AutogradKind.non_differentiable, None, InplaceOrViewKind.inplace),
        "empty.memory_format": (AutogradKind.not_implemented, None, InplaceOrViewKind.none),
        # _foreach_: a derived node for the functional overload, the per-tensor operator's node in
        # place, nothing where no per-tensor operator pairs up (maximum has no Scalar overload)
        "_foreach_add.Scalar": (AutogradKind.differentiable, "ForeachAddBackward1Scalar", InplaceOrViewKind.none),
        "_foreach_add_.Scalar": (AutogradKind.differentiable, "AddBackward1", InplaceOrViewKind.none),
        "_foreach_zero_": (AutogradKind.differentiable, "ZeroBackward0", InplaceOrViewKind.none),
        "_foreach_add.Scalar_out": (AutogradKind.non_differentiable, None, InplaceOrViewKind.none),
        "_foreach_maximum_.Scalar": (AutogradKind.non_differentiable, None, InplaceOrViewKind.none),
        "_foreach_copy": (AutogradKind.not_implemented, None, InplaceOrViewKind.none),
    }
    got = {n: (by_name[n].kind, by_name[n].node, by_name[n].inplace_or_view) for n in expect}
    assert got == expect
    assert by_name["view"].autograd_keys == (AUTOGRAD, "AutogradNestedTensor")


# Our own operators.

@pytest.fixture(scope="module")
def our_plan():
    model = load_model(REPO_YAML, REPO_TAGS)
    derivatives = load_derivatives(os.path.join(REPO_ROOT, "yaml", "derivatives.yaml"), model)
    return model, derivatives, {d.name: d for d in plan_autograd(model, derivatives)}


def test_every_function_with_a_node_gets_a_differentiable_kernel(our_plan):
    model, derivatives, plan = our_plan
    with_node = [i for i in derivatives.infos if i.node and i.dispatch_key == DEFAULT]
    assert len(with_node) >= 50
    for info in with_node:
        decision = plan[info.key]
        if cpp_name(model.by_name[info.name].func) in HAND_WRITTEN:  # copy_: the runtime writes it
            assert decision.kind is AutogradKind.none, decision
        else:
            assert (decision.kind, decision.node) == (AutogradKind.differentiable, info.node), decision


def test_inplace_and_view_functions_get_inplace_or_view_kernels(our_plan):
    model, _, plan = our_plan
    checked = {"inplace": 0, "view": 0}
    for f in model.functions:
        decision = plan[str(f.func.name)]
        if decision.kind is AutogradKind.none:  # decomposes (reshape) or hand-written (copy_)
            assert decision.inplace_or_view is InplaceOrViewKind.none
            continue
        assert is_abstract(f, model) or decision.node
        if f.is_view_op and str(f.func.name) not in NOT_RECORDED_AS_VIEWS:  # lift_fresh: an identity for tracing
            checked["view"] += 1
            assert decision.inplace_or_view in (InplaceOrViewKind.view, InplaceOrViewKind.inplace_view), decision
        elif f.func.kind() is SchemaKind.inplace and f.func.returns:
            checked["inplace"] += 1
            assert decision.inplace_or_view is InplaceOrViewKind.inplace, decision
        elif f.func.kind() is SchemaKind.functional:
            assert decision.inplace_or_view is InplaceOrViewKind.none, decision
    assert checked["inplace"] >= 20 and checked["view"] >= 10, checked


def test_factories_get_no_node_and_no_inplace_or_view_kernel(our_plan):
    model, _, plan = our_plan
    factories = [f for f in model.functions if f.func.kind() is SchemaKind.functional
                 and not any(a.type.is_tensor_like() for a in f.func.arguments.all())]
    assert {"zeros", "ones", "arange", "empty.memory_format"} <= {str(f.func.name) for f in factories}
    for f in factories:
        decision = plan[str(f.func.name)]
        assert decision.node is None and decision.inplace_or_view is InplaceOrViewKind.none, decision
        assert decision.kind in (AutogradKind.not_implemented, AutogradKind.non_differentiable), decision
