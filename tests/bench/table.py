"""Plain-text tables for benchmark reports: a header, a rule, aligned columns."""
from __future__ import annotations

from typing import Sequence


def render_table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str) -> str:
    """``align`` has one character per column: '<' left, '>' right."""
    lines = [tuple(header)] + [tuple(row) for row in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    text = ["  ".join(f"{cell:{a}{w}}" for cell, a, w in zip(line, align, widths)).rstrip() for line in lines]
    text.insert(1, "-" * len(text[0]))
    return "\n".join(text)
