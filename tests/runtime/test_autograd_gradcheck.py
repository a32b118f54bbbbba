"""gradcheck of every differentiable operator: od.autograd.gradcheck (float64, central differences)
of each function that gets a backward node from yaml/derivatives.yaml and can be called from
Python, on several shapes (0-d and empty where the operator allows them), with broadcasting
between inputs, on contiguous, transposed and sliced (strided) inputs; in-place variants run on a
clone of the input and on a view of a clone (the base then gets a CopySlices node).

The list of functions is derived from opgen's model (opgen/gen/layers/autograd_plan.py's decisions on
yaml/native_functions.yaml and yaml/derivatives.yaml), so a new formula without a case here fails
test_the_table_covers_every_differentiable_function. A function that cannot be gradchecked goes
into EXCLUDED with its reason and a check that the reason still holds.

Every case also checks that its first output's grad_fn is the function's node, so a case cannot
drift away from the function it is listed under."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
import pytest

from opgen.gen.layers.autograd_plan import AutogradKind, InplaceOrViewKind, plan_autograd
from opgen.gen.layers.python_table import python_table
from opgen.model import load_model
from opgen.model.derivatives import load_derivatives
from opgen.model.derivative_info import DEFAULT

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OPS = os.path.join(REPO_ROOT, "yaml", "native_functions.yaml")
TAGS = os.path.join(REPO_ROOT, "yaml", "tags.yaml")
DERIVATIVES = os.path.join(REPO_ROOT, "yaml", "derivatives.yaml")

# Functions PyTorch writes the Autograd kernel of by hand (torchgen's HAND_WRITTEN): the runtime's
# kernel records this node instead of the entry's generated one.
HAND_WRITTEN_NODES = {"copy_": "CopyBackwards"}


def differentiable_functions() -> dict[str, str]:
    """{function: backward node} for every function of the operator yaml that records a backward
    node (its own derivatives.yaml entry or the one it shares: add_.Tensor uses add.Tensor's) and
    that Python can call (an opdispatch function or Tensor method). out= variants refuse inputs
    that require grad and are not listed."""
    model = load_model(OPS, TAGS)
    derivatives = load_derivatives(DERIVATIVES, model)
    table = python_table(model)
    callable_ = {q for overloads in (*table.functions.values(), *table.methods.values()) for q in overloads}
    found = {}
    for d in plan_autograd(model, derivatives):
        if d.kind is AutogradKind.differentiable and d.inplace_or_view is not InplaceOrViewKind.out:
            found[d.name] = d.node
    for info in derivatives.infos:  # hand-written kernels (copy_): the plan gives them no kernel
        if info.node and info.dispatch_key == DEFAULT and info.key not in found:
            found[info.key] = HAND_WRITTEN_NODES.get(info.key, info.node)
    return {name: node for name, node in sorted(found.items()) if f"aten::{name}" in callable_}


FUNCTIONS = differentiable_functions()


# --- inputs ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class T:
    """A float64 input that requires grad: standard normal values, or uniform in [low, low + 1)."""
    shape: tuple
    low: Optional[float] = None


@dataclass(frozen=True)
class C:
    """A constant input (mask, target, weight, condition): make(od) -> tensor, never requires grad."""
    make: Callable


LAYOUTS = ("contiguous", "transposed", "sliced")


def _values(spec: T, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if spec.low is not None:
        return rng.uniform(spec.low, spec.low + 1, spec.shape)
    return rng.standard_normal(spec.shape)


def make_input(od, spec: T, seed: int, layout: str):
    """A float64 leaf of spec.shape laid out as `layout`: contiguous; transposed (the reversed
    permutation of a contiguous tensor of the reversed shape); sliced (every other element of the
    last dimension of a tensor twice as wide, so strides are not the contiguous ones)."""
    values = _values(spec, seed)
    n = len(spec.shape)
    if layout == "transposed" and n >= 2:
        order = tuple(reversed(range(n)))
        t = od.tensor(np.ascontiguousarray(values.transpose(order)), dtype=od.float64).permute(list(order))
    elif layout == "sliced" and n >= 1:
        wide = np.zeros(spec.shape[:-1] + (2 * spec.shape[-1] + 1,))
        wide[..., 1::2] = values
        t = od.tensor(wide, dtype=od.float64).slice(n - 1, 1, None, 2)
    else:
        t = od.tensor(values, dtype=od.float64)
    assert t.shape == spec.shape
    np.testing.assert_array_equal(t.numpy(), values)
    return t.requires_grad_()


def _applies(layout: str, specs) -> bool:
    """Whether `layout` changes any input (a 0-d input is only ever contiguous)."""
    if layout == "contiguous":
        return True
    need = 2 if layout == "transposed" else 1
    return any(isinstance(s, T) and len(s.shape) >= need and 0 not in s.shape for s in specs)


# --- the table -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    id: str
    fn: Callable                 # fn(od, *inputs) -> output or tuple of outputs
    specs: tuple                 # T or C per input
    node: object = True          # True: the first output's grad_fn is the function's node; a str: that node; False: unchecked
    layouts: tuple = LAYOUTS
    eps: float = 1e-6
    atol: float = 1e-5
    rtol: float = 1e-3


CASES: dict[str, list[Case]] = {}


def case(name: str, id: str, fn, *specs, **options):
    CASES.setdefault(name, []).append(Case(id, fn, specs, **options))


def aten(od, qualified: str):
    """od.ops.aten.<name>.<overload>: exactly that overload."""
    name, _, overload = qualified.partition(".")
    packet = getattr(od.ops.aten, name)
    return getattr(packet, overload or "default")


def inplace_cases(name: str, op, self_shape: tuple, *others, low=None, id: str = "", view=True):
    """Cases of in-place function `name`: op(od, self, *others) applied to a clone of a leaf, and
    to a row of a clone (the leaf then has one more leading dim of 2; the base gets CopySlices)."""
    tag = f"{id}-" if id else ""
    case(name, f"{tag}clone{list(self_shape)}",
         lambda od, x, *rest: op(od, x.clone(), *rest), T(self_shape, low), *others)
    if view:
        def on_row(od, x, *rest):
            c = x.clone()
            op(od, c[1], *rest)
            return c
        case(name, f"{tag}row-of-clone{list(self_shape)}", on_row, T((2,) + self_shape, low), *others, node=False)


def call(qualified: str, *args, **kwargs):
    """fn(od, *tensors) calling aten overload `qualified` with the tensors first, then `args`."""
    return lambda od, *tensors: aten(od, qualified)(*tensors, *args, **kwargs)


# Pointwise unary: (function, low) -- low keeps log/sqrt in their domain.
UNARY = {"neg": None, "abs": None, "exp": None, "log": 0.5, "sqrt": 0.5, "sin": None, "cos": None, "tanh": None,
         "sigmoid": None, "relu": None}
UNARY_SHAPES = [(), (5,), (2, 3), (0, 3)]
for _name, _low in UNARY.items():
    for _shape in UNARY_SHAPES:
        case(_name, f"{list(_shape)}", call(_name), T(_shape, _low))
    for _shape in [(), (2, 3)]:
        inplace_cases(f"{_name}_", lambda od, x, _n=_name: aten(od, _n + "_")(x), _shape, low=_low)

# clamp: bounds away from the sampled values (no element within eps of a bound).
for _bounds in [(-0.5, 0.5), (None, 0.3), (-0.2, None)]:
    for _shape in [(), (3, 4)]:
        case("clamp", f"{_bounds}-{list(_shape)}", call("clamp", *_bounds), T(_shape))
    inplace_cases("clamp_", lambda od, x, _b=_bounds: aten(od, "clamp_")(x, *_b), (3, 4), id=str(_bounds))

# Pointwise binary, with broadcasting: (self shape, other shape).
BROADCASTS = [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3)), ((2, 3), ()), ((0, 3), (3,))]
BINARY = {  # function: (keyword arguments, low of self, low of other)
    "add.Tensor": ({}, None, None), "sub.Tensor": ({}, None, None), "mul.Tensor": ({}, None, None),
    "div.Tensor": ({}, None, 0.5), "maximum": ({}, None, None), "minimum": ({}, None, None),
    "pow.Tensor_Tensor": ({}, 0.5, None),
}
for _name, (_kwargs, _low_a, _low_b) in BINARY.items():
    for _a, _b in BROADCASTS:
        case(_name, f"{list(_a)}-{list(_b)}", call(_name, **_kwargs), T(_a, _low_a), T(_b, _low_b))
for _name in ("add.Tensor", "sub.Tensor"):
    for _alpha in (2, -0.5):
        case(_name, f"alpha={_alpha}", call(_name, alpha=_alpha), T((2, 3)), T((3,)))

# In-place binary on self's shape (other broadcasts to it).
INPLACE_BINARY = {"add_.Tensor": ({"alpha": 2}, None, None), "sub_.Tensor": ({"alpha": -0.5}, None, None),
                  "mul_.Tensor": ({}, None, None), "div_.Tensor": ({}, None, 0.5), "pow_.Tensor": ({}, 0.5, None)}
for _name, (_kwargs, _low_a, _low_b) in INPLACE_BINARY.items():
    for _other in [(2, 3), (3,), ()]:
        inplace_cases(_name, lambda od, x, y, _n=_name, _k=_kwargs: aten(od, _n)(x, y, **_k), (2, 3),
                      T(_other, _low_b), low=_low_a, id=f"other{list(_other)}")

# Tensor-Scalar arithmetic and its in-place forms.
SCALAR = {"add.Scalar": ((2.5,), {"alpha": 2}), "sub.Scalar": ((-1.25,), {"alpha": 3}), "mul.Scalar": ((-1.5,), {}),
          "div.Scalar": ((4.0,), {})}
for _name, (_args, _kwargs) in SCALAR.items():
    for _shape in [(), (2, 3)]:
        case(_name, f"{list(_shape)}", call(_name, *_args, **_kwargs), T(_shape))
    _inplace = _name.replace(".", "_.")
    inplace_cases(_inplace, lambda od, x, _n=_inplace, _a=_args, _k=_kwargs: aten(od, _n)(x, *_a, **_k), (2, 3))

# pow with a Scalar exponent: integer exponents take any base, the others a positive one.
for _exponent, _low in [(2, None), (3, None), (-2, 0.5), (0.5, 0.5), (-1.5, 0.5), (0, None), (1, None)]:
    for _shape in [(), (2, 3)]:
        case("pow.Tensor_Scalar", f"e={_exponent}-{list(_shape)}", call("pow.Tensor_Scalar", _exponent), T(_shape, _low))
    inplace_cases("pow_.Scalar", lambda od, x, _e=_exponent: aten(od, "pow_.Scalar")(x, _e), (2, 3), low=_low,
                  id=f"e={_exponent}")
for _base in (2.5, 0.5):
    for _shape in [(), (2, 3)]:
        case("pow.Scalar", f"base={_base}-{list(_shape)}", lambda od, e, _b=_base: aten(od, "pow.Scalar")(_b, e), T(_shape))

# In-place comparisons write 0/1 into self: a zero gradient for self and other (no ties sampled).
for _cmp in ("eq", "ne", "lt", "le", "gt", "ge"):
    inplace_cases(f"{_cmp}_.Scalar", lambda od, x, _c=_cmp: aten(od, _c + "_.Scalar")(x, 0.25), (2, 3))
    for _other in [(2, 3), (3,)]:
        inplace_cases(f"{_cmp}_.Tensor", lambda od, x, y, _c=_cmp: aten(od, _c + "_.Tensor")(x, y), (2, 3), T(_other),
                      id=f"other{list(_other)}")


def _mask(*rows):
    return C(lambda od: od.tensor(np.array(rows, dtype=bool)))


# Selection: the condition and the mask broadcast.
for _cond, _a, _b in [(_mask([True, False, True], [False, False, True]), (2, 3), (2, 3)),
                      (_mask([True], [False]), (2, 3), (3,)),
                      (_mask(True, False, False), (), (2, 3))]:
    case("where.self", f"{list(_a)}-{list(_b)}", lambda od, c, x, y: aten(od, "where.self")(c, x, y), _cond, T(_a), T(_b))
case("where.ScalarOther", "[2, 3]", lambda od, c, x: aten(od, "where.ScalarOther")(c, x, 1.5),
     _mask([True], [False]), T((2, 3)))
case("where.ScalarSelf", "[2, 3]", lambda od, c, y: aten(od, "where.ScalarSelf")(c, -0.5, y),
     _mask(True, False, True), T((2, 3)))
for _m, _shape in [(_mask([True, False, True], [False, True, True]), (2, 3)), (_mask(False, True, True), (2, 3)),
                   (_mask(True), ())]:
    case("masked_fill.Scalar", f"mask-{list(_shape)}", lambda od, x, m: aten(od, "masked_fill.Scalar")(x, m, 2.0),
         T(_shape), _m)
inplace_cases("masked_fill_.Scalar", lambda od, x, m: aten(od, "masked_fill_.Scalar")(x, m, -1.0), (2, 3),
              _mask(False, True, True))

# Reductions with dim/keepdim variants (no ties: amax/amin's gradient is undefined at one).
for _shape in [(), (2, 3), (0, 3)]:
    case("sum", f"{list(_shape)}", call("sum"), T(_shape))
case("mean", "[]", call("mean"), T(()))
case("mean", "[2, 3]", call("mean"), T((2, 3)))
for _shape, _dim, _keepdim in [((2, 3), [1], False), ((2, 3), [0, 1], True), ((2, 3), [-1], True), ((2, 3), None, False),
                               ((2, 3), [], True), ((2, 3, 2), [0, 2], False), ((2, 3, 2), [-2], True), ((), [0], False),
                               ((0, 3), [0], False)]:
    case("sum.dim_IntList", f"{list(_shape)}-{_dim}-{_keepdim}", call("sum.dim_IntList", _dim, _keepdim), T(_shape))
    if 0 not in _shape:  # the mean of nothing is nan
        case("mean.dim", f"{list(_shape)}-{_dim}-{_keepdim}", call("mean.dim", _dim, _keepdim), T(_shape))
for _name in ("amax", "amin"):
    for _shape, _dim, _keepdim in [((2, 3), [], False), ((2, 3), [1], False), ((2, 3), [0], True),
                                   ((2, 3, 2), [-1, 0], False), ((), [], False)]:
        case(_name, f"{list(_shape)}-{_dim}-{_keepdim}", call(_name, _dim, _keepdim), T(_shape))

# Matrix products.
for _a, _b in [((2, 3), (3, 4)), ((1, 3), (3, 1)), ((0, 3), (3, 2)), ((2, 0), (0, 3))]:
    case("mm", f"{list(_a)}x{list(_b)}", call("mm"), T(_a), T(_b))
for _a, _b in [((2, 2, 3), (2, 3, 2)), ((1, 3, 1), (1, 1, 2))]:
    case("bmm", f"{list(_a)}x{list(_b)}", call("bmm"), T(_a), T(_b))
# matmul decomposes (CompositeImplicitAutograd) into mm, or into views around bmm.
case("mm", "matmul", lambda od, a, b: od.matmul(a, b), T((2, 3)), T((3, 4)))
for _a, _b in [((2, 2, 3), (2, 3, 2)), ((3,), (3, 2)), ((2, 2, 3), (3, 2))]:
    case("bmm", f"matmul{list(_a)}x{list(_b)}", lambda od, a, b: od.matmul(a, b), T(_a), T(_b), node=False)
for _self, _beta, _alpha in [((2, 4), 1, 1), ((4,), 0.5, -2), ((1, 4), 1, 3), ((), -1, 1), ((2, 1), 0, 0.5)]:
    case("addmm", f"self{list(_self)}-beta={_beta}-alpha={_alpha}", call("addmm", beta=_beta, alpha=_alpha),
         T(_self), T((2, 3)), T((3, 4)))
for _beta, _alpha in [(1, 1), (0.5, -2)]:
    inplace_cases("addmm_", lambda od, x, m1, m2, _b=_beta, _a=_alpha: aten(od, "addmm_")(x, m1, m2, beta=_b, alpha=_a),
                  (2, 4), T((2, 3)), T((3, 4)), id=f"beta={_beta}-alpha={_alpha}")

# log_softmax and the losses (their backward functions too: double backward).
for _shape, _dim in [((2, 3), 1), ((2, 3), 0), ((2, 3), -1), ((4,), 0), ((2, 3, 2), 1)]:
    case("_log_softmax", f"{list(_shape)}-dim={_dim}", call("_log_softmax", _dim, False), T(_shape))
case("_log_softmax", "log_softmax.int", lambda od, x: od.log_softmax(x, 1), T((3, 4)))
for _shape, _dim in [((2, 3), 1), ((2, 3), 0), ((4,), 0)]:
    case("_log_softmax_backward_data", f"{list(_shape)}-dim={_dim}",
         lambda od, g, o, _d=_dim: aten(od, "_log_softmax_backward_data")(g, o, _d, od.float64), T(_shape), T(_shape))


def _target(*values):
    return C(lambda od: od.tensor(list(values), dtype=od.int64) if len(values) != 1 else od.tensor(values[0], dtype=od.int64))


_WEIGHT = C(lambda od: od.tensor(np.linspace(0.5, 2.0, 4), dtype=od.float64))  # per class, constant
_NO_WEIGHT = C(lambda od: None)

NLL = [  # (self shape, target, weight, reduction: 0 none 1 mean 2 sum, ignore_index)
    ((3, 4), _target(0, 3, 1), _NO_WEIGHT, 1, -100),
    ((3, 4), _target(0, 3, 1), _WEIGHT, 1, -100),
    ((3, 4), _target(0, 3, 1), _WEIGHT, 0, -100),
    ((3, 4), _target(0, 3, 1), _WEIGHT, 2, 3),
    ((3, 4), _target(2, 2, 1), _NO_WEIGHT, 1, 2),
    ((4,), _target(2), _WEIGHT, 1, -100),
]
for _self, _tgt, _w, _reduction, _ignore in NLL:
    _id = f"{list(_self)}-reduction={_reduction}-ignore={_ignore}" + ("-weight" if _w is _WEIGHT else "")
    case("nll_loss_forward", _id, lambda od, x, t, w, _r=_reduction, _i=_ignore: aten(od, "nll_loss_forward")(x, t, w, _r, _i),
         T(_self), _tgt, _w)

    def _nll_backward(od, g, x, t, w, _r=_reduction, _i=_ignore):
        with od.no_grad():
            _, total_weight = aten(od, "nll_loss_forward")(x.detach(), t, w, _r, _i)
        return aten(od, "nll_loss_backward")(g, x, t, w, _r, _i, total_weight)
    _grad_shape = (_self[0],) if _reduction == 0 and len(_self) == 2 else ()
    case("nll_loss_backward", _id, _nll_backward, T(_grad_shape), T(_self), _tgt, _w)
case("nll_loss_forward", "nll_loss", lambda od, x, t: od.nll_loss(x, t, ignore_index=1), T((3, 4)), _target(1, 0, 3))

for _a, _b in [((2, 3), (2, 3)), ((2, 3), (3,)), ((3,), (2, 3)), ((), ())]:
    for _reduction in (0, 1, 2):
        case("mse_loss", f"{list(_a)}-{list(_b)}-reduction={_reduction}", call("mse_loss", _reduction), T(_a), T(_b))
for _shape in [(2, 3), ()]:
    for _reduction in (0, 1, 2):
        _g = _shape if _reduction == 0 else ()
        case("mse_loss_backward", f"{list(_shape)}-reduction={_reduction}", call("mse_loss_backward", _reduction),
             T(_g), T(_shape), T(_shape))

# Views and their *_copy twins: (function, shape, arguments).
VIEWS = [
    ("view", (2, 3), ([3, 2],)), ("view", (2, 3), ([-1],)), ("view", (), ([1, 1],)), ("view", (0, 3), ([3, 0],)),
    ("transpose.int", (2, 3), (0, 1)), ("transpose.int", (2, 3, 2), (-1, 0)), ("transpose.int", (3,), (0, 0)),
    ("t", (2, 3), ()), ("t", (3,), ()),
    ("permute", (2, 3, 2), ([2, 0, 1],)), ("permute", (2, 3), ([-1, 0],)),
    ("expand", (3, 1), ([2, 3, 4],)), ("expand", (3,), ([2, -1],)), ("expand", (), ([2, 2],)),
    ("squeeze", (1, 3, 1), ()), ("squeeze.dim", (2, 1, 3), (1,)), ("squeeze.dim", (2, 3), (0,)),
    ("squeeze.dims", (1, 3, 1), ([0, 2],)), ("squeeze.dims", (1, 3, 1), ([-1],)),
    ("unsqueeze", (2, 3), (1,)), ("unsqueeze", (2, 3), (-1,)), ("unsqueeze", (), (0,)),
    ("select.int", (3, 4), (0, 1)), ("select.int", (3, 4), (1, -1)), ("select.int", (2, 3, 2), (2, 0)),
    ("slice.Tensor", (4, 3), (0, 1, 3, 1)), ("slice.Tensor", (3, 5), (1, 0, None, 2)),
    ("slice.Tensor", (5, 2), (0, -3, None, 1)), ("slice.Tensor", (4, 3), (0, 2, 2, 1)),
    ("as_strided", (3, 4), ([2, 2], [1, 2], 1)), ("as_strided", (3, 4), ([3, 2], [4, 2], None)),
    ("as_strided", (6,), ([2, 3], [3, 1], 0)),
]
for _name, _shape, _args in VIEWS:
    _id = f"{list(_shape)}-{_args}"
    # view (and view_copy, which is view then a copy) needs strides it can reinterpret
    _layouts = ("contiguous",) if _name == "view" else LAYOUTS
    case(_name, _id, call(_name, *_args), T(_shape), layouts=_layouts)
    _base, _, _overload = _name.partition(".")
    _copy = f"{_base}_copy" + (f".{_overload}" if _overload else "")
    case(_copy, _id, call(_copy, *_args), T(_shape), layouts=_layouts)
# as_strided of a view that overlaps itself (sliding windows): the gradient accumulates.
case("as_strided", "windows", call("as_strided", [3, 2], [1, 1], 0), T((4,)), layouts=("contiguous",))
case("as_strided_copy", "windows", call("as_strided_copy", [3, 2], [1, 1], 0), T((4,)), layouts=("contiguous",))

# In-place views: on a clone, and on a view of a non-leaf.
case("transpose_", "clone", lambda od, x: aten(od, "transpose_")(x.clone(), 0, 1), T((2, 3)))
case("transpose_", "view", lambda od, x: aten(od, "transpose_")((x * 1)[1], 0, 1), T((2, 3, 2)))
case("unsqueeze_", "clone", lambda od, x: aten(od, "unsqueeze_")(x.clone(), 1), T((2, 3)))
case("unsqueeze_", "view", lambda od, x: aten(od, "unsqueeze_")((x * 1).t(), 0), T((2, 3)))

# Scatters.
for _self, _src, _dim, _index in [((3, 4), (4,), 0, 1), ((3, 4), (3,), 1, -1), ((2, 3, 2), (2, 2), 1, 2)]:
    case("select_scatter", f"{list(_self)}-dim={_dim}-index={_index}", call("select_scatter", _dim, _index),
         T(_self), T(_src))
for _self, _src, _args in [((4, 3), (2, 3), (0, 0, 4, 2)), ((4, 3), (4, 2), (1, 1, None, 1)),
                           ((5,), (2,), (0, -2, None, 1)), ((4, 3), (0, 3), (0, 2, 2, 1))]:
    case("slice_scatter", f"{list(_self)}-{_args}", call("slice_scatter", *_args), T(_self), T(_src))
# as_strided_scatter's backward assumes a contiguous self (PyTorch's too); src may have any strides.
for _self, _src, _args in [((3, 4), (2, 2), ([2, 2], [4, 1], 1)), ((3, 4), (2, 3), ([2, 3], [1, 4], 0)), ((6,), (2,), ([2], [3], 1))]:
    case("as_strided_scatter", f"{list(_self)}-{_args}",
         lambda od, x, s, _a=_args: aten(od, "as_strided_scatter")(x.contiguous(), s, *_a), T(_self), T(_src), node=False)
    case("as_strided_scatter", f"{list(_self)}-{_args}-contiguous", call("as_strided_scatter", *_args), T(_self), T(_src),
         layouts=("contiguous",))

# Copies.
for _shape in [(), (2, 3), (0, 2)]:
    case("clone", f"{list(_shape)}", call("clone"), T(_shape))
    case("lift", f"{list(_shape)}", call("lift"), T(_shape))
# lift_fresh returns its argument itself (recording on it): on a non-leaf, as the tracer calls it.
case("lift_fresh", "[2, 3]", lambda od, x: aten(od, "lift_fresh")(x * 1), T((2, 3)))
for _a, _b in [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 3), ())]:
    case("copy", f"{list(_a)}-{list(_b)}", call("copy"), T(_a), T(_b))
    inplace_cases("copy_", lambda od, x, y: aten(od, "copy_")(x, y), _a, T(_b), id=f"src{list(_b)}")
case("copy_", "float32-src", lambda od, x, y: aten(od, "copy_")(x.clone(), y.to(od.float32)), T((2, 3)), T((3,)),
     eps=1e-3, atol=1e-4)
case("_to_copy", "same-dtype", lambda od, x: aten(od, "_to_copy")(x, dtype=od.float64), T((2, 3)))
case("_to_copy", "no-dtype", call("_to_copy"), T(()))
case("_to_copy", "float32-round-trip",
     lambda od, x: aten(od, "_to_copy")(aten(od, "_to_copy")(x, dtype=od.float32), dtype=od.float64),
     T((2, 3)), eps=1e-3, atol=1e-4)

# Overwrites: the result does not depend on self's values (a zero gradient). The random ones draw
# from a generator seeded the same way on every call, so the finite differences see one function.
_overwrites = {
    "fill.Scalar": lambda od, x: aten(od, "fill.Scalar")(x, 2.5),
    "zero": lambda od, x: aten(od, "zero")(x),
    "uniform": lambda od, x: aten(od, "uniform")(x, -1.0, 2.0, generator=od.Generator().manual_seed(7)),
    "normal.functional": lambda od, x: aten(od, "normal.functional")(x, 0.5, 2.0, generator=od.Generator().manual_seed(7)),
}
for _name, _fn in _overwrites.items():
    for _shape in [(), (2, 3)]:
        case(_name, f"{list(_shape)}", _fn, T(_shape))
_inplace_overwrites = {
    "fill_.Scalar": lambda od, x: aten(od, "fill_.Scalar")(x, 2.5),
    "zero_": lambda od, x: aten(od, "zero_")(x),
    "uniform_": lambda od, x: aten(od, "uniform_")(x, -1.0, 2.0, generator=od.Generator().manual_seed(7)),
    "normal_": lambda od, x: aten(od, "normal_")(x, 0.5, 2.0, generator=od.Generator().manual_seed(7)),
}
for _name, _fn in _inplace_overwrites.items():
    inplace_cases(_name, _fn, (2, 3))


# Functions that cannot be gradchecked: {function: (reason, check)}; check(FUNCTIONS) is True
# while the reason still holds (the test fails once it does not: cover the function then).
EXCLUDED: dict[str, tuple[str, Callable[[dict], bool]]] = {}


# --- the tests -------------------------------------------------------------------------------------


def test_the_table_covers_every_differentiable_function():
    assert len(FUNCTIONS) >= 100
    missing = sorted(set(FUNCTIONS) - set(CASES) - set(EXCLUDED))
    assert not missing, f"functions with a backward node but no gradcheck case (add them to CASES): {missing}"
    stale = sorted(set(CASES) - set(FUNCTIONS))
    assert not stale, f"CASES lists functions that no longer record a backward node: {stale}"
    assert not set(CASES) & set(EXCLUDED)


def test_excluded_functions_still_cannot_be_gradchecked():
    # Empty today: the random functions are checked with a generator seeded on every call, the
    # in-place comparisons have a zero gradient away from ties, and sampled points avoid kinks.
    for name, (reason, holds) in EXCLUDED.items():
        assert name in FUNCTIONS, f"{name} is excluded ({reason}) but no longer records a backward node"
        assert holds(FUNCTIONS), f"{name} is excluded because {reason}, which no longer holds: give it a case"


def _params():
    for name in sorted(CASES):
        for c in CASES[name]:
            for layout in c.layouts:
                if _applies(layout, c.specs):
                    yield pytest.param(name, c, layout, id=f"{name}-{c.id}-{layout}")


def _inputs(od, c: Case, layout: str):
    inputs = []
    for i, spec in enumerate(c.specs):
        inputs.append(make_input(od, spec, 17 + 31 * i + len(spec.shape), layout) if isinstance(spec, T) else spec.make(od))
    return inputs


def _first(outputs):
    return outputs[0] if isinstance(outputs, tuple) else outputs


@pytest.mark.parametrize("name, c, layout", list(_params()))
def test_gradcheck(opdispatch, name, c, layout):
    od = opdispatch
    inputs = _inputs(od, c, layout)
    fn = lambda *args: c.fn(od, *args)  # noqa: E731
    out = _first(fn(*inputs))
    if c.node:
        expected = FUNCTIONS[name] if c.node is True else c.node
        assert out.grad_fn is not None and out.grad_fn.name() == expected, (out.grad_fn, expected)
    before = [t.numpy().copy() if isinstance(t, od.Tensor) else None for t in inputs]
    assert od.autograd.gradcheck(fn, tuple(inputs), eps=c.eps, atol=c.atol, rtol=c.rtol)
    for t, values in zip(inputs, before):
        if values is not None:
            np.testing.assert_array_equal(t.numpy(), values)  # in-place cases ran on clones
            assert t.grad is None


def test_ties_share_the_gradient_as_pytorch_does(opdispatch):
    """Where gradcheck cannot look (the gradient is not defined at a tie), PyTorch's convention:
    amax/amin split it equally among the tied elements, maximum/minimum give each side half."""
    od = opdispatch
    x = _leaf(od, [[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    (od.amax(x, [1]) * od.tensor([1.0, 3.0], dtype=od.float64)).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.5, 0.5], [1.0, 1.0, 1.0]]
    y = _leaf(od, [[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    od.amin(y, []).backward()
    assert y.grad.tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    a, b = _leaf(od, [1.0, 2.0, 5.0]), _leaf(od, [1.0, 3.0, 4.0])
    od.maximum(a, b).sum().backward()
    assert a.grad.tolist() == [0.5, 0.0, 1.0] and b.grad.tolist() == [0.5, 1.0, 0.0]
    a.grad, b.grad = None, None
    od.minimum(a, b).sum().backward()
    assert a.grad.tolist() == [0.5, 1.0, 0.0] and b.grad.tolist() == [0.5, 0.0, 1.0]
    # abs and relu: 0 at 0; clamp: the gradient passes at the bounds themselves.
    z = _leaf(od, [0.0, -1.0, 2.0])
    (z.abs() + od.relu(z) + z.clamp(-1.0, 2.0)).sum().backward()
    assert z.grad.tolist() == [1.0, 0.0, 3.0]


# --- regressions: what these tests found ----------------------------------------------------------


def _leaf(od, values):
    return od.tensor(np.asarray(values, dtype=np.float64), dtype=od.float64).requires_grad_()


def test_copy_records_history_and_bumps_the_version(opdispatch):
    """copy_ had no Autograd or ADInplaceOrView kernel (torchgen leaves it to PyTorch's hand): the
    copy kept self's old grad_fn, src got no gradient and saved tensors never saw the write."""
    od = opdispatch
    x, src = _leaf(od, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), _leaf(od, [7.0, 8.0, 9.0])
    y = x * 1
    version = y._version
    assert y.copy_(src) is not None and y._version == version + 1
    assert y.grad_fn.name() == "CopyBackwards"
    (y * od.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=od.float64)).sum().backward()
    assert x.grad.tolist() == [[0.0] * 3] * 2 and src.grad.tolist() == [5.0, 7.0, 9.0]
    # src in another dtype gets its gradient in its own dtype; a plain tensor copied into records too.
    half = od.tensor([1.0, 2.0, 3.0], dtype=od.float32).requires_grad_()
    plain = od.zeros(2, 3, dtype=od.float64)
    plain.copy_(half)
    assert plain.requires_grad and plain.grad_fn.name() == "CopyBackwards"
    plain.sum().backward()
    assert half.grad.dtype is od.float32 and half.grad.tolist() == [2.0, 2.0, 2.0]
    # A saved tensor overwritten by copy_ is caught at backward; a leaf that requires grad is refused.
    z = x * 1
    product = z * z
    z.copy_(src)
    with pytest.raises(od.Error, match="modified by an inplace operation"):
        product.sum().backward()
    with pytest.raises(od.Error, match="a leaf Variable that requires grad is being used in an in-place operation"):
        x.copy_(src)


def test_copy_into_a_view_gives_the_base_copy_slices(opdispatch):
    od = opdispatch
    x, src = _leaf(od, [[1.0, 2.0], [3.0, 4.0]]), _leaf(od, [5.0, 6.0])
    y = x * 2
    y[1].copy_(src)
    assert y.grad_fn.name() == "CopySlices"
    (y * od.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=od.float64)).sum().backward()
    assert x.grad.tolist() == [[2.0, 4.0], [0.0, 0.0]] and src.grad.tolist() == [3.0, 4.0]


