"""The Python autograd API where no operator records history: leaf flags, requires_grad= on
factories, .grad, detach, grad mode, printing, the engine's errors on leaves, and gradcheck's
own logic. (Gradients through operators: test_py_autograd_grads.py.)"""
import threading
import warnings

import numpy as np
import pytest


# --- leaves ------------------------------------------------------------------------------------


def test_a_new_tensor_is_a_leaf_without_grad(opdispatch):
    x = opdispatch.tensor([1.0, 2.0])
    assert (x.requires_grad, x.is_leaf, x.grad, x.grad_fn) == (False, True, None, None)


def test_requires_grad_property_and_method(opdispatch):
    x = opdispatch.tensor([1.0, 2.0])
    x.requires_grad = True
    assert x.requires_grad and x.is_leaf and x.grad_fn is None
    assert x.requires_grad_(False) is x and not x.requires_grad
    assert x.requires_grad_() is x and x.requires_grad


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_only_floating_tensors_can_require_grad(opdispatch, dtype):
    t = opdispatch.zeros(2, dtype=getattr(opdispatch, dtype))
    message = "only Tensors of floating point and complex dtype can require gradients"
    for attempt in (lambda: setattr(t, "requires_grad", True), lambda: t.requires_grad_(),
                    lambda: opdispatch.zeros(2, dtype=getattr(opdispatch, dtype), requires_grad=True),
                    lambda: opdispatch.tensor([1, 0], dtype=getattr(opdispatch, dtype), requires_grad=True)):
        with pytest.raises(opdispatch.Error, match=message):
            attempt()
    t.requires_grad = False  # turning it off is always fine
    assert not t.requires_grad


# --- requires_grad= on factories ---------------------------------------------------------------

