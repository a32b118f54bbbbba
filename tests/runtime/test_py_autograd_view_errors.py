"""PyTorch's view and in-place errors, in its words, from Python: a view made under no_grad and
modified in place with grad mode on, the outputs of a function returning several views modified in
place (through the tests' ns::unbind, whose kernels are what the generated ones would be: the
yaml has no such function), and in-place or out= writes through a tensor whose elements share
memory (an expanded view). Each with the cases PyTorch allows beside it."""
import re

import pytest

NO_GRAD_ADVICE = (" Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code"
                  " by moving both the view and the inplace either both inside the no_grad block (if you don't want"
                  " the inplace to be tracked) or both outside (if you want the inplace to be tracked).")
MULTI_OUTPUT_ADVICE = (" This view is the output of a function that returns multiple views. Such functions do not"
                       " allow the output views to be modified inplace. You should replace the inplace operation by"
                       " an out-of-place one.")
OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single memory location."
           " Please clone() the tensor before performing the operation.")


def _raises(od, message):
    return pytest.raises(od.Error, match=re.escape(message))


def _nonleaf(od):
    return od.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True).clone()


# --- views made under no_grad --------------------------------------------------------------------


def test_a_no_grad_view_requires_grad_through_its_base_without_history(opdispatch):
    od = opdispatch
    y = _nonleaf(od)
    with od.no_grad():
        v = y[0]
    assert v.requires_grad and v.is_leaf and v.grad_fn is None  # as in PyTorch


@pytest.mark.parametrize("inplace", [
    lambda v, od: v.mul_(2),
    lambda v, od: v.add_(od.ones(3)),
    lambda v, od: v.copy_(od.zeros(3)),
    lambda v, od: v.zero_(),
], ids=["mul_", "add_", "copy_", "zero_"])
def test_a_no_grad_view_modified_in_place_with_grad_mode_raises(opdispatch, inplace):
    od = opdispatch
    y = _nonleaf(od)
    with od.no_grad():
        v = y[0]
    with _raises(od, "A view was created in no_grad mode and is being modified inplace with grad mode enabled."
                     + NO_GRAD_ADVICE):
        inplace(v, od)
    assert y.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]  # refused before writing


def test_a_no_grad_view_of_a_leaf_names_the_no_grad_view_first(opdispatch):
    od = opdispatch
    x = od.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with od.no_grad():
        v = x[1:]
    with _raises(od, "A view was created in no_grad mode and is being modified inplace"):
        v.add_(1)


def test_a_view_of_a_no_grad_view_names_its_own_node(opdispatch):
    od = opdispatch
    y = _nonleaf(od)
    with od.no_grad():
        v = y[0]
    w = v[1:]
    name = w.grad_fn.name()
    with _raises(od, f"Output 0 of {name} is a view of a view which was created in no_grad mode and is being modified"
                     " inplace with grad mode enabled." + NO_GRAD_ADVICE):
        w.mul_(2)


def test_a_no_grad_view_cannot_be_used_once_its_base_changed_in_place(opdispatch):
    od = opdispatch
    y = _nonleaf(od)
    with od.no_grad():
        v = y[0]
    y.mul_(2)  # tracked: the no_grad view's history cannot follow
    message = ("A view was created in no_grad mode and its base or another view of its base has been modified inplace"
               " with grad mode enabled." + NO_GRAD_ADVICE)
    with _raises(od, message):
        v.grad_fn
    with _raises(od, message):
        v * 2


def test_what_no_grad_views_may_do(opdispatch):
    od = opdispatch
    y = _nonleaf(od)
    with od.no_grad():  # both the view and the in-place under no_grad
        v = y[0]
        v.mul_(10)
    assert y.tolist()[0] == [10.0, 20.0, 30.0]
    w = y[1]  # both with grad mode: tracked through CopySlices
    w.mul_(2)
    assert y.grad_fn.name() == "CopySlices"
    plain = od.tensor([1.0, 2.0])  # a base that does not require grad: nothing to track
    with od.no_grad():
        p = plain[0:1]
    p.add_(1)
    assert plain.tolist() == [2.0, 2.0]
    x = od.tensor([1.0, 2.0], requires_grad=True)
    with od.no_grad():  # an SGD-like step through a view of a leaf
        x[0:1].sub_(1)
    assert x.tolist() == [0.0, 2.0] and x.is_leaf


