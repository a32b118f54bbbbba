"""copy_'s hand-written autograd kernels (csrc/autograd/variable_type_manual.cpp: PyTorch writes copy_'s
by hand, so torchgen's rules generate none): writing a value into an existing tensor, directly or
through indexing, carries the value's history; the destination's old value gets no gradient."""
import pytest


def test_copy_into_a_fresh_tensor_records_copy_backwards(opdispatch):
    od = opdispatch
    x = od.tensor([1.0, 2.0], requires_grad=True)
    y = od.zeros([2])
    version = y._version
    y.copy_(x * 2)
    assert y.grad_fn.name() == "CopyBackwards" and y._version == version + 1
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_setitem_on_a_row_reaches_the_source_through_copy_slices(opdispatch):
    od = opdispatch
    x = od.tensor([1.0, 2.0], requires_grad=True)
    z = od.zeros([3, 2])
    z[1] = x * 3
    (z * z).sum().backward()
    assert x.grad.tolist() == [18.0, 36.0]  # d/dx sum((3x)^2)


def test_the_overwritten_value_gets_no_gradient(opdispatch):
    od = opdispatch
    a = od.tensor([5.0, 6.0], requires_grad=True)
    b = od.tensor([1.0, 1.0], requires_grad=True)
    y = a * 1
    y.copy_(b)
    y.sum().backward()
    assert a.grad.tolist() == [0.0, 0.0] and b.grad.tolist() == [1.0, 1.0]


def test_copy_from_float64_sends_the_gradient_back_in_the_source_dtype(opdispatch):
    od = opdispatch
    x = od.tensor([1.0, 2.0], dtype=od.float64, requires_grad=True)
    y = od.zeros([2])
    y.copy_(x)
    y.sum().backward()
    assert x.grad.dtype == od.float64 and x.grad.tolist() == [1.0, 1.0]


def test_copy_into_a_leaf_that_requires_grad_raises(opdispatch):
    od = opdispatch
    leaf = od.zeros([2], requires_grad=True)
    with pytest.raises(od.Error, match="a leaf Variable that requires grad is being used in an in-place operation"):
        leaf.copy_(od.ones([2]))
