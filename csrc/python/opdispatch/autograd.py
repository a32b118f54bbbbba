"""opdispatch.autograd: reverse-mode automatic differentiation, PyTorch's Python API over the
engine in csrc/autograd/.

    x = opdispatch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    y = (x * x).sum()              # y.grad_fn: <SumBackward0 ...>, y.grad_fn.next_functions
    y.backward()                   # x.grad == 2 * x
    opdispatch.autograd.grad([y], [x], retain_graph=True)   # (2 * x,), x.grad untouched
    opdispatch.autograd.gradcheck(lambda a: a * a, (x64,))  # True, or raises GradcheckError

Tensor attributes (bound in C++, autograd_bindings.cpp): requires_grad (settable),
requires_grad_(), grad (settable), grad_fn, is_leaf, detach(), _version; Tensor.backward is
installed from here. Grad mode (no_grad, enable_grad, set_grad_enabled) is in grad_mode.py,
custom Functions (Function, once_differentiable) in function.py.
Misuse raises opdispatch.Error in PyTorch's words.
"""
from __future__ import annotations

import sys
from collections.abc import Sequence

from opdispatch import _C
from opdispatch.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401
from opdispatch.gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: F401
from opdispatch import function  # noqa: F401 - od.autograd.function.once_differentiable, as in torch
from opdispatch.function import Function, FunctionCtx, once_differentiable  # noqa: F401

sys.modules[__name__ + ".function"] = function  # `from opdispatch.autograd.function import ...` works too

Node = _C.Node

__all__ = ["Function", "FunctionCtx", "GradcheckError", "Node", "backward", "enable_grad", "grad", "gradcheck",
           "gradgradcheck", "is_grad_enabled", "no_grad", "once_differentiable", "set_grad_enabled"]


def _as_tuple(value, what: str) -> tuple:
    """A Tensor (or None) as a one-element tuple; a sequence as a tuple."""
    if value is None or isinstance(value, _C.Tensor):
        return (value,)
    if isinstance(value, Sequence):
        return tuple(value)
    raise TypeError(f"{what} must be a Tensor or a sequence of Tensors, not {type(value).__name__}")


def _grads_for(tensors: tuple, grad_tensors, what: str) -> tuple:
    """The gradients given for `tensors` (None entries: implicit ones for one-element outputs)."""
    if grad_tensors is None:
        return (None,) * len(tensors)
    grads = _as_tuple(grad_tensors, what)
    if len(grads) != len(tensors):
        raise _C.Error(f"{what} should have the same length as {'outputs' if what == 'grad_outputs' else 'tensors'} "
                       f"(got {len(grads)} and {len(tensors)})")
    return grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph: bool = False) -> None:
    """Accumulates the gradients of `tensors` (a Tensor or a sequence) into the .grad of the leaves
    they were computed from. `grad_tensors` weights each (the gradient of some scalar with respect
    to it); None is 1 and only works for one-element tensors. Without `retain_graph` the graph's
    saved tensors are freed, so a second backward through it raises. With `create_graph` the
    backward pass records its own graph (the .grad it leaves can be differentiated again);
    `retain_graph` then defaults to True."""
    roots = _as_tuple(tensors, "tensors")
    retain = create_graph if retain_graph is None else retain_graph
    _C._autograd_backward(list(roots), list(_grads_for(roots, grad_tensors, "grad_tensors")), bool(retain),
                          bool(create_graph))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph: bool = False,
         allow_unused: bool | None = None) -> tuple:
    """The gradients of `outputs` with respect to `inputs` (each a Tensor or a sequence), as a
    tuple with one entry per input; nothing is accumulated into .grad. An input the outputs do not
    depend on raises, or gives None when `allow_unused`. With `create_graph` the gradients have
    history (Hessian-vector products, gradient penalties); `retain_graph` then defaults to True."""
    roots = _as_tuple(outputs, "outputs")
    wrt = _as_tuple(inputs, "inputs")
    grads = _grads_for(roots, grad_outputs, "grad_outputs")
    retain = create_graph if retain_graph is None else retain_graph
    return _C._autograd_grad(list(roots), list(wrt), list(grads), bool(retain), bool(allow_unused),
                             bool(create_graph))


def _tensor_backward(self, gradient=None, retain_graph=None, create_graph: bool = False) -> None:
    """Computes the gradient of this tensor with respect to the leaves of its graph and adds it to
    their .grad. `gradient` is required unless the tensor has one element."""
    backward(self, None if gradient is None else (gradient,), retain_graph, create_graph)


_tensor_backward.__name__ = "backward"
_tensor_backward.__qualname__ = "Tensor.backward"


def install_autograd(tensor_type: type) -> None:
    tensor_type.backward = _tensor_backward
