""""Did you mean ...?" for a misspelt name: the one helper every unknown-name error uses."""
from __future__ import annotations

import difflib
from typing import Iterable, Optional


def close_match(word: str, choices: Iterable[str]) -> Optional[str]:
    """The choice most like ``word``, or None when none is close.

    Case is ignored for the comparison ('cpu' finds 'CPU'), but the choice comes back as written.
    """
    by_folded: dict[str, str] = {}
    for choice in sorted(set(map(str, choices))):  # sorted: ties resolve the same way every run
        by_folded.setdefault(choice.casefold(), choice)
    folded = str(word).casefold()
    if folded in by_folded:
        return by_folded[folded]
    found = difflib.get_close_matches(folded, by_folded, n=1)
    return by_folded[found[0]] if found else None


def did_you_mean(word: str, choices: Iterable[str], otherwise: str = "") -> str:
    """"did you mean 'x'?" for the closest choice, else ``otherwise``."""
    match = close_match(word, choices)
    return f"did you mean '{match}'?" if match is not None else otherwise
