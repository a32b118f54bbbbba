"""What the registrations torchgen parity added do at run time: the default-backend structured
wrappers at CompositeExplicitAutogradNonFunctional (a backend with only out= runs the functional
and in-place variants), Meta kernels of in-place operators, and BackendSelect for operators that
take tensor options and tensors (to / _to_copy with an explicit device)."""
import numpy as np
import pytest

NON_FUNCTIONAL = "CompositeExplicitAutogradNonFunctional"


@pytest.fixture
def private_device(opdispatch):
    """An external device at PrivateUse1: a backend the NonFunctional alias covers."""
    return opdispatch.register_device_type("pu1", "PrivateUse1")


@pytest.fixture
def out_only_add(opdispatch, make_lib, private_device):
    """aten::add.out at PrivateUse1 (computed on the host), and nothing else of add."""
    calls = []

    def add_out(self, other, alpha=1, out=None):
        calls.append((tuple(self.shape), tuple(other.shape), alpha, tuple(out.shape)))
        result = self.to("cpu").numpy() + alpha * other.to("cpu").numpy()
        out.copy_(opdispatch.tensor(result.astype(np.float32)))
        return out

    lib = make_lib("aten")
    lib.impl("add.out", "PrivateUse1", add_out, debug="pu1 add.out")
    return calls


def test_out_only_backend_runs_functional_through_the_default_wrapper(opdispatch, out_only_add, private_device):
    a = opdispatch.tensor([[1.0, 2.0], [3.0, 4.0]], device=private_device)
    b = opdispatch.tensor([10.0, 20.0], device=private_device)
    result = opdispatch.ops.aten.add.Tensor(a, b, alpha=2)
    assert result.device == private_device
    np.testing.assert_allclose(result.to("cpu").numpy(), [[21.0, 42.0], [23.0, 44.0]])
    # meta() sized the fresh output (broadcast [2, 2]) before the out= kernel saw it
    assert out_only_add == [((2, 2), (2,), 2, (2, 2))]
    table = opdispatch.dispatcher.dump_table("aten::add.Tensor")
    assert table["PrivateUse1"] == f"{NON_FUNCTIONAL} kernel"
    assert table["CPU"] == "CPU kernel"  # a backend's own kernel beats the default
    assert "XLA" not in table or table["XLA"] != f"{NON_FUNCTIONAL} kernel"  # XLA functionalizes


def test_out_only_backend_runs_inplace_through_the_default_wrapper(opdispatch, out_only_add, private_device):
    a = opdispatch.tensor([[1.0, 2.0], [3.0, 4.0]], device=private_device)
    b = opdispatch.tensor([1.0, 1.0], device=private_device)
    returned = opdispatch.ops.aten.add_.Tensor(a, b)
    assert returned.is_alias_of(a)
    np.testing.assert_allclose(a.to("cpu").numpy(), [[2.0, 3.0], [4.0, 5.0]])
    assert out_only_add == [((2, 2), (2,), 1, (2, 2))]
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        opdispatch.ops.aten.add_.Tensor(b, a)  # meta() checks self before out= runs
    assert len(out_only_add) == 1


def test_non_functional_alias_skips_functionalizing_backends(opdispatch):
    table = opdispatch.dispatcher.dump_table("aten::where.self")
    assert table["Meta"] == "Meta kernel"
    dump = opdispatch.dispatcher.dump("aten::where.self")
    assert f"{NON_FUNCTIONAL}: " in dump
    for key in ("PrivateUse1",):
        assert table[key] == f"{NON_FUNCTIONAL} kernel"
    for key in ("XLA", "Lazy"):
        assert table.get(key) != f"{NON_FUNCTIONAL} kernel"


def test_inplace_on_meta_returns_self_unchanged(opdispatch):
    x = opdispatch.empty([2, 3], device="meta")
    mask = opdispatch.empty([2, 3], dtype=opdispatch.bool, device="meta")
    y = opdispatch.ops.aten.masked_fill_.Scalar(x, mask, 1.5)
    assert y.is_alias_of(x) and y.shape == (2, 3) and y.device == "meta"
    assert opdispatch.dispatcher.dump_table("aten::masked_fill_.Scalar")["Meta"] == "Meta kernel"


def test_inplace_meta_refuses_a_non_meta_self(opdispatch):
    x = opdispatch.tensor([1.0, 2.0])
    mask = opdispatch.empty([2], dtype=opdispatch.bool, device="meta")
    with pytest.raises(RuntimeError, match="cannot write in place into a non-meta tensor with meta tensor arguments"):
        opdispatch.ops.aten.masked_fill_.Scalar(x, mask, 1.5)
    assert x.tolist() == [1.0, 2.0]


def test_masked_fill_runs_on_cpu(opdispatch):
    x = opdispatch.tensor([1.0, 2.0, 3.0])
    mask = opdispatch.tensor([True, False, True])
    assert opdispatch.ops.aten.masked_fill.Scalar(x, mask, 0.5).tolist() == [0.5, 2.0, 0.5]
    opdispatch.ops.aten.masked_fill_.Scalar(x, mask, -1)
    assert x.tolist() == [-1.0, 2.0, -1.0]


@pytest.fixture
def lazy_to_copy(opdispatch, make_lib):
    """aten::_to_copy at Lazy, recording its calls: dispatching on self (cpu) alone never reaches it."""
    calls = []

    def to_copy(self, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None):
        calls.append((str(self.device), str(device)))
        return opdispatch.tensor(self.tolist(), dtype=dtype or self.dtype, device=device)

    lib = make_lib("aten")
    lib.impl("_to_copy", "Lazy", to_copy, debug="lazy _to_copy")
    return calls


def test_to_copy_with_an_explicit_device_goes_through_backend_select(opdispatch, lazy_to_copy):
    x = opdispatch.tensor([1.0, 2.0])
    y = opdispatch.ops.aten._to_copy(x, device="lazy")
    assert y.device == "lazy" and lazy_to_copy == [("cpu", "lazy")]
    assert opdispatch.dispatcher.dump_table("aten::_to_copy")["BackendSelect"] == "BackendSelect kernel"
    z = opdispatch.ops.aten._to_copy(x, dtype=opdispatch.float64)  # no device: self's backend, CPU
    assert z.device == "cpu" and len(lazy_to_copy) == 1


def test_to_with_an_explicit_device_goes_through_backend_select(opdispatch, lazy_to_copy):
    x = opdispatch.tensor([1.0, 2.0])
    y = opdispatch.ops.aten.to.dtype_layout(x, device="lazy")
    assert y.device == "lazy" and lazy_to_copy == [("cpu", "lazy")]
    assert opdispatch.dispatcher.dump_table("aten::to.dtype_layout")["BackendSelect"] == "BackendSelect kernel"
    x.to("lazy")  # to.device decomposes into _to_copy, whose BackendSelect sees the device
    assert lazy_to_copy[-1] == ("cpu", "lazy")