def test_to_copy_to_an_integer_dtype_records_nothing(opdispatch):
    """_to_copy's output_differentiability condition (!dtype || isDifferentiableType(*dtype)) was
    parsed but not generated: an int64 copy required grad and had a grad_fn."""
    od = opdispatch
    x = _leaf(od, [1.5, -2.5])
    as_int = od.ops.aten._to_copy.default(x, dtype=od.int64)
    assert not as_int.requires_grad and as_int.grad_fn is None
    assert od.ops.aten._to_copy.default(x, dtype=od.float32).grad_fn.name() == "ToCopyBackward0"
    assert od.ops.aten._to_copy.default(x).grad_fn.name() == "ToCopyBackward0"


def test_an_argument_without_a_formula_refuses_requires_grad(opdispatch):
    """nll_loss's weight has no formula: its gradient was silently dropped (torchgen's kernels
    check_no_requires_grad such arguments)."""
    od = opdispatch
    scores = _leaf(od, [[0.1, 0.2, 0.7], [0.5, 0.3, 0.2]])
    target = od.tensor([2, 0])
    weight = _leaf(od, [1.0, 2.0, 3.0])
    with pytest.raises(od.Error, match=r"The function 'nll_loss_forward' is not differentiable with respect to "
                                       r"argument 'weight'\. This input cannot have requires_grad True\."):
        od.nll_loss(scores, target, weight)
    with od.no_grad():
        od.nll_loss(scores, target, weight)
    assert od.nll_loss(scores, target, weight.detach()).grad_fn.name() == "NllLossBackward0"


