"""Custom autograd Functions (od.autograd.Function) with PyTorch's semantics: forward/backward and
apply, the ctx (save_for_backward with the version check, needs_input_grad, mark_dirty,
mark_non_differentiable, set_materialize_grads), the setup_context style, once_differentiable,
gradcheck, hooks and nesting, the errors, and Functions under functionalization and on lazy
tensors (their operators are traced like any others)."""
import json
import subprocess
import sys
import textwrap
import weakref

import numpy as np
import pytest


@pytest.fixture(scope="module")
def fns(opdispatch):
    """A few custom Functions, made once per module."""
    od = opdispatch
    Function = od.autograd.Function

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)  # the output: backward reads it
            return y

        @staticmethod
        def backward(ctx, grad):
            y, = ctx.saved_tensors
            return grad * y

    class ScaleShift(Function):
        """a * scale + b with a Python float and a keyword: non-tensor arguments pass through."""

        @staticmethod
        def forward(ctx, a, scale, b, *, shift=0.0):
            ctx.scale = scale
            return a * scale + b + shift

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.scale, None, grad

    class MulAndSum(Function):
        """Two outputs from two inputs: x * w and (x * w).sum()."""

        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            product = x * w
            return product, product.sum()

        @staticmethod
        def backward(ctx, grad_product, grad_sum):
            x, w = ctx.saved_tensors
            grad = grad_product + grad_sum
            return grad * w, grad * x

    class AddOneInPlace(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad

    class SortWithIndices(Function):
        """Values (differentiable) and indices (int64: no gradient)."""

        @staticmethod
        def forward(ctx, x):
            order = np.argsort(x.numpy(), kind="stable")
            ctx.order = order
            return od.tensor(x.numpy()[order], dtype=x.dtype), od.tensor(order.tolist(), dtype=od.int64)

        @staticmethod
        def backward(ctx, grad_values, grad_indices):
            assert grad_indices is None or grad_indices.dtype is od.int64
            result = np.zeros(len(ctx.order))
            result[ctx.order] = grad_values.numpy()
            return od.tensor(result.tolist(), dtype=grad_values.dtype)

    class Names:
        pass

    names = Names()
    for cls in (Exp, ScaleShift, MulAndSum, AddOneInPlace, SortWithIndices):
        setattr(names, cls.__name__, cls)
    return names


def _f64(od, *shape, requires_grad=True):
    # Seeded and small: exp(exp(exp(x))) of the nested test overflows for x above ~1.9.
    values = np.random.default_rng(len(shape) * 31 + sum(shape)).standard_normal(shape) * 0.5
    return od.tensor(values, dtype=od.float64, requires_grad=requires_grad)


# ----- forward, backward, apply --------------------------------------------------------------------

def test_outputs_get_a_node_named_after_the_class_and_backward_uses_the_saved_output(opdispatch, fns):
    od = opdispatch
    x = od.tensor([0.0, 1.0, 2.0], requires_grad=True)
    y = fns.Exp.apply(x)
    assert y.grad_fn.name() == "ExpBackward" and not y.is_leaf and y.requires_grad
    assert repr(y).endswith("grad_fn=<ExpBackward>)")
    assert y.grad_fn.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"
    np.testing.assert_allclose(y.grad_fn.saved_tensors[0].numpy(), np.exp([0.0, 1.0, 2.0]), rtol=1e-6)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.0, 1.0, 2.0]), rtol=1e-6)


def test_gradcheck_of_custom_functions(opdispatch, fns):
    od = opdispatch
    assert od.autograd.gradcheck(fns.Exp.apply, (_f64(od, 3, 2),))
    assert od.autograd.gradcheck(lambda a, b: fns.ScaleShift.apply(a, 2.5, b, shift=1.0), (_f64(od, 4), _f64(od, 4)))
    assert od.autograd.gradcheck(fns.MulAndSum.apply, (_f64(od, 2, 3), _f64(od, 2, 3)))
    assert od.autograd.gradcheck(lambda a: fns.SortWithIndices.apply(a)[0], (_f64(od, 5),))


def test_non_tensor_arguments_pass_through_and_get_no_edge(opdispatch, fns):
    od = opdispatch
    a, b = od.tensor([1.0, 2.0], requires_grad=True), od.tensor([3.0, 4.0])
    y = fns.ScaleShift.apply(a, 3.0, b, shift=0.5)
    assert y.tolist() == [6.5, 10.5]
    # One edge per tensor input; b does not require grad: its edge is empty.
    assert [None if fn is None else fn.name() for fn, _ in y.grad_fn.next_functions] == [
        "torch::autograd::AccumulateGrad", None]
    assert y.grad_fn.needs_input_grad == (True, False, False)
    y.sum().backward()
    assert a.grad.tolist() == [3.0, 3.0]


