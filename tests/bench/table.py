"""Plain-text tables for benchmark reports: a header, a rule, aligned columns."""
from __future__ import annotations

import statistics
from typing import Callable, Mapping, Sequence


def render_table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str) -> str:
    """``align`` has one character per column: '<' left, '>' right."""
    lines = [tuple(header)] + [tuple(row) for row in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    text = ["  ".join(f"{cell:{a}{w}}" for cell, a, w in zip(line, align, widths)).rstrip() for line in lines]
    text.insert(1, "-" * len(text[0]))
    return "\n".join(text)


Runs = Mapping[str, Sequence[tuple]]  # scenario -> one tuple per run, median seconds first


def side_by_side(scenarios: Sequence[str], peer: tuple[str, Runs], ours: tuple[str, Runs],
                 cells: Callable[[Sequence[tuple]], Sequence[str]]) -> list[tuple[str, ...]]:
    """Rows (scenario, tool, runs, median s, *cells(runs), ours/peer) of each scenario each tool
    measured, the peer's row first; the ratio of the median seconds is on our row only."""
    (peer_name, theirs), (our_name, mine) = peer, ours
    rows = []
    for scenario in scenarios:
        for tool, results in ((peer_name, theirs), (our_name, mine)):
            if scenario not in results:
                continue
            seconds = statistics.median(r[0] for r in results[scenario])
            ratio = ""
            if results is mine and scenario in theirs:
                ratio = f"{seconds / statistics.median(r[0] for r in theirs[scenario]):.2f}x"
            rows.append((scenario, tool, str(len(results[scenario])), f"{seconds:.3f}", *cells(results[scenario]), ratio))
    return rows
