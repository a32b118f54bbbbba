"""Tensor.<name>(...): one method per operator whose yaml variants include `method`.

The tensor is the operator's `self` argument (the first one, or wherever the schema puts it:
x.where(c, y) is where(c, x, y)); the rest binds like a function call, first overload that
fits wins. Sizes may be varargs where the only argument after self is an int list
(x.view(2, 3), x.permute(1, 0)). `to` also takes torch's one-argument forms.
"""
from __future__ import annotations

import difflib

from opdispatch import _C, _left_out, _op_table


def make_methods() -> dict[str, _C._OverloadSet]:
    """name -> the method Tensor gets under that name (a method descriptor)."""
    varargs = set(_op_table.VARARGS_METHODS)
    return {
        name: _C._overload_set(f"Tensor.{name}", list(overloads),
                              [_op_table.SELF_POSITIONS.get(o, 0) for o in overloads],
                              is_method=True, varargs_sizes=name in varargs)
        for name, overloads in _op_table.METHODS.items()
    }


def _torch_style_to(to_overloads):
    """x.to(device) and x.to(other) on top of the schemas, which take a device only together
    with a dtype (to.device) or by keyword (to.dtype_layout)."""

    def to(self, *args, **kwargs):
        if len(args) == 1 and isinstance(args[0], str):
            try:
                return to_overloads(self, device=args[0], **kwargs)
            except TypeError:
                _raise_if_meant_as_dtype(args[0])
                raise
        if len(args) == 1 and isinstance(args[0], _C.Tensor):
            return to_overloads(self, dtype=args[0].dtype, device=args[0].device, **kwargs)
        return to_overloads(self, *args, **kwargs)

    to.__doc__ = ("x.to(dtype), x.to(device), x.to(device, dtype), x.to(other), x.to(dtype=..., device=...): "
                  "self when nothing changes, else a copy.\n\n" + to_overloads.__doc__)
    to.__qualname__ = "Tensor.to"
    return to


_DTYPE_NAMES = ("bool", "int32", "int64", "float32", "float64")


def _raise_if_meant_as_dtype(text: str) -> None:
    """x.to("flaot32"): a string is read as a device; when it is (close to) a dtype's name, say
    how to pass the dtype instead of only that no such device exists."""
    close = difflib.get_close_matches(text.lower(), _DTYPE_NAMES, n=1, cutoff=0.6)
    if close:
        raise TypeError(f"Tensor.to({text!r}): a string names a device, and {text!r} is none (known: cpu, cuda, "
                        f"meta and registered external devices); did you mean the dtype opdispatch.{close[0]}? "
                        f"valid dtypes: {', '.join('opdispatch.' + name for name in _DTYPE_NAMES)}")


def install_methods(tensor_type: type) -> dict[str, object]:
    """Sets every operator method on `tensor_type` (and those a selective build left out, which
    raise opdispatch.Error); returns them by name."""
    methods: dict[str, object] = {**_left_out.methods(), **make_methods()}
    if "to" in methods:
        methods["to"] = _torch_style_to(methods["to"])
    for name, method in methods.items():
        setattr(tensor_type, name, method)
    return methods