def test_an_in_place_view_operator_on_a_view_sets_its_history(opdispatch):
    """unsqueeze_/transpose_ on a view rebased the view's history onto its base (a CopySlices node
    whose geometry no longer matched the in-place node's input); torchgen sets the history."""
    od = opdispatch
    x = _leaf(od, np.arange(6.0).reshape(2, 3))
    w1 = od.tensor(np.linspace(1, 2, 6).reshape(2, 3), dtype=od.float64)
    w2 = od.tensor(np.linspace(-1, 1, 6).reshape(1, 3, 2), dtype=od.float64)

    base = x * 2
    view = base.t()
    view.unsqueeze_(0)
    assert view.grad_fn.name() == "UnsqueezeBackward0" and base.grad_fn.name() == "MulBackward1"

    def f(x):
        base = x * 2
        view = base.t()
        view.unsqueeze_(0)
        base.mul_(3)  # the view's grad_fn is remade from the base's new history
        return (base * w1).sum() + (view * w2).sum()

    assert od.autograd.gradcheck(f, (x,))
    view = (x * 1)[0:2]
    view.transpose_(0, 1)
    assert view.grad_fn.name() == "TransposeBackward0"

    def g(x):
        view = (x * 1)[0:2]
        view.transpose_(0, 1)
        return view * w1.t()

    assert od.autograd.gradcheck(g, (x,))