def test_needs_input_grad_says_which_inputs_require_grad(opdispatch):
    od = opdispatch
    seen = []

    class Record(od.autograd.Function):
        @staticmethod
        def forward(ctx, x, n, w):
            seen.append(("forward", ctx.needs_input_grad, od.is_grad_enabled()))
            return x * w * n

        @staticmethod
        def backward(ctx, grad):
            seen.append(("backward", ctx.needs_input_grad))
            return grad if ctx.needs_input_grad[0] else None, None, grad if ctx.needs_input_grad[2] else None

    x, w = od.tensor([1.0, 2.0], requires_grad=True), od.tensor([3.0, 4.0])
    Record.apply(x, 2, w).sum().backward()
    assert seen == [("forward", (True, False, False), False), ("backward", (True, False, False))]


def test_without_grad_mode_or_inputs_that_require_grad_no_node_is_made(opdispatch, fns):
    od = opdispatch
    assert fns.Exp.apply(od.tensor([1.0])).grad_fn is None
    x = od.tensor([1.0], requires_grad=True)
    with od.no_grad():
        y = fns.Exp.apply(x)
    assert y.grad_fn is None and not y.requires_grad


def test_an_input_returned_as_it_is_becomes_a_new_alias_with_the_node(opdispatch):
    od = opdispatch

    class Identity(od.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    x = od.tensor([1.0, 2.0], requires_grad=True)
    y = Identity.apply(x)
    assert y is not x and y.grad_fn.name() == "IdentityBackward" and x.is_leaf
    assert y.is_alias_of(x)
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_setup_context_style(opdispatch):
    od = opdispatch

    class Cube(od.autograd.Function):
        @staticmethod
        def forward(x, power=3):
            return x ** power

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, power = inputs  # the default is bound too, as in PyTorch
            ctx.save_for_backward(x)
            ctx.power = power

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * ctx.power * x ** (ctx.power - 1), None

    x = _f64(od, 4)
    assert od.autograd.gradcheck(Cube.apply, (x,))
    assert od.autograd.gradcheck(lambda t: Cube.apply(t, power=2), (x,))


def test_the_ctx_lives_as_long_as_the_graph(opdispatch, fns):
    od = opdispatch
    contexts = []

    class Probe(od.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            contexts.append(weakref.ref(ctx))
            return fns.Exp.forward(ctx, x)  # saves its output: no cycle through the node

        backward = fns.Exp.backward

    x = od.tensor([1.0, 2.0], requires_grad=True)
    y = Probe.apply(x)
    assert contexts[0]() is not None
    del y
    assert contexts[0]() is None
    y = Probe.apply(x)
    y.sum().backward()
    del y
    assert contexts[1]() is None


# ----- ctx -----------------------------------------------------------------------------------------

def test_a_saved_tensor_changed_in_place_raises_the_version_error(opdispatch, fns):
    od = opdispatch
    x = od.tensor([1.0, 2.0], requires_grad=True)
    y = fns.Exp.apply(x)
    with od.no_grad():
        y.mul_(2)
    with pytest.raises(od.Error, match=r"one of the variables needed for gradient computation has been modified by "
                                       r"an inplace operation: \[float32 tensor \[2\]\], which is output 0 of "
                                       r"ExpBackward, is at version 1; expected version 0 instead"):
        y.sum().backward()


def test_saved_tensors_are_freed_after_backward_unless_retain_graph(opdispatch, fns):
    od = opdispatch
    x = od.tensor([1.0, 2.0], requires_grad=True)
    y = fns.Exp.apply(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]), rtol=1e-6)
    with pytest.raises(od.Error, match="Trying to backward through the graph a second time"):
        y.backward()


def test_mark_dirty_rebases_the_inputs_history_onto_the_node(opdispatch, fns):
    od = opdispatch
    x = od.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    z = fns.AddOneInPlace.apply(y)
    assert z is y and y.grad_fn.name() == "AddOneInPlaceBackward" and y.tolist() == [4.0, 7.0]
    assert y.grad_fn.next_functions[0][0].name() == "MulBackward1"
    (y * y).sum().backward()
    assert x.grad.tolist() == [24.0, 42.0]  # d/dx (3x + 1)^2


