"""Rendering results for people: the tables ``watch`` and ``demo`` print."""

from __future__ import annotations

from collections.abc import Iterable

from rich.table import Table

from schemas.quality import Dimension, ScoreStatus
from schemas.result import ReviewError, ReviewResult

SHOWN = (
    Dimension.STRUCTURE,
    Dimension.SUBSTANCE,
    Dimension.CONSISTENCY,
    Dimension.GROUNDING,
    Dimension.CORRECTNESS,
    Dimension.COMPLETENESS,
)
_DECISION_STYLE = {"accept": "green", "iterate": "yellow", "escalate_human": "red"}


def results_table(entries: Iterable[ReviewResult | ReviewError], *, title: str = "") -> Table:
    """One row per node: verdict, escalation, key dimensions and cost."""
    table = Table(title=title or None, show_lines=False)
    table.add_column("node")
    table.add_column("decision")
    table.add_column("stage 1")
    table.add_column("escalation")
    for dimension in SHOWN:
        table.add_column(dimension.value[:4], justify="right")
    table.add_column("cost $", justify="right")
    for entry in entries:
        if isinstance(entry, ReviewError):
            table.add_row(
                entry.node_id or "?",
                f"[red]error: {entry.code}[/red]",
                (entry.field or "")[:20],
                entry.message[:40],
                *[""] * len(SHOWN),
                "",
            )
            continue
        table.add_row(
            entry.node_id,
            f"[{_DECISION_STYLE[entry.decision.value]}]{entry.decision.value}[/]",
            _stage1(entry),
            _escalation(entry),
            *(_score(entry, d) for d in SHOWN),
            f"{entry.envelope.review_cost_usd:.4f}",
        )
    return table


def _stage1(result: ReviewResult) -> str:
    floor = result.stage1.floor
    if not floor.passed:
        return "floor: " + ",".join(dict.fromkeys(v.code for v in floor.violations))[:30]
    wall = result.stage1.wall
    return f"wall {wall.resolution.value} {wall.grade:.2f}" if wall.grade is not None else "-"


def _escalation(result: ReviewResult) -> str:
    esc = result.escalation
    if esc.escalate:
        return f"yes: {esc.reason.value}"
    if esc.suppressed_by:
        return f"no: {esc.suppressed_by.value}"
    return f"no: {esc.expected_waste:.3f}<{esc.stage2_cost:.3f}"


def _score(result: ReviewResult, dimension: Dimension) -> str:
    score = result.quality.get(dimension)
    if score.status is ScoreStatus.SCORED and score.value is not None:
        return f"{score.value:.2f}"
    return "?" if score.status is ScoreStatus.INDETERMINATE else "-"
