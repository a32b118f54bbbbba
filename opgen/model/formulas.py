"""What a derivatives.yaml formula uses: saved inputs and outputs, and the free names it reads.

A formula is a C++ expression. Before the backward node is made, some expressions over an
argument are evaluated and only their value is saved (``self.sym_sizes()`` saves
``self_sym_sizes``, ``other.scalar_type()`` saves ``other_scalar_type``); whatever mention of the
argument remains saves the argument itself. The rules below give torchgen's names, applied in
torchgen's order, with its pattern semantics (a rule's pattern is the argument's name followed by
the rest, unanchored on the left), so the saved names match torchgen's exactly.
"""
from __future__ import annotations

import re
from functools import lru_cache
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence, Union

from .schema import CPP_KEYWORDS

Suffix = Union[str, Callable[[re.Match], str]]


@dataclass(frozen=True)
class SavedRule:
    pattern: str          # '{}' stands for the variable's name
    suffix: Suffix        # appended to the name: the saved attribute's name
    needle: str           # literal text every match contains: a formula without it needs no pattern compiled
    keeps_call: str = ""  # what the match becomes in the formula, when not the saved name itself


def _size_argument(match: re.Match) -> str:
    return "_sym_argsize_" + match.group(1).replace("-", "minus_")


# In torchgen's order (load_derivatives.saved_variables); an earlier rule consumes its text.
SAVED_RULES: tuple[SavedRule, ...] = (
    SavedRule(r"{}.sym_sizes\(\)", "_sym_sizes", "sym_sizes()"),
    SavedRule(r"{}->sym_sizes\(\)", "_sym_sizes_opt", "sym_sizes()"),
    SavedRule(r"{}.sym_blocksize\(\)", "_self_sym_blocksize_opt", "sym_blocksize()"),
    SavedRule(r"{}.options\(\)", "_options", "options()"),
    SavedRule(r"zeros_like\({}\)", "_info", "zeros_like(", keeps_call=".zeros()"),
    SavedRule(r"{}.sym_size\((-?\w+)\)", _size_argument, "sym_size("),
    SavedRule(r"{}.numel\(\)", "_numel", "numel()"),
    SavedRule(r"{}.sym_numel\(\)", "_sym_numel", "sym_numel()"),
    SavedRule(r"to_args_sizes\({}\)", "_args_sizes", "to_args_sizes("),
    SavedRule(r"to_args_sizes_symint\({}\)", "_args_sizes_symint", "to_args_sizes_symint("),
    SavedRule(r"to_args_scalartypes\({}\)", "_args_scalartypes", "to_args_scalartypes("),
    SavedRule(r"TensorGeometry\({}\)", "_geometry", "TensorGeometry("),
    SavedRule(r"{}.scalar_type\(\)", "_scalar_type", "scalar_type()"),
    SavedRule(r"{}.dim\(\)", "_dim", "dim()"),
    SavedRule(r"{}.sym_strides\(\)", "_sym_strides", "sym_strides()"),
    SavedRule(r"{}.layout\(\)", "_layout", "layout()"),
    SavedRule(r"{}.is_conj\(\)", "_conjugate", "is_conj()"),
)
# Fixed suffixes a derived name may carry (sym_size(N) gives _sym_argsize_N).
DERIVED_SUFFIXES = tuple(sorted({r.suffix for r in SAVED_RULES if isinstance(r.suffix, str)}))
_DERIVED_ARGSIZE = re.compile(r"_sym_argsize_(?:minus_)?\w+$")

# Spellings torchgen refuses (they are not symbolic-shape safe), with what to write instead.
REFUSED = (
    (re.compile(r"\.sizes\(\)|->sizes\(\)"), ".sizes() is not supported in formulas; use .sym_sizes()"),
    (re.compile(r"\.size\(-?\d+\)|->size\(-?\d+\)"), ".size(int) is not supported in formulas; use .sym_size(int)"),
    (re.compile(r"\.strides\(\)|->strides\(\)"), ".strides() is not supported in formulas; use .sym_strides()"),
)


def uses(name: str, formula: str) -> bool:
    """Whether ``name`` occurs in ``formula`` as a whole identifier (torchgen's IDENT_REGEX)."""
    return re.search(r"(^|\W)" + re.escape(name) + r"($|\W)", formula) is not None


