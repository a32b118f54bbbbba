"""Does a default value fit its argument's type?

torchgen passes defaults through to C++ verbatim, so ``int x=1.5`` or
``bool b=yes`` only fail when the generated C++ is compiled.  We check here.
"""
from __future__ import annotations

import re
from typing import Optional

from .types import BaseTy, BaseType, ListType, OptionalType, Type

_INT = re.compile(r"^-?[0-9]+$")
_FLOAT = re.compile(r"^-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$|^-?inf$|^nan$")
_STRING = re.compile(r"""^("([^"\\]|\\.)*"|'([^'\\]|\\.)*')$""")

# Symbolic defaults the C++ API understands, per base type.
_NAMED = {
    BaseTy.int: {"Mean", "Sum"},  # at::Reduction
    BaseTy.ScalarType: {"bool", "int", "long", "float", "double", "half", "bfloat16", "byte", "char", "short"},
    BaseTy.Layout: {"strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "mkldnn", "jagged"},
    BaseTy.MemoryFormat: {"contiguous_format", "preserve_format", "channels_last", "channels_last_3d"},
    BaseTy.QScheme: {"per_tensor_affine", "per_channel_affine", "per_tensor_symmetric", "per_channel_symmetric"},
}


def _fits_base(ty: BaseTy, text: str) -> bool:
    if text in _NAMED.get(ty, ()):
        return True
    if ty in (BaseTy.int, BaseTy.SymInt, BaseTy.DeviceIndex):
        return bool(_INT.match(text))
    if ty is BaseTy.float:
        return bool(_FLOAT.match(text))
    if ty in (BaseTy.bool, BaseTy.SymBool):
        return text in ("True", "False")
    if ty is BaseTy.Scalar:
        return bool(_FLOAT.match(text)) or text in ("True", "False")
    if ty is BaseTy.str:
        return bool(_STRING.match(text))
    return False


def _split_list(text: str) -> list[str]:
    inner = text[1:-1].strip()
    return [item.strip() for item in inner.split(",")] if inner else []


def default_problem(ty: Type, text: str) -> Optional[str]:
    """None when ``text`` is a valid default for ``ty``, else why not."""
    if isinstance(ty, OptionalType):
        return None if text == "None" else default_problem(ty.elem, text)
    if isinstance(ty, ListType):
        if text.startswith("[") and text.endswith("]"):
            items = _split_list(text)
            for item in items:
                problem = default_problem(ty.elem, item)
                if problem:
                    return problem
            return None
        # A single value broadcasts to every element (int[2] stride=1).
        if isinstance(ty.elem, BaseType) and ty.elem.name in (BaseTy.int, BaseTy.SymInt):
            return default_problem(ty.elem, text)
        return f"'{text}' is not a list; write e.g. [] or [0, 1]"
    assert isinstance(ty, BaseType)
    if _fits_base(ty.name, text):
        return None
    if text == "None":
        return f"None is only a valid default for optional types; write {ty}? instead of {ty}"
    return f"'{text}' is not a valid {ty} value"
