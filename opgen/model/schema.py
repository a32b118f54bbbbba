"""The function schema language: ``add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor``.

Every class parses from text and prints back to exactly that text; ``parse``
refuses text that would not round-trip, so the model cannot drift from the yaml.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache, wraps
from enum import Enum
from typing import Iterator, Optional

from ..errors import SchemaError
from .defaults import default_problem
from .types import TENSOR, BaseTy, BaseType, OptionalType, Type, base_of, parse_type

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Names that would compile to broken C++ if used for a function or parameter.
CPP_KEYWORDS = frozenset("""
    alignas alignof and and_eq asm auto bitand bitor bool break case catch char char16_t char32_t char8_t
    class compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield
    decltype default delete do double dynamic_cast else enum explicit export extern false float for friend
    goto if inline int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private
    protected public register reinterpret_cast requires return short signed sizeof static static_assert
    static_cast struct switch template this thread_local throw true try typedef typeid typename union
    unsigned using virtual void volatile wchar_t while xor xor_eq
""".split())
_OVERLOAD = re.compile(r"^[A-Za-z0-9_]+$")
_QUALIFIED_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)?$")
_ANNOTATION = re.compile(r"^([a-z](?:\|[a-z])*)(!?)(?: -> (\*|[a-z](?:\|[a-z])*))?$")
_ANNOTATED_TENSOR = re.compile(r"^Tensor\((.+)\)(.*)$")
# Python's augmented assignment dunders: __iadd__ is the in-place form of __add__.
AUGMENTED_DUNDERS = ("add", "sub", "mul", "div", "mod", "pow", "lshift", "rshift", "and", "xor", "or")
_TENSOR_OPTIONS = (("dtype", BaseTy.ScalarType), ("layout", BaseTy.Layout), ("device", BaseTy.Device), ("pin_memory", BaseTy.bool))


def _remembered(method):
    """Keep what a method derives from an immutable schema on the schema itself: groupings ask
    for it thousands of times, and it then travels with the schema through the parse cache."""
    slot = f"_remembered_{method.__name__}"

    @wraps(method)
    def remembered(self):
        try:
            return self.__dict__[slot]
        except KeyError:
            value = self.__dict__[slot] = method(self)  # frozen dataclasses still have a __dict__
            return value
    return remembered


def split_top_level(text: str) -> list[str]:
    """Split on commas that are outside brackets, parentheses and quotes."""
    parts, depth, quote, start, i = [], 0, None, 0, 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
        i += 1
    if quote or depth:
        raise SchemaError(f"unbalanced brackets or quotes in '{text}'")
    tail = text[start:].strip()
    if tail or parts:
        parts.append(tail)
    return parts


@dataclass(frozen=True)
class Annotation:
    alias_set: tuple[str, ...]
    is_write: bool
    alias_set_after: tuple[str, ...]

    @staticmethod
    def parse(text: str) -> "Annotation":
        m = _ANNOTATION.match(text)
        if not m:
            raise SchemaError(f"bad alias annotation '({text})'; expected e.g. (a), (a!) or (a -> *)")
        after = tuple(m.group(3).split("|")) if m.group(3) else ()
        return Annotation(tuple(m.group(1).split("|")), m.group(2) == "!", after)

    def __str__(self) -> str:
        text = "|".join(self.alias_set) + ("!" if self.is_write else "")
        return f"{text} -> {'|'.join(self.alias_set_after)}" if self.alias_set_after else text


def _parse_annotated_type(text: str) -> tuple[Type, Optional[Annotation]]:
    m = _ANNOTATED_TENSOR.match(text)
    if not m:
        return parse_type(text), None
    ty = parse_type("Tensor" + m.group(2))
    if str(ty) not in ("Tensor", "Tensor?", "Tensor[]"):
        raise SchemaError(f"alias annotations are only allowed on Tensor, Tensor? and Tensor[], not '{text}'")
    return ty, Annotation.parse(m.group(1))


def _annotated_type_str(ty: Type, annotation: Optional[Annotation]) -> str:
    text = str(ty)
    return text.replace("Tensor", f"Tensor({annotation})", 1) if annotation else text


def _is_write(annotation: Optional[Annotation]) -> bool:
    return annotation is not None and annotation.is_write


@dataclass(frozen=True)
class Argument:
    name: str
    type: Type
    default: Optional[str]
    annotation: Optional[Annotation]

    @staticmethod
    def parse(text: str) -> "Argument":
        return _parse_argument(text)

    @property
    def is_write(self) -> bool:
        return _is_write(self.annotation)

    def stripped(self, keep_default: bool = True) -> "Argument":
        return Argument(self.name, self.type, self.default if keep_default else None, None)

    def __str__(self) -> str:
        text = f"{_annotated_type_str(self.type, self.annotation)} {self.name}"
        return text if self.default is None else f"{text}={self.default}"


# The same argument text ("Tensor self", "Scalar alpha=1") recurs thousands of times in a
# yaml; arguments are immutable, so each distinct text is parsed once.
@lru_cache(maxsize=8192)
def _parse_argument(text: str) -> Argument:
    decl, eq, default = text.partition("=")
    type_text, space, name = decl.rpartition(" ")
    if not space or not type_text:
        raise SchemaError(f"argument '{text}' needs a type and a name, e.g. 'Tensor self'")
    if not IDENTIFIER.match(name):
        raise SchemaError(f"argument name '{name}' is not an identifier")
    if name in CPP_KEYWORDS:
        raise SchemaError(f"argument name '{name}' is a C++ keyword; rename it")
    ty, annotation = _parse_annotated_type(type_text)
    if eq:
        problem = default_problem(ty, default)
        if problem:
            raise SchemaError(f"default of argument '{name}': {problem}")
    return Argument(name, ty, default if eq else None, annotation)


@dataclass(frozen=True)
class Return:
    name: Optional[str]
    type: Type
    annotation: Optional[Annotation]

    @staticmethod
    def parse(text: str) -> "Return":
        type_text, space, name = text.rpartition(" ")
        if space and not type_text.endswith("->"):
            if not IDENTIFIER.match(name):
                raise SchemaError(f"return name '{name}' is not an identifier")
        else:
            type_text, name = text, None
        ty, annotation = _parse_annotated_type(type_text)
        return Return(name, ty, annotation)

    @property
    def is_write(self) -> bool:
        return _is_write(self.annotation)

    def __str__(self) -> str:
        text = _annotated_type_str(self.type, self.annotation)
        return f"{text} {self.name}" if self.name else text


@dataclass(frozen=True)
class Arguments:
    """Positional, keyword-only and out= arguments, in schema order."""

    positional: tuple[Argument, ...]
    kwarg_only: tuple[Argument, ...]
    out: tuple[Argument, ...]

    @staticmethod
    def parse(text: str) -> "Arguments":
        positional: list[Argument] = []
        kwarg_only: list[Argument] = []
        out: list[Argument] = []
        seen_star = False
        for item in split_top_level(text):
            if item == "*":
                if seen_star:
                    raise SchemaError("the keyword-only marker '*' may appear only once")
                seen_star = True
                continue
            if not item:
                raise SchemaError("empty argument (two commas in a row?)")
            arg = Argument.parse(item)
            if not seen_star:
                positional.append(arg)
            elif arg.is_write:
                out.append(arg)
            elif out:
                raise SchemaError(f"keyword-only argument '{arg.name}' follows an out argument; out arguments (mutable keyword-only) must come last")
            else:
                kwarg_only.append(arg)
        if seen_star and not kwarg_only and not out:
            raise SchemaError("'*' must be followed by at least one keyword-only argument")
        return Arguments(tuple(positional), tuple(kwarg_only), tuple(out))

    def all(self) -> Iterator[Argument]:
        yield from self.positional
        yield from self.kwarg_only
        yield from self.out

    @property
    def self_arg(self) -> Optional[Argument]:
        return next((a for a in self.positional if a.name == "self"), None)

    @property
    def post_self_positional(self) -> tuple[Argument, ...]:
        names = [a.name for a in self.positional]
        return self.positional[names.index("self") + 1:] if "self" in names else self.positional

    def tensor_options_start(self) -> Optional[int]:
        """Index in kwarg_only of the dtype/layout/device/pin_memory run, if any."""
        n = len(_TENSOR_OPTIONS)
        for i in range(len(self.kwarg_only) - n + 1):
            window = self.kwarg_only[i:i + n]
            if all(a.name == name and str(a.type) in (ty.value, ty.value + "?") for a, (name, ty) in zip(window, _TENSOR_OPTIONS)):
                return i
        return None

    @property
    def has_tensor_options(self) -> bool:
        return self.tensor_options_start() is not None

    def has_tensor_arg(self) -> bool:
        return any(a.type.is_tensor_like() for a in (*self.positional, *self.kwarg_only))

    def has_symint_arg(self) -> bool:
        return any(base_of(a.type) is BaseTy.SymInt for a in (*self.positional, *self.kwarg_only))

    def has_generator_arg(self) -> bool:
        return any(str(a.type) in ("Generator", "Generator?") for a in self.all())

    def signature(self, strip_default: bool = False) -> "Arguments":
        """Annotations, out arguments and tensor options removed."""
        kwargs = self.kwarg_only
        start = self.tensor_options_start()
        if start is not None:
            kwargs = kwargs[:start] + kwargs[start + len(_TENSOR_OPTIONS):]
        keep = not strip_default
        return Arguments(tuple(a.stripped(keep) for a in self.positional), tuple(a.stripped(keep) for a in kwargs), ())

    def __str__(self) -> str:
        parts = [str(a) for a in self.positional]
        if self.kwarg_only or self.out:
            parts.append("*")
            parts.extend(str(a) for a in (*self.kwarg_only, *self.out))
        return ", ".join(parts)


@dataclass(frozen=True, order=True)
class BaseOperatorName:
    base: str
    inplace: bool
    dunder_method: bool
    functional_overload: bool = False  # '_functional' suffix, see SchemaKind.mutable

    @staticmethod
    def parse(text: str) -> "BaseOperatorName":
        if not IDENTIFIER.match(text):
            raise SchemaError(f"operator name '{text}' is not an identifier (letters, digits and '_', not starting with a digit)")
        m = re.match(r"^__([^_]+)__$", text)
        if m:
            base, dunder = m.group(1), True
            inplace = base[0] == "i" and base[1:] in AUGMENTED_DUNDERS
            if inplace:
                base = base[1:]
            elif base[0] == "i":
                raise SchemaError(f"dunder name '{text}' starts with 'i' but is not an augmented assignment")
        else:
            dunder = False
            inplace = text.endswith("_")
            base = text[:-1] if inplace else text
            if base in CPP_KEYWORDS:
                raise SchemaError(f"operator name '{text}' is a C++ keyword; rename it")
        if text.endswith("_out"):
            raise SchemaError(f"operator name '{text}' ends in '_out', which is reserved; use an 'out' overload name instead")
        functional = base.endswith("_functional") and base != "_functional"
        if functional:
            if dunder or inplace:
                raise SchemaError(f"'{text}': a _functional name cannot be dunder or in-place")
            base = base[: -len("_functional")]
        return BaseOperatorName(base, inplace, dunder, functional)

    def __str__(self) -> str:
        if self.dunder_method:
            return f"__{'i' if self.inplace else ''}{self.base}__"
        return f"{self.base}{'_functional' if self.functional_overload else ''}{'_' if self.inplace else ''}"


_HASH = "_hash"


@dataclass(frozen=True, order=True)
class OperatorName:
    name: BaseOperatorName
    overload_name: str

    @staticmethod
    def parse(text: str) -> "OperatorName":
        base, dot, overload = text.partition(".")
        if dot and not _OVERLOAD.match(overload):
            raise SchemaError(f"overload name '{overload}' in '{text}' must be letters, digits and '_'")
        result = OperatorName(BaseOperatorName.parse(base), overload)
        if str(result) != text:
            raise SchemaError(f"operator name '{text}' is not in canonical form; expected '{result}'")
        return result

    def __str__(self) -> str:
        return f"{self.name}.{self.overload_name}" if self.overload_name else str(self.name)

    # Hashed once: every kernel index and table is keyed by OperatorName (~250k lookups in a cold
    # run on PyTorch's yaml), and the generated hash walks two dataclasses in Python each time.
    # Kept out of pickles (__getstate__): a string's hash differs in every process.
    def __hash__(self) -> int:
        try:
            return self.__dict__[_HASH]
        except KeyError:
            value = self.__dict__[_HASH] = hash((self.name, self.overload_name))
            return value

    def __getstate__(self) -> dict:
        return {name: value for name, value in self.__dict__.items() if name != _HASH}

    def with_overload(self, overload: str) -> "OperatorName":
        return OperatorName(self.name, overload)

    def unambiguous_name(self) -> str:
        return f"{self.name}_{self.overload_name}" if self.overload_name else str(self.name)

    def without_inplace(self) -> "OperatorName":
        return OperatorName(replace(self.name, inplace=False), self.overload_name)


class SchemaKind(Enum):
    functional = "functional"
    inplace = "inplace"
    out = "out"
    mutable = "mutable"
    scratch = "scratch"


@dataclass(frozen=True)
class FunctionSchema:
    name: OperatorName
    arguments: Arguments
    returns: tuple[Return, ...]

    @staticmethod
    def parse(text: str) -> "FunctionSchema":
        open_paren = text.find("(")
        close_paren = text.rfind(") -> ")
        if open_paren <= 0 or close_paren < open_paren:
            raise SchemaError(f"schema '{text}' must look like 'name.overload(ARGS) -> RETURNS'")
        if not _QUALIFIED_NAME.match(text[:open_paren]):
            raise SchemaError(f"operator name '{text[:open_paren]}' must be an identifier with an optional '.overload' (letters, digits, '_')")
        name = OperatorName.parse(text[:open_paren])
        arguments = Arguments.parse(text[open_paren + 1:close_paren])
        returns = _parse_returns(text[close_paren + len(") -> "):])
        schema = FunctionSchema(name, arguments, returns)
        if str(schema) != text:
            raise SchemaError(f"schema is not in canonical form; write it as '{schema}'")
        schema.check()
        return schema

    def __str__(self) -> str:
        rets = ", ".join(map(str, self.returns))
        if len(self.returns) != 1:
            rets = f"({rets})"
        return f"{self.name}({self.arguments}) -> {rets}"

    def check(self) -> None:
        """The well-formedness rules that keep generated C++ consistent."""
        args = self.arguments
        names = [a.name for a in args.all()]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise SchemaError(f"duplicate argument name(s): {', '.join(duplicates)}")
        ret_names = [r.name for r in self.returns if r.name]
        if len(set(ret_names)) != len(ret_names):
            raise SchemaError("duplicate return names")
        if args.out and self.name.name.inplace:
            raise SchemaError("an in-place operator (trailing '_') cannot also have out= arguments")
        for arg, ret in zip(args.out, self.returns):
            if arg.annotation != ret.annotation:
                raise SchemaError(f"out argument '{arg.name}' must be returned with the same alias annotation, in order")
        for a in args.post_self_positional:
            if a.is_write and any(a.annotation == r.annotation for r in self.returns):
                raise SchemaError(f"mutable positional argument '{a.name}' must not be returned")
        mutable_returns = [r for r in self.returns if r.is_write]
        if mutable_returns and len(mutable_returns) != len(self.returns):
            raise SchemaError("returns must be all mutable or all immutable")
        out_and_self = [*args.out, *(a for a in args.positional if a.name == "self")]
        for r in mutable_returns:
            if not any(r.annotation == a.annotation for a in out_and_self):
                raise SchemaError("every mutable return must alias an out argument or 'self'; did you forget to make an out argument keyword-only?")
        if args.out:
            if any(a.type != TENSOR for a in args.out):
                if self.returns:
                    raise SchemaError("out= operators with non-Tensor out arguments (e.g. Tensor[]) must return ()")
            elif len([a for a in args.out if not a.name.startswith("_scratch_")]) != len(self.returns):
                raise SchemaError("an out= operator must return each out argument (or nothing)")
        if self.name.name.inplace:
            self_arg = args.self_arg
            if self_arg is None or not self_arg.is_write:
                raise SchemaError("an in-place operator needs a mutable 'self' argument, e.g. 'Tensor(a!) self'")
            if self_arg.type == TENSOR:
                if len(self.returns) != 1 or self.returns[0].annotation != self_arg.annotation:
                    raise SchemaError(f"an in-place operator must return self, e.g. '-> Tensor({self_arg.annotation})'")
            elif self.returns:
                raise SchemaError("an in-place operator whose self is not a Tensor must return ()")
        if args.has_tensor_options and self.kind() is not SchemaKind.functional:
            raise SchemaError("tensor options (dtype, layout, device, pin_memory) are only allowed on functional operators")
        if "functional" in self.name.overload_name and self.kind() is not SchemaKind.functional:
            raise SchemaError("overload names containing 'functional' are reserved for functional operators")

    @_remembered
    def kind(self) -> SchemaKind:
        if self.name.name.inplace:
            return SchemaKind.inplace
        if any(a.name.startswith("_scratch_") for a in self.arguments.out):
            return SchemaKind.scratch
        if self.arguments.out:
            return SchemaKind.out
        if any(a.is_write for a in self.arguments.post_self_positional):
            return SchemaKind.mutable
        return SchemaKind.functional

    def is_out_fn(self) -> bool:
        return bool(self.arguments.out)

    def signature(self, keep_return_names: bool = False, strip_view_copy_name: bool = False,
                  strip_default: bool = False) -> "FunctionSchema":
        """The shape shared by the functional, in-place, out= and mutable variants of one op."""
        base = self.name.name.base
        if strip_view_copy_name:
            if base.endswith("_copy"):
                base = base.replace("_copy", "")
            elif base.endswith("_scatter"):
                base = base.replace("scatter", "inverse")
        args = self.arguments
        mutated = [Return(f"{a.name}_out" if keep_return_names else None, a.type, None) for a in self._unreturned_writes()]
        returns = tuple(Return(r.name if keep_return_names else None, r.type, None) for r in self.returns)
        name = OperatorName(BaseOperatorName(base, False, self.name.name.dunder_method), "")
        return FunctionSchema(name, args.signature(strip_default), returns + tuple(mutated))

    def _unreturned_writes(self) -> list[Argument]:
        """The written arguments no return aliases, in the order signature() returns them after
        the returns: self, the out arguments, then the positional arguments after self."""
        args = self.arguments
        self_first = [args.self_arg] if args.self_arg else []
        return [a for a in (*self_first, *args.out, *args.post_self_positional)
                if a.is_write and not any(a.annotation == r.annotation for r in self.returns)]

    def written_results(self) -> dict[str, int]:
        """Where each written argument's new value is among the results of the functional variant
        (whose returns are ``signature().returns``): at the index of the return aliasing it (out=
        arguments, an in-place self), else after the returns in signature()'s order
        (``_batch_norm_with_update.out``: out, save_mean, save_invstd, reserve at 0-3, then
        running_mean and running_var at 4 and 5). Written arguments signature() does not return
        (before self, or keyword-only and not out=) are absent."""
        slots = {}
        for a in self.arguments.all():
            if a.is_write:
                at = next((i for i, r in enumerate(self.returns) if r.annotation == a.annotation), None)
                if at is not None:
                    slots[a.name] = at
        for i, a in enumerate(self._unreturned_writes()):
            slots[a.name] = len(self.returns) + i
        return slots

    @_remembered
    def family_key(self) -> str:
        """Variants pair up when their signatures agree up to defaults (bernoulli_.float has
        p=0.5 where bernoulli.p has none; torchgen special-cases that one schema).

        The key is the text of ``signature(strip_default=True)``: a string hashes once,
        where the schema object would re-hash its whole tree at every dict lookup.
        """
        return str(self.signature(strip_default=True))

    @_remembered
    def view_signature(self) -> str:
        """Key pairing a view with its in-place view and *_copy twin (text, like family_key)."""
        return str(self.signature(strip_view_copy_name=True))


def _parse_returns(text: str) -> tuple[Return, ...]:
    if text.startswith("(") and text.endswith(")"):
        items = split_top_level(text[1:-1])
        if any(not item for item in items):
            raise SchemaError(f"empty return in '{text}'")
        return tuple(Return.parse(item) for item in items)
    if not text:
        raise SchemaError("missing return type after '->'; write '()' for no return")
    return (Return.parse(text),)


__all__ = [
    "Annotation", "Argument", "Arguments", "BaseOperatorName", "FunctionSchema", "OperatorName",
    "Return", "SchemaKind", "split_top_level", "BaseType", "OptionalType",
]
