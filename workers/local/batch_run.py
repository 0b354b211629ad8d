"""``windags-eval review --jsonl``: the batch with a progress bar, then its summary."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from schemas.request import ReviewRequest
from schemas.result import ReviewResult
from workers.errors import InvalidRequest
from workers.local.batch import Tally, review_lines
from workers.local.batch_view import summary_tables
from workers.settings import Settings


class EmptyBatchError(InvalidRequest):
    """A batch file with no line to review: a mistake, never a clean run of nothing."""

    def __str__(self) -> str:
        return self.reason


def run_batch(
    data: bytes,
    review: Callable[[ReviewRequest], ReviewResult],
    settings: Settings,
    out: str | None,
    *,
    name: str = "-",
) -> int:
    """Review every line of ``data``; 0 when every line was a request, else 1.

    Raises:
        EmptyBatchError: ``data`` holds no line but blank ones (``name`` says which file).
    """
    lines = data.splitlines()
    if not any(line.strip() for line in lines):
        raise EmptyBatchError("", f"{name}: empty (no request lines in it)")
    console = Console(stderr=True)
    tally = Tally()
    columns = (TextColumn("reviewing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    sink: TextIO = Path(out).open("w", encoding="utf-8") if out else sys.stdout
    try:
        with Progress(*columns, console=console, transient=True) as progress:
            bar = progress.add_task("lines", total=len(lines))
            for line in review_lines(lines, review, settings):
                sink.write(line.to_json() + "\n")
                tally.add(line)
                progress.update(bar, completed=line.number)
    finally:
        if out:
            sink.close()
    for table in summary_tables(tally):
        console.print(table)
    return 0 if tally.errors == 0 else 1
