"""Small helpers for writing Markdown tables and code spans that survive any text."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

#: The first line of every generated page: who writes it and that it is not hand-edited.
NOTICE = "<!-- written by python -m docgen from the code; do not edit by hand -->"


def code(text: str) -> str:
    """``text`` as an inline code span, however many backticks it holds."""
    fence = "`" * (max((len(run) for run in _backtick_runs(text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _backtick_runs(text: str) -> Iterable[str]:
    run = ""
    for char in text:
        if char == "`":
            run += char
        elif run:
            yield run
            run = ""
    if run:
        yield run


def cell(text: str) -> str:
    """``text`` fit for one table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """A Markdown table's lines."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(value) for value in row) + " |" for row in rows]
    return lines


def prose(docstring: str | None) -> str:
    """A docstring as one paragraph of Markdown: reST's double backticks made single."""
    if not docstring:
        return ""
    return " ".join(docstring.split()).replace("``", "`")


def first_paragraph(docstring: str | None) -> str:
    """The first paragraph of a docstring, as Markdown prose."""
    if not docstring:
        return ""
    return prose(docstring.strip().split("\n\n", 1)[0])
