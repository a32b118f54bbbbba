"""Errors that point at the input that caused them.

Every user-facing problem is an ``OpgenError`` carrying one or more
``Diagnostic``s, each with a ``FILE:LINE`` location.  CLIs print them and exit
with status 2; nothing else in opgen formats locations.  ``did_you_mean`` is the
one helper every unknown-name message uses.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Iterable, Optional


@dataclass(frozen=True, order=True)
class Location:
    file: str
    line: int  # 1-based; 0 when the whole file is meant

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass(frozen=True)
class Diagnostic:
    location: Optional[Location]
    message: str

    def __str__(self) -> str:
        prefix = f"{self.location}: " if self.location else ""
        return f"{prefix}error: {self.message}"


class OpgenError(Exception):
    """One or more problems in user input (yaml, CLI arguments, ...)."""

    def __init__(self, diagnostics: Iterable[Diagnostic] | str, location: Optional[Location] = None):
        if isinstance(diagnostics, str):
            diagnostics = [Diagnostic(location, diagnostics)]
        self.diagnostics: tuple[Diagnostic, ...] = tuple(diagnostics)
        super().__init__("\n".join(str(d) for d in self.diagnostics))

    def __reduce__(self):
        # Rebuilt from its diagnostics when it crosses processes (a render in a worker): a
        # subclass's own __init__ arguments are not kept, and the message must stay the same.
        return (_rebuilt, (type(self), self.diagnostics, dict(self.__dict__)))

    def at(self, location: Location) -> "OpgenError":
        """The same error, placed at ``location`` where it had no place yet."""
        return OpgenError(
            Diagnostic(d.location or location, d.message) for d in self.diagnostics
        )


def _rebuilt(cls: type, diagnostics: tuple[Diagnostic, ...], state: dict) -> OpgenError:
    error = cls.__new__(cls)
    OpgenError.__init__(error, diagnostics)
    error.__dict__.update(state)
    return error


class SchemaError(OpgenError):
    """A schema string that does not follow the schema language."""


class DiagnosticCollector:
    """Gathers every problem in a file so one run reports them all (up to a cap)."""

    def __init__(self, cap: int = 50):
        self.cap = cap
        self.diagnostics: list[Diagnostic] = []
        self.dropped = 0

    def add(self, location: Optional[Location], message: str) -> None:
        if len(self.diagnostics) < self.cap:
            self.diagnostics.append(Diagnostic(location, message))
        else:
            self.dropped += 1

    def extend(self, error: OpgenError, location: Optional[Location] = None) -> None:
        for d in error.diagnostics:
            self.add(d.location or location, d.message)

    def sort_by_location(self) -> None:
        """Checks run by kind, people read by line: file order, stable, unplaced problems last."""
        self.diagnostics.sort(key=lambda d: (d.location is None, d.location or Location("", 0)))

    def raise_if_any(self) -> None:
        if not self.diagnostics:
            return
        diags = list(self.diagnostics)
        if self.dropped:
            diags.append(Diagnostic(None, f"... and {self.dropped} more errors not shown"))
        raise OpgenError(diags)


# How alike a suggestion must be (difflib's ratio). difflib's default suits small closed sets
# (keys, types, tags), whose messages list the choices anyway. Among the thousands of operator
# names something always scores 0.6: 'symeig' finds 'sign' (0.60), 'kl_div_backward' finds
# '_pdist_backward' (0.80), both operators removed from PyTorch, not misspelt; one wrong letter
# in a name of 7 or more characters scores 0.857 or more.
CLOSE_RATIO = 0.6
OPERATOR_NAME_RATIO = 0.85


def one_edit_apart(a: str, b: str) -> bool:
    """One typo between a and b: a character inserted, dropped, changed, or two neighbours swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    if len(a) == len(b):
        swapped = a[start + 2:] == b[start + 2:] and a[start:start + 2] == b[start:start + 2][::-1]
        return a[start + 1:] == b[start + 1:] or swapped
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    return longer[start + 1:] == shorter[start:]


def close_match(word: str, choices: Iterable[str], cutoff: float = CLOSE_RATIO) -> Optional[str]:
    """The choice most like ``word``, or None when none is close: one typo away ('rleu' finds
    'relu', whatever the ratio), or at least ``cutoff`` alike by difflib's ratio.

    Case is ignored for the comparison ('cpu' finds 'CPU'), but the choice comes back as written.
    """
    by_folded: dict[str, str] = {}
    for choice in sorted(set(map(str, choices))):  # sorted: ties resolve the same way every run
        by_folded.setdefault(choice.casefold(), choice)
    folded = str(word).casefold()
    if folded in by_folded:
        return by_folded[folded]
    typos = [choice for choice in by_folded if one_edit_apart(folded, choice)]
    found = difflib.get_close_matches(folded, typos, n=1, cutoff=0) or difflib.get_close_matches(folded, by_folded, n=1, cutoff=cutoff)
    return by_folded[found[0]] if found else None


def did_you_mean(word: str, choices: Iterable[str], otherwise: str = "", cutoff: float = CLOSE_RATIO) -> str:
    """"did you mean 'x'?" for the closest choice, else ``otherwise``."""
    match = close_match(word, choices, cutoff)
    return f"did you mean '{match}'?" if match is not None else otherwise
