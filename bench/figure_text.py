"""What every figure block is made of: a results file read, dollars, tables and paragraphs.

The blocks (``bench/figure_blocks.py``, ``bench/economics_blocks.py``) take each number
from ``bench/results/<name>.json`` and lay it out with these, so pages agree on how a
figure is written.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
#: The pages' line width, for the paragraphs a block writes (tables are left whole).
WIDTH = 95


def results(name: str) -> dict[str, Any]:
    """``bench/results/<name>.json``."""
    loaded: dict[str, Any] = json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))
    return loaded


def usd(value: float, *, sign: bool = False) -> str:
    """``$1.46``, ``-$0.08`` (``+$0.38`` with ``sign``); whole dollars from $100."""
    shown = f"${abs(value):,.0f}" if abs(value) >= 100 else f"${abs(value):,.2f}"
    return f"-{shown}" if value < 0 else (f"+{shown}" if sign else shown)


def pct(value: float) -> str:
    """``13.2%``."""
    return f"{value:.1%}"


def table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> list[str]:
    """A Markdown table's lines."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def paragraph(text: str) -> str:
    """``text``'s lines wrapped to the pages' width (a hyphenated word is never split)."""
    return "\n".join(
        textwrap.fill(line, WIDTH, break_on_hyphens=False) for line in text.splitlines()
    )