# --- the outputs of a function returning several views ------------------------------------------


@pytest.fixture(scope="module")
def unbind(test_ops, opdispatch):
    lib = test_ops.register_unbind("viewerrors")
    yield opdispatch.ops.viewerrors.unbind
    del lib


def test_an_output_of_a_multi_output_view_function_modified_in_place_raises(opdispatch, unbind):
    od = opdispatch
    y = _nonleaf(od)
    rows = unbind(y)
    assert [r.grad_fn.name() for r in rows] == ["UnbindBackward0", "UnbindBackward0"]
    for i, row in enumerate(rows):
        with _raises(od, f"Output {i} of UnbindBackward0 is a view and is being modified inplace." + MULTI_OUTPUT_ADVICE):
            row.add_(1)
    element = rows[1][1:]  # a view of an output is restricted too, under its own node's name
    with _raises(od, f"Output 0 of {element.grad_fn.name()} is a view and is being modified inplace."
                     + MULTI_OUTPUT_ADVICE):
        element.mul_(2)
    assert y.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


def test_what_multi_output_views_may_do(opdispatch, unbind):
    od = opdispatch
    x = od.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    first, second = unbind(x.clone())
    (first * 2 + second).sum().backward()  # out of place: fine
    assert x.grad.tolist() == [[2.0, 2.0], [1.0, 1.0]]
    y = x.clone()
    with od.no_grad():
        rows = unbind(y)
        rows[0].add_(1)  # without grad mode
    assert y.tolist()[0] == [2.0, 3.0]
    plain_rows = unbind(od.tensor([[1.0], [2.0]]))  # a base without grad
    plain_rows[1].mul_(3)
    assert plain_rows[1].tolist() == [6.0]


def test_multi_output_views_cannot_be_used_once_their_base_changed_in_place(opdispatch, unbind):
    od = opdispatch
    y = _nonleaf(od)
    rows = unbind(y)
    y.add_(1)
    with _raises(od, "Output 1 of UnbindBackward0 is a view and its base or another view of its base has been modified"
                     " inplace." + MULTI_OUTPUT_ADVICE):
        rows[1].sum()


# --- writing through memory that elements share -------------------------------------------------


@pytest.mark.parametrize("write", [
    lambda e, od: e.add_(1),
    lambda e, od: e.mul_(od.ones(3, 4)),
    lambda e, od: e.exp_(),
    lambda e, od: e.clamp_(0, 1),
    lambda e, od: e.copy_(od.zeros(3, 4)),
    lambda e, od: e.uniform_(),
    lambda e, od: e.normal_(),
    lambda e, od: od.add(od.ones(3, 4), od.ones(4), out=e),
    lambda e, od: od.neg(od.ones(3, 4), out=e),
], ids=["add_", "mul_", "exp_", "clamp_", "copy_", "uniform_", "normal_", "add.out", "neg.out"])
def test_writing_through_an_expanded_view_raises(opdispatch, write):
    od = opdispatch
    base = od.tensor([1.0, 2.0, 3.0, 4.0])
    with _raises(od, OVERLAP):
        write(base.expand(3, 4), od)
    assert base.tolist() == [1.0, 2.0, 3.0, 4.0]


def test_what_may_write_through_shared_or_strided_memory(opdispatch):
    od = opdispatch
    base = od.tensor([1.0, 2.0, 3.0, 4.0])
    base.expand(3, 4).fill_(7)  # every location gets the same value: allowed, as in PyTorch
    assert base.tolist() == [7.0] * 4
    base.expand(2, 4).zero_()
    assert base.tolist() == [0.0] * 4
    base.expand(1, 4).add_(1)  # stride 0 over a size-1 dimension shares nothing
    assert base.tolist() == [1.0] * 4
    m = od.tensor([[1.0, 2.0], [3.0, 4.0]])
    m.t().mul_(2)  # strided, not overlapping
    assert m.tolist() == [[2.0, 4.0], [6.0, 8.0]]
    view = base.expand(3, 4)
    assert view.clone().add_(1).tolist() == [[2.0] * 4] * 3  # the advice: clone() first
