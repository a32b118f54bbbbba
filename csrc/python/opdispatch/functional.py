"""opdispatch.autograd.functional: jvp and vjp of a function of tensors, PyTorch's
torch.autograd.functional API. jvp uses forward mode (forward_ad), vjp reverse mode."""
from __future__ import annotations

from opdispatch import _C
from opdispatch import forward_ad as fwAD

__all__ = ["jvp", "vjp"]


def _tuple(value, what: str):
    """(tensors, whether the caller gave a tuple)."""
    if isinstance(value, _C.Tensor):
        return (value,), False
    if isinstance(value, (tuple, list)) and all(isinstance(v, _C.Tensor) for v in value):
        return tuple(value), True
    raise TypeError(f"The {what} given to jvp/vjp must be either a Tensor or a tuple of Tensors")


def _check_v(inputs, v, what: str):
    if len(v) != len(inputs):
        raise _C.Error(f"The given v should contain a single Tensor for each {what}, got {len(v)} for {len(inputs)}")
    for i, (x, t) in enumerate(zip(inputs, v)):
        if list(x.shape) != list(t.shape):
            raise _C.Error(f"Entry {i} in v has invalid size: should be {list(x.shape)} but got {list(t.shape)}.")


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(*inputs), J v): the outputs and the Jacobian-vector product at `inputs` along `v`
    (one tensor per input; may be omitted for a single one-element input), by forward mode."""
    del create_graph, strict  # accepted for PyTorch's signature
    inputs, tuple_in = _tuple(inputs, "inputs")
    if v is None:
        if len(inputs) != 1 or inputs[0].numel() != 1:
            raise _C.Error("The vector v can only be None if the input to the user-provided function is a single "
                           "Tensor with a single element.")
        import opdispatch as od
        v = (od.ones_like(inputs[0]),)
    else:
        v, _ = _tuple(v, "v")
    _check_v(inputs, v, "input")
    with fwAD.dual_level():
        duals = tuple(fwAD.make_dual(x.detach(), t) for x, t in zip(inputs, v))
        outputs = func(*duals)
        outs, tuple_out = _tuple(outputs, "outputs of the user-provided function")
        primals, tangents = [], []
        for o in outs:
            p, t = fwAD.unpack_dual(o)
            primals.append(p.detach())
            tangents.append(t.detach() if t is not None else _zeros_like(p))
    if tuple_out:
        return tuple(primals), tuple(tangents)
    return primals[0], tangents[0]


def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(*inputs), v^T J): the outputs and the vector-Jacobian product, by reverse mode."""
    del strict
    from opdispatch import autograd, enable_grad
    inputs, tuple_in = _tuple(inputs, "inputs")
    with enable_grad():
        leaves = tuple(x.detach().requires_grad_(True) for x in inputs)
        outputs = func(*leaves)
        outs, tuple_out = _tuple(outputs, "outputs of the user-provided function")
        if v is None:
            if len(outs) != 1 or outs[0].numel() != 1:
                raise _C.Error("The vector v can only be None if the user-provided function returns a single "
                               "Tensor with a single element.")
            v = (None,)
        else:
            v, _ = _tuple(v, "v")
            _check_v(outs, v, "output")
        diff = [(o, g) for o, g in zip(outs, v) if o.requires_grad]
        grads = (autograd.grad([o for o, _ in diff], list(leaves), [g for _, g in diff], create_graph=create_graph,
                               allow_unused=True) if diff else (None,) * len(leaves))
    grads = tuple(g if g is not None else _zeros_like(x) for g, x in zip(grads, inputs))
    outs = tuple(o.detach() for o in outs)
    return (outs if tuple_out else outs[0]), (grads if tuple_in else grads[0])


def _zeros_like(t):
    import opdispatch as od
    return od.zeros_like(t)