def test_an_expanded_view_read_after_its_base_changed(opdispatch):
    """The AsStridedBackward0 a view gets once its base changed in place raised "... not supported"
    for a view that overlaps itself (expand); its gradient sums per memory location."""
    od = opdispatch

    def f(x):
        base = x * 1
        expanded = base.expand(2, 3)
        base.mul_(2)
        return expanded

    x = _leaf(od, [0.5, -1.0, 2.0])
    assert f(x).grad_fn.name() == "AsStridedBackward0"
    assert od.autograd.gradcheck(f, (x,))


def test_masked_fill_broadcasts_self_with_the_mask(opdispatch):
    """masked_fill (out of place) has the broadcast shape of self and mask, as PyTorch's; it cloned
    self and failed to write a bigger mask into it."""
    od = opdispatch
    mask = od.tensor([[True, False, False], [False, True, True]])
    x = _leaf(od, [1.0, 2.0, 3.0])
    filled = od.masked_fill(x, mask, -1.0)
    assert filled.tolist() == [[-1.0, 2.0, 3.0], [1.0, -1.0, -1.0]]
    assert od.autograd.gradcheck(lambda t: od.masked_fill(t, mask, -1.0), (x,))
    assert od.masked_fill(_leaf(od, 4.0), od.tensor([True, False]), 0.0).tolist() == [0.0, 4.0]


# --- second order ----------------------------------------------------------------------------------

def _gradgrad_params():
    """Each function's first case on contiguous inputs: gradgradcheck differentiates the backward
    pass itself (create_graph=True), whose nodes are the same generated ones every layout meets."""
    for name in sorted(CASES):
        c = CASES[name][0]
        if _applies("contiguous", c.specs):
            yield pytest.param(name, c, id=f"{name}-{c.id}")


@pytest.mark.parametrize("name, c", list(_gradgrad_params()))
def test_gradgradcheck(opdispatch, name, c):
    od = opdispatch
    inputs = _inputs(od, c, "contiguous")
    fn = lambda *args: c.fn(od, *args)  # noqa: E731
    assert od.autograd.gradgradcheck(fn, tuple(inputs), eps=c.eps, atol=c.atol, rtol=c.rtol)
