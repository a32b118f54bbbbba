"""The names a linker sees: a generated C++ declaration as binutils' ``nm -C`` prints its
symbol (GCC, Itanium ABI), so a declaration and an object's symbol compare as strings.

    symbol("op::native::add_out", ["const TensorBase&", "IntArrayRef", "TensorBase&"])
    -> "op::native::add_out(op::TensorBase const&, op::ArrayRef<long>, op::TensorBase&)"

The types are those api/types.py spells (inside ``namespace op``, unqualified); the runtime's
aliases are spelled out as the demangler prints their targets (``IntArrayRef`` is
``op::ArrayRef<long>``, ``int64_t`` is ``long``). A type this table does not know renders as
``op::<name>``: a symbol that then matches no declaration is still found by its name
(link_check.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

# Fundamental types and the <cstdint> aliases of x86-64 / aarch64 Linux.
_BUILTIN = {"int64_t": "long", "int32_t": "int", "int16_t": "short", "int8_t": "signed char",
            "uint64_t": "unsigned long", "uint8_t": "unsigned char", "double": "double", "float": "float",
            "bool": "bool", "void": "void", "long": "long", "int": "int"}
# The runtime's aliases (csrc/core), as the types they name.
_ALIASES = {"IntArrayRef": "ArrayRef<int64_t>", "SymIntArrayRef": "ArrayRef<int64_t>"}
# Standard library types whose defaulted template arguments the demangler prints.
_STD = {
    "std::string_view": "std::basic_string_view<char, std::char_traits<char> >",
    "std::string": "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >",
}
_TOKEN = re.compile(r"\s*([A-Za-z_][A-Za-z_0-9:]*|[<>,&*])")


@dataclass(frozen=True)
class _Type:
    const: bool
    name: str
    args: tuple["_Type", ...]
    ref: str  # "", "&" or "*"


def symbol(qualified: str, param_types: Sequence[str]) -> str:
    """``qualified(types...)`` as ``nm -C`` prints the function's symbol."""
    return f"{qualified}({', '.join(demangled_type(t) for t in param_types)})"


def demangled_type(cpp: str) -> str:
    """One parameter type as the demangler prints it: ``const TensorBase&`` -> ``op::TensorBase const&``."""
    tokens = _TOKEN.findall(cpp)
    parsed, rest = _parse(tokens)
    if rest:
        raise ValueError(f"cannot read the C++ type {cpp!r}")
    return _render(parsed)


def _parse(tokens: list[str]) -> tuple[_Type, list[str]]:
    const = False
    while tokens and tokens[0] == "const":
        const, tokens = True, tokens[1:]
    if not tokens:
        raise ValueError("a type expected")
    name, tokens = tokens[0], tokens[1:]
    if name in ("signed", "unsigned") and tokens and tokens[0] in ("char", "short", "int", "long"):
        name, tokens = f"{name} {tokens[0]}", tokens[1:]
    args: list[_Type] = []
    if tokens and tokens[0] == "<":
        tokens = tokens[1:]
        while True:
            arg, tokens = _parse(tokens)
            args.append(arg)
            if not tokens:
                raise ValueError("unclosed template argument list")
            separator, tokens = tokens[0], tokens[1:]
            if separator == ">":
                break
            if separator != ",":
                raise ValueError(f"unexpected {separator!r} in a template argument list")
    while tokens and tokens[0] == "const":
        const, tokens = True, tokens[1:]
    ref = ""
    if tokens and tokens[0] in ("&", "*"):
        ref, tokens = tokens[0], tokens[1:]
    return _Type(const, name, tuple(args), ref), tokens


def _render(t: _Type) -> str:
    if t.name in _ALIASES and not t.args:
        aliased, _ = _parse(_TOKEN.findall(_ALIASES[t.name]))
        return _render(_Type(t.const, aliased.name, aliased.args, t.ref))
    base = _base(t)
    # A by-value parameter's top-level const is not part of the signature.
    const = " const" if t.const and t.ref else ""
    return f"{base}{const}{t.ref}"


def _base(t: _Type) -> str:
    if t.name in _BUILTIN and not t.args:
        return _BUILTIN[t.name]
    if t.name in _STD and not t.args:
        return _STD[t.name]
    args = [_render(a) for a in t.args]
    if t.name == "std::vector" and len(args) == 1:
        args.append(f"std::allocator<{_close(args[0])}>")
        return f"std::vector<{_close(', '.join(args))}>"
    name = t.name if "::" in t.name else f"op::{t.name}"
    return f"{name}<{_close(', '.join(args))}>" if args else name


def _close(inside: str) -> str:
    """A template argument list's contents before its '>': the demangler writes '> >'."""
    return inside + " " if inside.endswith(">") else inside