def test_mark_dirty_on_a_view_gives_the_base_copy_slices(opdispatch, fns):
    od = opdispatch
    x = od.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    base = x * 1
    row = base[0]
    fns.AddOneInPlace.apply(row)
    assert base.grad_fn.name() == "CopySlices" and base.tolist() == [[2.0, 3.0], [3.0, 4.0]]
    (base * base).sum().backward()
    assert x.grad.tolist() == [[4.0, 6.0], [6.0, 8.0]]


def test_mark_dirty_on_a_leaf_that_requires_grad_raises(opdispatch, fns):
    od = opdispatch
    with pytest.raises(od.Error, match="a leaf Variable that requires grad is being used in an in-place operation"):
        fns.AddOneInPlace.apply(od.tensor([1.0], requires_grad=True))


def test_dirty_tensors_must_be_returned(opdispatch):
    od = opdispatch

    class Forgets(od.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad

    with pytest.raises(od.Error, match="Some elements marked as dirty during the forward method were not returned"):
        Forgets.apply(od.tensor([1.0], requires_grad=True) * 1)


def test_mark_non_differentiable_and_integer_outputs_get_no_history(opdispatch, fns):
    od = opdispatch

    class Twice(od.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            doubled, mask = x * 2, x * 0 + 1
            ctx.mark_non_differentiable(mask)
            return doubled, mask

        @staticmethod
        def backward(ctx, grad, grad_mask):
            assert grad_mask.tolist() == [0.0, 0.0]  # materialized
            return grad * 2

    x = od.tensor([1.0, 2.0], requires_grad=True)
    doubled, mask = Twice.apply(x)
    assert doubled.requires_grad and not mask.requires_grad and mask.grad_fn is None
    doubled.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    values, indices = fns.SortWithIndices.apply(od.tensor([3.0, 1.0, 2.0], requires_grad=True))
    assert values.requires_grad and not indices.requires_grad and indices.tolist() == [1, 2, 0]


def test_materialize_grads_gives_zeros_unless_turned_off(opdispatch):
    od = opdispatch
    seen = []

    def make(materialize):
        class Pair(od.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(materialize)
                return x * 1, x * 2

            @staticmethod
            def backward(ctx, grad_a, grad_b):
                seen.append(None if grad_b is None else grad_b.tolist())
                return grad_a if grad_b is None else grad_a + 2 * grad_b

        return Pair

    for materialize in (True, False):
        x = od.tensor([1.0, 2.0], requires_grad=True)
        a, _ = make(materialize).apply(x)
        a.sum().backward()  # no gradient reaches the second output
        assert x.grad.tolist() == [1.0, 1.0]
    assert seen == [[0.0, 0.0], None]


def test_arbitrary_attributes_and_saving_none(opdispatch):
    od = opdispatch

    class Keep(od.autograd.Function):
        @staticmethod
        def forward(ctx, x, mode):
            ctx.mode, ctx.shape = mode, tuple(x.shape)
            ctx.save_for_backward(None, x)
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            nothing, x = ctx.saved_tensors
            assert nothing is None and ctx.mode == "keep" and ctx.shape == (2,)
            return grad + x, None

    x = od.tensor([1.0, 2.0], requires_grad=True)
    Keep.apply(x, "keep").sum().backward()
    assert x.grad.tolist() == [2.0, 3.0]


# ----- with the rest of autograd -------------------------------------------------------------------

def test_autograd_grad_hooks_and_node_hooks(opdispatch, fns):
    od = opdispatch
    x = od.tensor([1.0, 2.0], requires_grad=True)
    w = od.tensor([3.0, 4.0], requires_grad=True)
    product, total = fns.MulAndSum.apply(x, w)
    calls = []
    product.register_hook(lambda g: calls.append(("tensor", g.tolist())) or g * 10)
    product.grad_fn.register_prehook(lambda grads: calls.append(("pre", len(grads))))
    product.grad_fn.register_hook(lambda grads_in, grads_out: calls.append(("post", [g.tolist() for g in grads_in])))
    gx, gw = od.autograd.grad([product.sum()], [x, w])
    assert gx.tolist() == [30.0, 40.0] and gw.tolist() == [10.0, 20.0]
    assert calls == [("tensor", [1.0, 1.0]), ("pre", 2), ("post", [[30.0, 40.0], [10.0, 20.0]])]
    assert x.grad is None


def test_nested_functions_in_forward_and_backward(opdispatch, fns):
    od = opdispatch

    class ExpTwice(od.autograd.Function):
        """exp(exp(x)): forward and backward call another Function and operators."""

        @staticmethod
        def forward(ctx, x):
            inner = fns.Exp.apply(x)
            assert inner.grad_fn is None  # forward runs under no_grad
            ctx.save_for_backward(inner)
            return fns.Exp.apply(inner)

        @staticmethod
        def backward(ctx, grad):
            inner, = ctx.saved_tensors
            return grad * fns.Exp.apply(inner) * inner

    x = _f64(od, 3)
    y = ExpTwice.apply(fns.Exp.apply(x))
    assert y.grad_fn.name() == "ExpTwiceBackward"
    assert y.grad_fn.next_functions[0][0].name() == "ExpBackward"
    assert od.autograd.gradcheck(lambda t: ExpTwice.apply(fns.Exp.apply(t)), (x,))


def test_once_differentiable_runs_backward_without_grad(opdispatch):
    od = opdispatch
    from opdispatch.autograd.function import once_differentiable  # noqa: PLC0415 - PyTorch's spelling
    assert once_differentiable is od.autograd.once_differentiable
    seen = []

    class Square(od.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            seen.append(od.is_grad_enabled())
            return grad * 2 * x

    x = _f64(od, 3)
    assert od.autograd.gradcheck(Square.apply, (x,))
    assert seen and not any(seen)


# ----- errors --------------------------------------------------------------------------------------

def test_backward_must_return_one_gradient_per_input(opdispatch):
    od = opdispatch

    def make(result):
        class Wrong(od.autograd.Function):
            @staticmethod
            def forward(ctx, x, n):
                return x * n

            @staticmethod
            def backward(ctx, grad):
                return result(grad)

        return Wrong

    x = od.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(od.Error, match=r"function WrongBackward returned an incorrect number of gradients "
                                       r"\(expected 2, got 1\)"):
        make(lambda g: g).apply(x, 2).sum().backward()
    with pytest.raises(od.Error, match="function WrongBackward returned a gradient different than None at position 2, "
                                       "but the corresponding forward input was not a Variable"):
        make(lambda g: (g, g)).apply(x, 2).sum().backward()
    make(lambda g: (g, None, None)).apply(x, 2).sum().backward()  # trailing Nones are allowed
    assert x.grad.tolist() == [1.0, 1.0]
    with pytest.raises(od.Error, match=r"Function WrongBackward returned an invalid gradient at index 0 - got \[3\] "
                                       r"but expected shape compatible with \[2\]"):
        make(lambda g: (od.ones(3), None)).apply(x, 2).sum().backward()
    with pytest.raises(TypeError, match="returned a gradient of type int, but expected a Tensor or None"):
        make(lambda g: (1, None)).apply(x, 2).sum().backward()


def test_an_exception_in_backward_reaches_the_caller(opdispatch):
    od = opdispatch

    class Fails(od.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            raise ValueError("no gradient today")

    with pytest.raises(ValueError, match="no gradient today"):
        Fails.apply(od.tensor([1.0], requires_grad=True)).sum().backward()


def test_missing_methods_and_legacy_use_raise(opdispatch):
    od = opdispatch

    class NoBackward(od.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

    class NoForward(od.autograd.Function):
        pass

    with pytest.raises(NotImplementedError, match="You must implement either the backward or vjp method"):
        NoBackward.apply(od.tensor([1.0], requires_grad=True)).sum().backward()
    with pytest.raises(NotImplementedError, match="You must implement the forward function"):
        NoForward.apply(od.tensor([1.0]))
    with pytest.raises(od.Error, match="Legacy autograd function with non-static forward method is deprecated"):
        NoBackward()(od.tensor([1.0]))

    class SavesAnInt(od.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x

    with pytest.raises(TypeError, match="save_for_backward can only save variables, but argument 1 is of type int"):
        SavesAnInt.apply(od.tensor([1.0]))


# ----- functionalization and lazy tensors ----------------------------------------------------------

def test_a_functions_forward_and_backward_are_functionalized_like_any_operators(opdispatch):
    od = opdispatch

    class AddToRow(od.autograd.Function):
        """Writes through a view in forward and backward: both reach the layer below as copies."""

        @staticmethod
        def forward(ctx, x):
            y = x.clone()
            y[0].add_(1)
            return y

        @staticmethod
        def backward(ctx, grad):
            result = grad.clone()
            result.t()[0].mul_(1)  # a view mutated in place, a no-op on the values
            return result

    def program(x):
        y = AddToRow.apply(x)
        return (y, *od.autograd.grad([(y * y).sum()], [x]))

    a = np.arange(6.0).reshape(2, 3)
    (y, gx), calls = od.functionalization.trace(program, od.tensor(a, requires_grad=True))
    expected = a.copy()
    expected[0] += 1
    np.testing.assert_allclose(y.numpy(), expected)
    np.testing.assert_allclose(gx.numpy(), 2 * expected)
    assert "aten::select_scatter.default" in calls and "aten::ones_like.default" in calls
    for call in calls:
        name = call.split("::", 1)[1].split(".", 1)[0]
        assert not name.endswith("_") and name not in {"view", "select", "t", "transpose"}, call
    backward = calls[calls.index("aten::ones_like.default"):]
    assert any(c.startswith("aten::t_copy") for c in backward), backward  # the Function's backward ran under the mode


LAZY_PROGRAM = textwrap.dedent("""
    import json
    import opdispatch as od
    import opdispatch.lazy as lazy

    class Exp(od.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            y, = ctx.saved_tensors
            return grad * y

    x = od.tensor([1.0, 2.0]).to("lazy").requires_grad_()
    y = Exp.apply(x * 2)
    y.sum().backward()
    ir = lazy.ir_text(x.grad)
    lazy.mark_step()
    print(json.dumps({"name": y.grad_fn.name(), "device": y.device, "ir": ir, "grad": x.grad.to("cpu").tolist(),
                      "fallbacks": lazy.metrics()["fallbacks"]}))
""")


def test_a_function_on_lazy_tensors_records_its_forward_and_backward_as_ir(lazy_python):
    import os  # noqa: PLC0415
    run = subprocess.run([sys.executable, "-c", LAZY_PROGRAM], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONPATH=lazy_python))
    assert run.returncode == 0, run.stderr[-4000:]
    facts = json.loads(run.stdout.splitlines()[-1])
    assert facts["name"] == "ExpBackward" and facts["device"] == "lazy" and facts["fallbacks"] == {}
    ops = [line.split(" = ", 1)[1].split("(", 1)[0] for line in facts["ir"].splitlines() if " = " in line]
    assert ops.count("aten::exp") == 1 and "aten::mul.Tensor" in ops  # forward's exp, backward's grad * y
    np.testing.assert_allclose(facts["grad"], 2 * np.exp([2.0, 4.0]), rtol=1e-5)


# --- second order ----------------------------------------------------------------------------------


def test_a_function_saving_its_output_is_differentiated_twice(opdispatch):
    od = opdispatch

    class Exp(od.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors  # under create_graph: y with this node as its grad_fn
            return grad * y

    x = od.tensor([0.5, -1.0], dtype=od.float64, requires_grad=True)
    assert od.autograd.gradgradcheck(Exp.apply, (x,))


def test_once_differentiable_raises_when_its_result_is_differentiated(opdispatch):
    od = opdispatch
    from opdispatch.autograd.function import once_differentiable

    class Square(od.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = od.tensor([1.0, 2.0], dtype=od.float64, requires_grad=True)
    v = od.tensor([1.0, 1.0], dtype=od.float64, requires_grad=True)  # a grad_output with history
    (g,) = od.autograd.grad(Square.apply(x), [x], v, create_graph=True)
    assert g.detach().numpy().tolist() == [2.0, 4.0]
    with pytest.raises(od.Error, match="trying to differentiate twice a function that was marked with "
                                       "@once_differentiable"):
        g.sum().backward()  # reaches the node that stands for the backward's own derivative


def test_a_view_returned_by_forward_refuses_in_place_changes(opdispatch):
    # Changing it in place would route the gradient around the custom backward: PyTorch refuses it.
    od = opdispatch

    class First(od.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[0]

        @staticmethod
        def backward(ctx, grad):
            return grad.expand(3) * od.tensor([1.0, 0.0, 0.0], dtype=od.float64)

    x = od.tensor([1.0, 2.0, 3.0], dtype=od.float64, requires_grad=True)
    y = First.apply(x * 1)
    assert y.grad_fn.name() == "FirstBackward"
    with pytest.raises(od.Error, match="Output 0 of FirstBackward is a view and is being modified inplace. This view "
                                       "was created inside a custom Function"):
        y.mul_(2)
    First.apply(x * 1).backward()
    assert x.grad.tolist() == [1.0, 0.0, 0.0]
