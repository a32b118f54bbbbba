"""opdispatch.autograd.function: custom differentiable operations, PyTorch's
torch.autograd.Function.

    class Exp(od.autograd.Function):
        @staticmethod
        def forward(ctx, x):               # runs under no_grad
            y = x.exp()
            ctx.save_for_backward(y)
            return y
        @staticmethod
        def backward(ctx, grad):           # one gradient per output; one result per input
            y, = ctx.saved_tensors
            return grad * y
    y = Exp.apply(x)                       # y.grad_fn.name() == "ExpBackward"

Or forward(*args) without ctx plus setup_context(ctx, inputs, output). The ctx offers
save_for_backward / saved_tensors (version-checked, freed after backward unless retain_graph),
needs_input_grad, mark_dirty (in-place forward), mark_non_differentiable, set_materialize_grads
and any attribute. Each apply with grad enabled and an input that requires grad makes one
_C._FunctionNode (function_bindings.cpp); its apply calls back into the ctx here.
"""
from __future__ import annotations

import functools
import inspect

from opdispatch import _C
from opdispatch.grad_mode import is_grad_enabled, no_grad

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx:
    """What forward (or setup_context) and backward share for one apply call."""

    def __init__(self, function: type, input_is_tensor: tuple, needs_input_grad: tuple):
        self._function = function
        self._name = function.__name__ + "Backward"
        self._input_is_tensor = input_is_tensor
        self.needs_input_grad = needs_input_grad
        self._to_save = ()
        self._saved = None  # the _C._SavedVariables, made once the outputs have their history
        self._running = None  # the node while its backward runs (saved outputs unpack with it)
        self._dirty = ()
        self._non_differentiable = ()
        self._materialize_grads = True

    def save_for_backward(self, *tensors) -> None:
        """Keeps tensors (or None) for backward; ctx.saved_tensors gives them back, raising if
        one was changed in place since."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, _C.Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self._to_save = tensors

    @property
    def saved_tensors(self) -> tuple:
        if self._saved is None:  # still in forward: what was given
            return tuple(self._to_save)
        return tuple(saved.unpack(self._name, self._running) for saved in self._saved)

    def mark_dirty(self, *tensors) -> None:
        """The forward changed these inputs in place and returns them: they get this node as history."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """These outputs do not require grad; backward still gets a gradient (zeros) for each."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """True (the default): backward gets zeros for outputs that received no gradient; False: None."""
        self._materialize_grads = bool(value)

    def _pack(self, node) -> None:
        self._saved = tuple(_C._SavedVariable(t, node) for t in self._to_save)
        self._to_save = ()

    def _release_saved(self) -> None:
        for saved in self._saved or ():
            saved.reset()

    def _run_backward(self, grads: tuple, node) -> list:
        """The user's backward on the gradients of the outputs; its results checked and reduced to
        those of the tensor inputs (the node's edges). `node` is held only while backward runs
        (the node holds this ctx)."""
        self._running = node
        try:
            result = _backward_of(self._function)(self, *grads)
        finally:
            self._running = None
        if not isinstance(result, tuple):
            result = (result,)
        expected = len(self._input_is_tensor)
        if len(result) > expected and all(r is None for r in result[expected:]):
            result = result[:expected]  # trailing Nones are allowed, as in PyTorch
        if len(result) != expected:
            raise _C.Error(f"function {self._name} returned an incorrect number of gradients "
                           f"(expected {expected}, got {len(result)})")
        grads_for_tensors = []
        for i, (is_tensor, grad) in enumerate(zip(self._input_is_tensor, result)):
            if is_tensor:
                grads_for_tensors.append(grad)
            elif grad is not None:
                raise _C.Error(f"function {self._name} returned a gradient different than None at position {i + 1}, "
                               "but the corresponding forward input was not a Variable")
        return grads_for_tensors


class Function:
    """Subclass with static forward and backward (and optionally setup_context); call apply."""

    def __call__(self, *args, **kwargs):
        raise _C.Error("Legacy autograd function with non-static forward method is deprecated. Please use new-style "
                       "autograd function with static forward method. (Example: "
                       "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @classmethod
    def apply(cls, *args, **kwargs):
        with_setup_context = cls.setup_context is not Function.setup_context
        inputs, kwargs = _bind(cls.forward, args, kwargs, with_ctx=not with_setup_context)
        input_is_tensor = tuple(isinstance(a, _C.Tensor) for a in inputs)
        needs_input_grad = tuple(is_tensor and a.requires_grad for is_tensor, a in zip(input_is_tensor, inputs))
        ctx = FunctionCtx(cls, input_is_tensor, needs_input_grad)
        with no_grad():
            if with_setup_context:
                output = cls.forward(*inputs, **kwargs)
                cls.setup_context(ctx, inputs, output)
            else:
                output = cls.forward(ctx, *inputs, **kwargs)
        outputs = list(output) if isinstance(output, tuple) else [output]
        node = None
        if is_grad_enabled() and any(needs_input_grad):
            tensors = [a for a in inputs if isinstance(a, _C.Tensor)]
            node = _C._FunctionNode(ctx._name, tensors, ctx)
            outputs = _C._function_wrap_outputs(node, tensors, outputs, list(ctx._dirty),
                                                list(ctx._non_differentiable))
        ctx._pack(node)
        return tuple(outputs) if isinstance(output, tuple) else outputs[0]


def _bind(forward, args: tuple, kwargs: dict, with_ctx: bool) -> tuple[tuple, dict]:
    """The forward's inputs: the positional arguments, plus keyword arguments that name positional
    parameters (as PyTorch binds them; with setup_context, defaults too). The rest pass through."""
    if not kwargs and with_ctx:
        return args, kwargs
    try:
        signature = inspect.signature(forward)
    except (TypeError, ValueError):
        return args, kwargs
    bound = signature.bind(None, *args, **kwargs) if with_ctx else signature.bind(*args, **kwargs)
    if not with_ctx:
        bound.apply_defaults()
    return bound.args[1:] if with_ctx else bound.args, bound.kwargs


def _backward_of(function: type):
    backward_overridden = function.backward is not Function.backward
    vjp_overridden = function.vjp is not Function.vjp
    if backward_overridden and vjp_overridden:
        raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom autograd.Function is not allowed. "
                           "You should only implement one of them.")
    return function.vjp if vjp_overridden else function.backward


class _DelayedError(Function):
    """Passes its inputs through; differentiating it raises (once_differentiable under create_graph)."""

    @staticmethod
    def forward(ctx, message, *tensors):
        ctx.message = message
        return tuple(t.detach() if isinstance(t, _C.Tensor) else t for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        raise _C.Error(ctx.message)


def once_differentiable(backward):
    """For a backward that is not itself differentiable: it runs under no_grad, and should its
    results be differentiated (a graph recorded through them), that raises."""

    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        with no_grad():
            results = backward(ctx, *grads)
        if not is_grad_enabled() or not any(isinstance(g, _C.Tensor) and g.requires_grad for g in grads):
            return results
        single = not isinstance(results, tuple)
        # The results were computed under no_grad: aliases that require grad give the erring node
        # its edges, so differentiating through them reaches it (PyTorch does the same).
        aliases = [r.detach().requires_grad_() if isinstance(r, _C.Tensor) and r.dtype.is_floating_point else r
                   for r in ((results,) if single else results)]
        wrapped = _DelayedError.apply("trying to differentiate twice a function that was marked with "
                                      "@once_differentiable", *aliases)
        return wrapped[0] if single else wrapped

    return wrapper
