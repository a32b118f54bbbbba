"""Schema default values as C++ expressions: ``False`` -> ``false``, ``[0,1]`` -> ``{0, 1}``."""
from __future__ import annotations

from ..model.types import BaseTy, BaseType, ListType, OptionalType, Type

# Named defaults of the schema language.
_NAMED = {
    "True": "true", "False": "false",
    "contiguous_format": "MemoryFormat::Contiguous", "preserve_format": "MemoryFormat::Preserve",
    "channels_last": "MemoryFormat::ChannelsLast", "strided": "Layout::Strided",
    "Mean": "1", "Sum": "2", "None_": "0",  # reduction modes, as PyTorch numbers them
    "long": "ScalarType::Int64", "int": "ScalarType::Int32", "float": "ScalarType::Float32",
    "double": "ScalarType::Float64", "bool": "ScalarType::Bool",
    "inf": "std::numeric_limits<double>::infinity()", "-inf": "-std::numeric_limits<double>::infinity()",
    "per_tensor_affine": "QScheme::PER_TENSOR_AFFINE",
}


def cpp_default(value: str, t: Type) -> str:
    if value == "None":
        return "std::nullopt" if isinstance(t, OptionalType) else "{}"
    if isinstance(t, OptionalType):
        return cpp_default(value, t.elem)
    if isinstance(t, ListType):
        if value.startswith("["):
            items = [item.strip() for item in value[1:-1].split(",") if item.strip()]
            return "{" + ", ".join(cpp_default(item, t.elem) for item in items) + "}"
        # `int[2] stride=1` repeats the one value over the list's fixed size.
        return "{" + ", ".join([cpp_default(value, t.elem)] * (t.size or 1)) + "}"
    if isinstance(t, BaseType) and t.name is BaseTy.str:
        return _string_literal(value)
    return _NAMED.get(value, value)


def _string_literal(value: str) -> str:
    """A yaml string default ('linear' or "linear", with escapes) as a C++ literal."""
    quote, body = value[0], value[1:-1]
    text = []
    i = 0
    while i < len(body):  # undo the schema's escapes, then escape for C++
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            i += 1
            ch = body[i]
        text.append(ch)
        i += 1
    assert quote in "'\""
    escaped = "".join("\\" + c if c in "\\\"" else c for c in text)
    return f'"{escaped}"'
