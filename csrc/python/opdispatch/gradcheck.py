"""opdispatch.autograd.gradcheck: checks the gradients backward computes against finite
differences, as torch.autograd.gradcheck does; gradgradcheck does the same for the gradients
of those gradients (a backward with create_graph=True), as torch.autograd.gradgradcheck does.

    x = opdispatch.randn(3, 4, dtype=opdispatch.float64, requires_grad=True)
    opdispatch.autograd.gradcheck(lambda a: (a * a).sum(), (x,))    # True, or GradcheckError

For every input that requires grad and every output that does, two Jacobians of shape
(input.numel(), output.numel()), element [j, k] = d output[k] / d input[j] in row-major order:
the numerical one by central differences (each input element moved by -eps and +eps in place,
the function evaluated under no_grad), and the analytical one a column at a time: one
vector-Jacobian product per output element, through opdispatch.autograd.grad with a one-hot
grad_output (computed first: the in-place changes bump the inputs' version counters, which
the graph's saved tensors check). They must agree within atol + rtol * |numerical|. Inputs should be float64 (a
warning says so otherwise, as PyTorch's does); any strides work: elements are reached by
indexing, never by a flat view.
"""
from __future__ import annotations

import warnings

import numpy as np

from opdispatch import _C
from opdispatch.creation import move_to, tensor
from opdispatch.grad_mode import enable_grad, no_grad

Jacobians = list  # [output][input] -> np.ndarray of shape (input.numel(), output.numel())


class GradcheckError(_C.Error):
    """gradcheck found the analytical and numerical gradients to differ (an opdispatch.Error)."""


def _as_tuple(value) -> tuple:
    return value if isinstance(value, tuple) else tuple(value) if isinstance(value, list) else (value,)


def _values(t: _C.Tensor) -> np.ndarray:
    """t's values, flattened in row-major order, as float64."""
    return (t if t.device == "cpu" else move_to(t, "cpu")).numpy().astype(np.float64).reshape(-1)


def _differentiable(inputs: tuple) -> list[_C.Tensor]:
    return [t for t in inputs if isinstance(t, _C.Tensor) and t.requires_grad]


def numerical_jacobian(func, inputs, eps: float = 1e-6, output_indices=None) -> Jacobians:
    """Central differences (f(x + eps) - f(x - eps)) / (2 eps), per element of each input that
    requires grad, for the outputs at `output_indices` (all tensor outputs when None). Each
    element is changed in place through an index view and restored exactly afterwards."""
    inputs = _as_tuple(inputs)
    wrt = _differentiable(inputs)
    with no_grad():
        outputs = _as_tuple(func(*inputs))
        if output_indices is None:
            output_indices = [i for i, o in enumerate(outputs) if isinstance(o, _C.Tensor)]
        jacobians = [[np.zeros((x.numel(), outputs[o].numel())) for x in wrt] for o in output_indices]

        def evaluate() -> list[np.ndarray]:
            results = _as_tuple(func(*inputs))
            return [_values(results[o]) for o in output_indices]

        for j, x in enumerate(wrt):
            for k in range(x.numel()):
                element = x[tuple(int(i) for i in np.unravel_index(k, x.shape))]  # a 0-d view
                original = element.item()
                element.fill_(original - eps)
                minus = evaluate()
                element.fill_(original + eps)
                plus = evaluate()
                element.fill_(original)
                for o in range(len(output_indices)):
                    jacobians[o][j][k, :] = (plus[o] - minus[o]) / (2 * eps)
    return jacobians


def _one_hot(output: _C.Tensor, k: int) -> _C.Tensor:
    values = np.zeros(output.numel())
    values[k] = 1
    result = tensor(values.reshape(output.shape), dtype=output.dtype)
    return result if output.device == "cpu" else move_to(result, output.device)


