"""opdispatch.<name>(...): one function per operator whose yaml variants include `function`.

Which names exist and which overloads each tries come from _op_table (generated from the
yaml by opgen). A call binds to the first overload, in qualified-name order (like
opdispatch.ops.aten.<name>), that accepts the arguments:

    opdispatch.add(x, y, alpha=2)       # aten::add.Tensor
    opdispatch.add(x, 2)                # aten::add.Scalar
    opdispatch.add(x, y, out=o)         # aten::add.out, returns o
    opdispatch.zeros(2, 3)              # sizes as varargs, like zeros([2, 3])
"""
from __future__ import annotations

from opdispatch import _C, _left_out, _op_table


def make_functions() -> dict[str, _C._OverloadSet]:
    """name -> the callable opdispatch exposes under that name (in a selective build, the
    left-out operators' too: they raise opdispatch.Error naming the operator and the selection)."""
    varargs = set(_op_table.VARARGS_FUNCTIONS)
    functions = {
        name: _C._overload_set(name, list(overloads), varargs_sizes=name in varargs)
        for name, overloads in _op_table.FUNCTIONS.items()
    }
    return {**_left_out.functions(), **functions}