def saved_names(formula: str, names: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """(the formula with derived expressions replaced, the saved names in torchgen's order) for
    the variables ``names`` (arguments, or outputs), each scanned in turn."""
    saved: list[str] = []
    for name in names:
        if name not in formula:  # every rule's pattern spells the name: nothing to match
            continue
        for rule in SAVED_RULES:
            if rule.needle not in formula:  # no match possible: spare compiling its pattern for this name
                continue

            def replace(match: re.Match, rule: SavedRule = rule, name: str = name) -> str:
                suffix = rule.suffix(match) if callable(rule.suffix) else rule.suffix
                saved.append(name + suffix)
                return name + suffix + rule.keeps_call if rule.keeps_call else name + suffix
            formula = _rule_pattern(rule.pattern, name).sub(replace, formula)
        if uses(name, formula):
            saved.append(name)
    return formula, tuple(saved)


@lru_cache(maxsize=None)
def _rule_pattern(pattern: str, name: str) -> re.Pattern:
    """A rule's pattern for one variable, compiled once per process (re's own cache holds 512;
    how many PyTorch's formulas need: docs/benchmarks.md, "Figures behind the code")."""
    return re.compile(pattern.format(name))


def refused_spellings(formula: str) -> list[str]:
    return [message for pattern, message in REFUSED if pattern.search(formula)]


def is_derived_name(name: str, variables: Iterable[str]) -> bool:
    """``self_sym_sizes``, ``other_scalar_type``, ``self_sym_argsize_0`` ...: a variable plus a
    derived-value suffix."""
    for variable in variables:
        if name.startswith(variable + "_"):
            rest = name[len(variable):]
            if rest in DERIVED_SUFFIXES or _DERIVED_ARGSIZE.fullmatch(rest):
                return True
    return False


# Free identifiers: not a member (after '.' or '->'), not qualified (after '::'), not a callee
# or template or namespace (before '(', '<' or '::'). String and character literals are skipped.
_LITERAL = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|/\*.*?\*/|//[^\n]*', re.S)
_LAMBDA_PARAMETERS = re.compile(r"\[[^\[\]]*\]\s*\(([^()]*)\)")
_CONSTANT = re.compile(r"^(?:M_[A-Z0-9_]+|k[A-Z]\w*)$")  # M_PI, kFloat, kCudnnDoubleBackwardMsg
_IDENTIFIER = re.compile(r"(?<![\w.])(?<!->)(?<!::)([A-Za-z_]\w*)(?!\w)(?!\s*(?:\(|::|<))")
# Names every formula may use besides its variables: C++ literals and keywords, the gradient
# names torchgen provides, and the few free constants PyTorch's formulas use.
BUILTIN_NAMES = frozenset("""
    nullptr auto int64_t size_t Tensor Scalar SymInt
    grad grads grad_input_mask retain_variables
""".split())


def free_names(formula: str) -> list[str]:
    """The identifiers ``formula`` reads that are not members, callees, namespaces or qualified."""
    text = _LITERAL.sub('""', formula)
    declared = {part.split()[-1].lstrip("&*") for params in _LAMBDA_PARAMETERS.findall(text)
                for part in params.split(",") if part.split()}
    found = []
    for match in _IDENTIFIER.finditer(text):
        name = match.group(1)
        if name in declared or name in CPP_KEYWORDS or _CONSTANT.match(name):
            continue
        if name not in found:
            found.append(name)
    return found


def unknown_names(formula: str, known: Iterable[str], variables: Iterable[str], forward: bool = False) -> list[str]:
    """Free names in ``formula`` that are none of ``known``, a builtin, or a derived name of one of
    ``variables`` (and, in a forward formula, ``<var>_p`` / ``<var>_t``)."""
    known = set(known) | BUILTIN_NAMES
    variables = tuple(variables)
    unknown = []
    for name in free_names(formula):
        if name in known or is_derived_name(name, variables):
            continue
        if forward and (name.endswith(("_p", "_t")) and (name[:-2] in variables or name[:-2] == "original_self")):
            continue
        unknown.append(name)
    return unknown


def used_gradient_indices(formula: str) -> list[int]:
    return [int(i) for i in re.findall(r"(?:^|\W)grads\[(\d+)\]", formula)]


def camel_case_node_prefix(base_name: str) -> str:
    """torchgen's class-name stem: add -> AddBackward, _foreach_add -> ForeachAddBackward,
    log1p -> Log1PBackward (each '_' part title-cased), '...ForwardBackward' -> '...Backward'."""
    return ("".join(part.title() for part in base_name.split("_")) + "Backward").replace("ForwardBackward", "Backward")


def split_names(key: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in key.split(","))