def analytical_jacobian(outputs, inputs) -> Jacobians:
    """One vector-Jacobian product per element of each output (autograd.grad with a one-hot
    grad_output, the graph retained): column k of J[output][input]. An input the output does not
    reach gets zeros. Raises GradcheckError when a gradient's size or dtype is not its input's."""
    outputs, wrt = _as_tuple(outputs), list(_as_tuple(inputs))
    jacobians = [[np.zeros((x.numel(), out.numel())) for x in wrt] for out in outputs]
    for o, out in enumerate(outputs):
        for k in range(out.numel()):
            grads = _C._autograd_grad([out], wrt, [_one_hot(out, k)], True, True)
            for j, (x, g) in enumerate(zip(wrt, grads)):
                if g is None:
                    continue
                if g.shape != x.shape:
                    raise GradcheckError(f"Analytical gradient has incorrect size: {g.shape} for input {j} of "
                                         f"size {x.shape}")
                if g.dtype is not x.dtype:
                    raise GradcheckError(f"Gradient has dtype mismatch: {g.dtype.name} for input {j} of dtype "
                                         f"{x.dtype.name}")
                jacobians[o][j][:, k] = _values(g)
    return jacobians


def _show(jacobian: np.ndarray) -> str:
    return repr(tensor(jacobian, dtype=_C.float64))


def _fail(message: str, raise_exception: bool) -> bool:
    if raise_exception:
        raise GradcheckError(message)
    return False


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True) -> bool:
    """True when the gradients of func(*inputs) with respect to every input that requires grad
    match central finite differences; otherwise raises GradcheckError naming the output and input
    and showing both Jacobians (returns False when `raise_exception` is False)."""
    inputs = _as_tuple(inputs)
    wrt = _differentiable(inputs)
    if not wrt:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them "
                         "have requires_grad=True.")
    for i, t in enumerate(inputs):
        if isinstance(t, _C.Tensor) and t.requires_grad and t.dtype is not _C.float64:
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating point "
                          "or complex. ", stacklevel=2)
    outputs = _as_tuple(func(*inputs))
    indices = [i for i, o in enumerate(outputs) if isinstance(o, _C.Tensor) and o.requires_grad]
    if not indices:  # nothing to differentiate: the function must not depend on its inputs
        for per_input in numerical_jacobian(func, inputs, eps):
            for numerical in per_input:
                if not np.allclose(numerical, 0, rtol=rtol, atol=atol):
                    return _fail(f"Numerical gradient for function expected to be zero\nnumerical:{_show(numerical)}",
                                 raise_exception)
        return True
    # Analytical first: the numerical side changes the inputs in place, which bumps their version
    # counters, and the graph's saved inputs would then refuse to unpack.
    try:
        analytical = analytical_jacobian([outputs[i] for i in indices], wrt)
    except GradcheckError as error:
        return _fail(str(error), raise_exception)
    del outputs
    numerical = numerical_jacobian(func, inputs, eps, indices)
    for o, (numerical_o, analytical_o) in enumerate(zip(numerical, analytical)):
        for j, (n, a) in enumerate(zip(numerical_o, analytical_o)):
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                return _fail(f"Jacobian mismatch for output {indices[o]} with respect to input {j},\n"
                             f"numerical:{_show(n)}\nanalytical:{_show(a)}\n", raise_exception)
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  raise_exception: bool = True) -> bool:
    """gradcheck of the vector-Jacobian product of func: the function (inputs, v) ->
    autograd.grad(func(*inputs), inputs, v, create_graph=True), whose own gradients are second
    derivatives of func (and the Jacobian itself, with respect to v). `grad_outputs` are the v,
    one per output that requires grad; by default random float64 tensors, which gradcheck also
    differentiates against."""
    inputs = _as_tuple(inputs)
    wrt = _differentiable(inputs)
    outputs = _as_tuple(func(*inputs))
    indices = [i for i, o in enumerate(outputs) if isinstance(o, _C.Tensor) and o.requires_grad]
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(tensor(rng.standard_normal(outputs[i].shape), dtype=outputs[i].dtype, device=outputs[i].device,
                                    requires_grad=True)
                             for i in indices)
    grad_outputs = _as_tuple(grad_outputs)
    if len(grad_outputs) != len(indices):
        raise ValueError(f"gradgradcheck expects one grad_output per output that requires grad: got "
                         f"{len(grad_outputs)} for {len(indices)}")
    del outputs

    def vector_jacobian_product(*inputs_and_vectors):
        inner_inputs, vectors = inputs_and_vectors[:len(inputs)], inputs_and_vectors[len(inputs):]
        with enable_grad():  # gradcheck's finite differences evaluate under no_grad
            outs = _as_tuple(func(*inner_inputs))
            grads = _C._autograd_grad([outs[i] for i in indices], _differentiable(inner_inputs), list(vectors), True,
                                      True, True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(vector_jacobian_product, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