FACTORIES = {
    "tensor": lambda od, **kw: od.tensor([[1.0, 2.0]], **kw),
    "zeros": lambda od, **kw: od.zeros(2, 3, **kw),
    "ones": lambda od, **kw: od.ones([2], **kw),
    "full": lambda od, **kw: od.full([2], 1.5, **kw),
    "empty": lambda od, **kw: od.empty(2, **kw),
    "empty_strided": lambda od, **kw: od.empty_strided([2, 2], [1, 2], **kw),
    "rand": lambda od, **kw: od.rand(3, **kw),
    "randn": lambda od, **kw: od.randn(3, dtype=od.float64, **kw),
    "arange": lambda od, **kw: od.arange(5.0, **kw),
    "arange.start_step": lambda od, **kw: od.arange(0, 2, 0.5, **kw),
    "zeros_like": lambda od, **kw: od.zeros_like(od.ones(2), **kw),
    "ones_like": lambda od, **kw: od.ones_like(od.ones(2), **kw),
    "empty_like": lambda od, **kw: od.empty_like(od.ones(2), **kw),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_factories_take_requires_grad(opdispatch, name):
    make = FACTORIES[name]
    made = make(opdispatch, requires_grad=True)
    assert made.requires_grad and made.is_leaf and made.grad_fn is None
    assert not make(opdispatch, requires_grad=False).requires_grad
    assert not make(opdispatch).requires_grad


def test_every_factory_schema_takes_requires_grad(opdispatch):
    """The rule is PyTorch's, applied to every function, not a list: TensorOptions arguments and
    no Tensor input (or a *_like name)."""
    from opdispatch import _op_table
    takers = set()
    for name, overloads in _op_table.FUNCTIONS.items():
        for overload in overloads:
            schema = getattr(getattr(opdispatch.ops.aten, name), overload.split(".", 1)[1] if "." in overload
                             else "default").schema
            arguments = schema[schema.index("(") + 1:schema.rindex(") ->")]
            options = all(f" {option}=" in arguments for option in ("dtype", "layout", "device", "pin_memory"))
            tensor_input = "Tensor" in arguments.replace("Tensor(a!) out", "")
            if options and (not tensor_input or name.endswith("_like")):
                takers.add(name)
    assert {"zeros", "ones", "full", "empty", "empty_strided", "arange", "rand", "randn", "zeros_like",
            "ones_like", "empty_like"} <= takers
    assert "_to_copy" not in takers  # a conversion of a Tensor input, as in PyTorch
    for name in sorted(takers):  # the factory overload binds what it can; requires_grad= is not what it refuses
        with pytest.raises(TypeError) as error:
            getattr(opdispatch, name)("not an argument", requires_grad=True)
        lines = str(error.value).splitlines()
        factory_lines = [line for line in lines if "pin_memory" in line] if len(lines) > 1 else lines
        assert factory_lines and not any("requires_grad" in line for line in factory_lines), (name, lines)


def test_requires_grad_is_rejected_where_pytorch_rejects_it(opdispatch):
    x = opdispatch.ones(2)
    with pytest.raises(TypeError) as error:
        opdispatch.add(x, x, requires_grad=True)
    assert str(error.value).startswith("add(): no overload accepts the arguments (Tensor, Tensor, requires_grad=bool)")
    assert "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor  -- got an unexpected keyword " \
           "argument 'requires_grad'" in str(error.value)
    with pytest.raises(TypeError, match="unexpected keyword argument 'requires_grad'"):
        opdispatch.ops.aten.zeros.default([2], requires_grad=True)  # operators keep their schemas
    with pytest.raises(TypeError, match="argument 'requires_grad' must be bool, not int"):
        opdispatch.zeros(2, requires_grad=1)


# --- .grad -------------------------------------------------------------------------------------


def test_grad_can_be_set_and_cleared(opdispatch):
    x = opdispatch.zeros(2, 2, requires_grad=True)
    g = opdispatch.ones(2, 2)
    x.grad = g
    assert x.grad.is_alias_of(g) and x.grad.equal(g)
    x.grad = None
    assert x.grad is None
    y = opdispatch.zeros(2)  # a tensor without autograd state gets a grad too, as in PyTorch
    y.grad = opdispatch.ones(2)
    assert y.grad.equal(opdispatch.ones(2))


def test_grad_assignment_is_checked(opdispatch):
    x = opdispatch.zeros(2, 2, requires_grad=True)
    with pytest.raises(opdispatch.Error, match="assigned grad has data of a different size"):
        x.grad = opdispatch.ones(3)
    with pytest.raises(opdispatch.Error, match="assigned grad has data of a different type"):
        x.grad = opdispatch.ones(2, 2, dtype=opdispatch.float64)
    with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None but got grad of type int"):
        x.grad = 1
    assert x.grad is None


# --- detach ------------------------------------------------------------------------------------


def test_detach_shares_storage_without_history(opdispatch):
    x = opdispatch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    d = x.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None and x.requires_grad
    assert d.is_alias_of(x) and d.shape == x.shape and d.strides == x.strides and d._version == x._version
    d.fill_(7.0)
    assert x.tolist() == [[7.0, 7.0], [7.0, 7.0]]
    t = x.detach().t().detach()  # a view's detach keeps its strides and offset
    assert t.strides == (1, 2) and t.is_alias_of(x)


# --- backward and grad on leaves ---------------------------------------------------------------


def test_backward_of_a_leaf_accumulates_into_its_grad(opdispatch):
    x = opdispatch.tensor([1.0, 2.0], requires_grad=True)
    x.backward(opdispatch.tensor([1.0, 3.0]))
    x.backward(opdispatch.tensor([1.0, 3.0]))
    assert x.grad.tolist() == [2.0, 6.0]
    s = opdispatch.tensor(5.0, requires_grad=True)
    s.backward()  # one element: the gradient is implicitly 1
    assert s.grad.tolist() == 1.0
    a, b = opdispatch.ones(2, requires_grad=True), opdispatch.ones(3, requires_grad=True)
    opdispatch.autograd.backward([a, b], [opdispatch.full([2], 2.0), opdispatch.full([3], 3.0)])
    assert a.grad.tolist() == [2.0, 2.0] and b.grad.tolist() == [3.0] * 3


def test_autograd_grad_returns_a_tuple_and_leaves_grad_alone(opdispatch):
    x = opdispatch.tensor([1.0, 2.0], requires_grad=True)
    unused = opdispatch.tensor([1.0], requires_grad=True)
    g = opdispatch.tensor([4.0, 5.0])
    result = opdispatch.autograd.grad(x, x, g)
    assert isinstance(result, tuple) and len(result) == 1 and result[0].tolist() == [4.0, 5.0]
    assert opdispatch.autograd.grad([x], [x, unused], [g], allow_unused=True)[1] is None
    assert x.grad is None and unused.grad is None


def test_backward_errors_in_pytorchs_words(opdispatch):
    od = opdispatch
    x = od.ones(2, 2, requires_grad=True)
    with pytest.raises(od.Error, match="^grad can be implicitly created only for scalar outputs$"):
        x.backward()
    with pytest.raises(od.Error, match="^element 0 of tensors does not require grad and does not have a grad_fn$"):
        od.ones(1).backward()
    with pytest.raises(od.Error, match="element 1 of tensors does not require grad"):
        od.autograd.backward([x, od.ones(2)], [od.ones(2, 2), od.ones(2)])
    with pytest.raises(od.Error, match=r"Mismatch in shape: grad_output\[0\] has a shape of \[3\] and output\[0\] has"):
        x.backward(od.ones(3))
    with pytest.raises(od.Error, match="grad_tensors should have the same length as tensors"):
        od.autograd.backward([x], [od.ones(2, 2), od.ones(2, 2)])
    assert x.grad is None


def test_grad_errors_in_pytorchs_words(opdispatch):
    od = opdispatch
    x, other = od.ones(2, requires_grad=True), od.ones(2, requires_grad=True)
    unused = ("^One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True "
              "if this is the desired behavior.$")
    with pytest.raises(od.Error, match=unused):
        od.autograd.grad(x, [x, other], od.ones(2))
    with pytest.raises(od.Error, match="^One of the differentiated Tensors does not require grad$"):
        od.autograd.grad(x, od.ones(2), od.ones(2))
    with pytest.raises(od.Error, match="grad can be implicitly created only for scalar outputs"):
        od.autograd.grad(x, x)
    with pytest.raises(TypeError, match="inputs must be Tensors or None, not str"):
        od.autograd.grad(x, ["x"], od.ones(2))


# --- grad mode ---------------------------------------------------------------------------------


def test_no_grad_and_enable_grad_nest_as_context_managers(opdispatch):
    od = opdispatch
    assert od.is_grad_enabled() and od.autograd.is_grad_enabled is od.is_grad_enabled
    with od.no_grad():
        assert not od.is_grad_enabled()
        with od.enable_grad():
            assert od.is_grad_enabled()
        assert not od.is_grad_enabled()
    assert od.is_grad_enabled()
    with pytest.raises(KeyError), od.no_grad():
        raise KeyError  # restored on the way out of an exception too
    assert od.is_grad_enabled()


def test_grad_mode_decorators(opdispatch):
    od = opdispatch

    @od.no_grad()
    def called():
        return od.is_grad_enabled()

    @od.no_grad
    def bare():
        """Documented."""
        return od.is_grad_enabled()

    @od.enable_grad()
    def enabled():
        return od.is_grad_enabled()

    @od.no_grad()
    def steps():
        yield od.is_grad_enabled()
        yield od.is_grad_enabled()

    assert (called(), bare(), bare.__doc__, bare.__name__) == (False, False, "Documented.", "bare")
    with od.no_grad():
        assert enabled() and not od.is_grad_enabled()
    generator = steps()
    assert next(generator) is False and od.is_grad_enabled()  # off only while the generator runs
    assert next(generator) is False and od.is_grad_enabled()
    assert od.is_grad_enabled()


def test_set_grad_enabled(opdispatch):
    od = opdispatch
    od.set_grad_enabled(False)  # takes effect at once, as a call
    assert not od.is_grad_enabled()
    od.set_grad_enabled(True)
    with od.set_grad_enabled(False):
        assert not od.is_grad_enabled()
        with od.set_grad_enabled(True):
            assert od.is_grad_enabled()
        assert not od.is_grad_enabled()
    assert od.is_grad_enabled()

    @od.set_grad_enabled(False)
    def off():
        return od.is_grad_enabled()

    assert od.is_grad_enabled()  # decorating does not change the mode
    assert off() is False and od.is_grad_enabled()


def test_grad_mode_is_thread_local(opdispatch):
    od = opdispatch
    seen = {}

    def other_thread():
        seen["initial"] = od.is_grad_enabled()
        od.set_grad_enabled(False)
        seen["set"] = od.is_grad_enabled()

    with od.no_grad():
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
        assert not od.is_grad_enabled()
    assert seen == {"initial": True, "set": False} and od.is_grad_enabled()


# --- printing ----------------------------------------------------------------------------------


def test_repr_of_a_leaf_that_requires_grad(opdispatch):
    od = opdispatch
    assert repr(od.tensor([1.0, 2.0], requires_grad=True)) == "tensor([1., 2.], requires_grad=True)"
    assert repr(od.zeros(2, dtype=od.float64, requires_grad=True)) == \
        "tensor([0., 0.], dtype=float64, requires_grad=True)"
    assert repr(od.tensor([1.0, 2.0], requires_grad=True).detach()) == "tensor([1., 2.])"


# --- gradcheck's own logic (functions whose analytical side needs no operator kernels) ----------


def _float64(od, *shape):
    return od.tensor(np.random.default_rng(0).standard_normal(shape), dtype=od.float64)


def test_numerical_jacobian_of_a_known_function(opdispatch):
    from opdispatch.gradcheck import numerical_jacobian
    od = opdispatch
    base = _float64(od, 3, 4)
    before = base.numpy()
    x = base.t().requires_grad_()  # non-contiguous: elements are reached through index views
    assert not x.is_contiguous()
    (jacobian,), = numerical_jacobian(lambda a: a * a + a * 3, (x,))
    np.testing.assert_allclose(jacobian, np.diag(2 * x.numpy().reshape(-1) + 3), atol=1e-6)
    assert np.array_equal(base.numpy(), before)  # every element restored exactly
    s = _float64(od, 1)[0].requires_grad_()  # a 0-d input
    y = _float64(od, 2).requires_grad_()
    jacobians = numerical_jacobian(lambda a, b: (a * b, b.sum()), (s, y))
    np.testing.assert_allclose(jacobians[0][0], y.numpy()[None, :], atol=1e-6)          # d(a*b)/da
    np.testing.assert_allclose(jacobians[0][1], np.diag(np.full(2, s.item())), atol=1e-6)  # d(a*b)/db
    np.testing.assert_allclose(jacobians[1][0], [[0.0]], atol=1e-6)
    np.testing.assert_allclose(jacobians[1][1], [[1.0], [1.0]], atol=1e-6)


def test_gradcheck_passes_the_identity_on_any_strides(opdispatch):
    from opdispatch.gradcheck import analytical_jacobian
    od = opdispatch
    x = _float64(od, 3, 4).t().requires_grad_()
    y = _float64(od, 2).requires_grad_()
    assert od.autograd.gradcheck(lambda a: a, (x,)) is True
    assert od.autograd.gradcheck(lambda a, b: (a, b), [x, y]) is True  # blocks off the diagonal are zero
    assert od.autograd.gradcheck(lambda a, b: a, (x, y), eps=1e-3) is True
    jacobians = analytical_jacobian([y], [x, y])
    assert np.array_equal(jacobians[0][0], np.zeros((12, 2))) and np.array_equal(jacobians[0][1], np.eye(2))
    assert x.grad is None and y.grad is None


def test_gradcheck_reports_a_mismatch(opdispatch):
    od = opdispatch
    x = od.tensor([1.0, 2.0], dtype=od.float64, requires_grad=True)

    def wrong(a):  # analytically the identity, numerically (under no_grad) 2 * a
        return a if od.is_grad_enabled() else a * 2

    with pytest.raises(od.autograd.GradcheckError) as error:
        od.autograd.gradcheck(wrong, (x,))
    assert isinstance(error.value, od.Error)
    text = str(error.value)
    assert text.startswith("Jacobian mismatch for output 0 with respect to input 0,\n"
                           "numerical:tensor([[2.0000, 0.0000],")
    assert "analytical:tensor([[1., 0.],\n" in text
    assert od.autograd.gradcheck(wrong, (x,), raise_exception=False) is False
    assert od.autograd.gradcheck(wrong, (x,), atol=1.5, raise_exception=False) is True  # within tolerance
    assert x.tolist() == [1.0, 2.0]


def test_gradcheck_argument_checks(opdispatch):
    od = opdispatch
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        od.autograd.gradcheck(lambda a: a, (od.ones(2, dtype=od.float64),))
    x32 = od.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert od.autograd.gradcheck(lambda a: a, (x32,), eps=1e-2)
    assert any("Input #0 requires gradient and is not a double precision floating point" in str(w.message)
               for w in caught)
    x = od.ones(2, dtype=od.float64, requires_grad=True)
    # An output that does not require grad must not depend on the inputs.
    assert od.autograd.gradcheck(lambda a: od.ones(2, dtype=od.float64), (x,))
    with pytest.raises(od.autograd.GradcheckError, match="Numerical gradient for function expected to be zero"):
        od.autograd.gradcheck(lambda a: a.detach() * 2, (x,))
