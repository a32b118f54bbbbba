"""The generated operator groups in libopdispatch: every yaml operator is defined and has its
kernels after loading (static registration survives the archives), and calls reach them."""
import os

import numpy as np
import pytest

from opgen.gen.group import GroupCodegen
from opgen.gen.engine.config import CodegenConfig
from opgen.model import load_model

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def model():
    return load_model(os.path.join(REPO_ROOT, "yaml", "native_functions.yaml"), os.path.join(REPO_ROOT, "yaml", "tags.yaml"))


def test_every_operator_is_registered_with_its_kernels(opdispatch, model):
    assert opdispatch.dispatcher.static_registration_errors() == []
    names = set(opdispatch.dispatcher.op_names())
    for group in model.operator_groups:
        kernels = GroupCodegen(group, model.indices, CodegenConfig()).kernels
        for f in group.functions:
            qualified = f"{f.namespace}::{f.func.name}"
            assert qualified in names, qualified
            for key, wrappers in kernels.items():
                if any(w.operator == str(f.func.name) for w in wrappers):
                    assert key.value in opdispatch.dispatcher.dump(qualified), (qualified, key)
    assert len([n for n in names if n.startswith("aten::")]) == len(model.functions)


def test_structured_add_runs_meta_then_impl(opdispatch):
    a = opdispatch.tensor([[1.0, 2.0], [3.0, 4.0]])
    b = opdispatch.tensor([10.0, 20.0])
    result = opdispatch.ops.aten.add.Tensor(a, b, alpha=2)
    np.testing.assert_allclose(result.numpy(), [[21.0, 42.0], [23.0, 44.0]])
    out = opdispatch.tensor([0.0])
    returned = opdispatch.ops.aten.add.out(a, b, out=out)
    assert out.numpy().shape == (2, 2)  # resized in place by the out= wrapper
    np.testing.assert_allclose(returned.numpy(), [[11.0, 22.0], [13.0, 24.0]])
    opdispatch.ops.aten.add_.Tensor(a, b)
    np.testing.assert_allclose(a.numpy(), [[11.0, 22.0], [13.0, 24.0]])


def test_meta_tensors_get_shapes_from_meta_functions(opdispatch):
    a = opdispatch.ops.aten.empty.memory_format([2, 1, 3], device="meta")
    b = opdispatch.ops.aten.empty.memory_format([4, 1], device="meta")
    result = opdispatch.ops.aten.mul.Tensor(a, b)
    assert result.device == "meta"
    assert result.shape == (2, 4, 3)


def test_generated_out_and_functional_variants(opdispatch):
    x = opdispatch.tensor([-1.0, 2.0])
    out = opdispatch.tensor([0.0, 0.0])
    opdispatch.ops.aten.relu.out(x, out=out)  # autogen: relu() copied into out
    np.testing.assert_allclose(out.numpy(), [0.0, 2.0])
    copied = opdispatch.ops.aten.copy.default(x, opdispatch.tensor([5.0, 6.0]))  # autogen from copy_
    np.testing.assert_allclose(copied.numpy(), [5.0, 6.0])
    np.testing.assert_allclose(x.numpy(), [-1.0, 2.0])  # the functional variant left self alone


def test_backend_select_and_composite_kernels(opdispatch):
    z = opdispatch.ops.aten.zeros.default([2, 3])
    np.testing.assert_allclose(z.numpy(), np.zeros((2, 3)))
    a = opdispatch.tensor([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(opdispatch.ops.aten.matmul.default(a, a).numpy(), [[7.0, 10.0], [15.0, 22.0]])


def test_errors_name_the_operator(opdispatch):
    a = opdispatch.tensor([[1.0, 2.0, 3.0]])
    with pytest.raises(Exception, match="mm|shapes"):
        opdispatch.ops.aten.mm.default(a, a)
