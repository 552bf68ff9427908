"""Aligned text tables for the command line: first column left, the others right-aligned."""

from __future__ import annotations

from collections.abc import Sequence


def text_table(headers: Sequence[object], rows: Sequence[Sequence[object]]) -> str:
    """Headers, a rule of dashes, then the rows; cells are ``str()``-ed, columns padded."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = [
        "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
        .rstrip()
        for r in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
