"""Rendering results for people: the tables ``demo`` prints and the rows ``watch`` prints.

Each cell is worded to read without the README open: what was decided and why, whether
Stage 2 (the model judge) ran and the figures that decided it, every quality dimension by
its full name.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich import box
from rich.markup import escape
from rich.table import Table

from schemas.decisions import Decision, EscalationReason, Suppression
from schemas.human import HumanDecision, HumanReason, HumanVerdict
from schemas.quality import Dimension, ScoreStatus
from schemas.result import ReviewError, ReviewResult
from workers.evaluate.verdict.human import reasons_for_human

_DECISION_STYLE = {"accept": "green", "iterate": "yellow", "escalate_human": "red"}
_SUPPRESSED = {
    Suppression.FLOOR_FAILED: "the floor failed first",
    Suppression.WALL_FAILED: "the wall failed first",
    Suppression.BUDGET_EXHAUSTED: "the DAG's review budget is spent",
}
_HUMAN_WORDS = {
    HumanReason.DISAGREEMENT: "evaluators disagree",
    HumanReason.JUDGE_FAILED: "the model judge failed",
    HumanReason.POSITION_BIAS: "the judge's order check flipped",
    HumanReason.HOPELESS: "below 0.3 on a first attempt",
    HumanReason.OSCILLATING: "scores oscillate across attempts",
    HumanReason.STALLED: "no progress across attempts",
    HumanReason.OUT_OF_ITERATIONS: "out of iterations",
}
SCORES_NOTE = "0-1, higher is better; - = layer not run for this node, ? = its judge failed"
#: Column widths of ``watch``: one header, then rows that line up under it.
_WATCH_COLUMNS = (("node", 18), ("decision", 15), ("why", 34), ("stage 2 (model judge)", 44))


def results_table(entries: Iterable[ReviewResult | ReviewError], *, title: str = "") -> Table:
    """One row per node, in the order given: decision and why, Stage 2 and why, cost."""
    table = Table(title=title or None)
    table.add_column("node")
    table.add_column("decision")
    table.add_column("why")
    table.add_column("stage 2 (model judge): ran? why")
    table.add_column("cost $", justify="right")
    for entry in entries:
        table.add_row(*_cells(entry), _cost(entry))
    return table


def scores_table(entries: Iterable[ReviewResult | ReviewError]) -> Table:
    """Every quality dimension by its full name, one row per node."""
    table = Table(title="quality scores", caption=SCORES_NOTE)
    table.add_column("node")
    for dimension in Dimension:
        table.add_column(dimension.value, justify="right")
    for entry in entries:
        if isinstance(entry, ReviewError):
            table.add_row(entry.node_id or "?", *["" for _ in Dimension])
        else:
            table.add_row(entry.node_id, *(_score(entry, d) for d in Dimension))
    return table


def watch_header() -> Table:
    """The column names ``watch`` prints once."""
    return _watch_table(show_header=True)


def watch_row(entry: ReviewResult | ReviewError | HumanVerdict | HumanDecision) -> Table:
    """One stream entry as a headerless row aligned under ``watch_header``.

    A person's verdict and the decision recomputed with it follow the result they judge,
    so an operator watching a DAG sees the escalation come back.
    """
    table = _watch_table(show_header=False)
    if isinstance(entry, HumanVerdict):
        said = entry.feedback or entry.comment or ""
        table.add_row(
            entry.node_id,
            "[magenta]human verdict[/]",
            escape(f"{entry.action.value} by {entry.reviewer}" + (f": {said}" if said else "")),
            "",
        )
    elif isinstance(entry, HumanDecision):
        decision = entry.decision.value
        table.add_row(
            entry.node_id,
            f"[{_DECISION_STYLE[decision]}]{decision}[/]",
            escape(f"after {entry.action.value} by {entry.reviewer}"),
            "",
        )
    else:
        table.add_row(*_cells(entry))
    return table


def _watch_table(*, show_header: bool) -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_header=show_header, show_edge=False)
    for name, width in _WATCH_COLUMNS:
        table.add_column(name, width=width, no_wrap=True, overflow="ellipsis")
    return table


def _cells(entry: ReviewResult | ReviewError) -> tuple[str, str, str, str]:
    if isinstance(entry, ReviewError):
        where = f" ({entry.field})" if entry.field else ""
        # The message may quote the request: shown as text, never read as markup.
        return (
            entry.node_id or "?",
            f"[red]error: {entry.code}[/red]",
            escape(entry.message + where),
            "",
        )
    decision = entry.decision.value
    shown = f"[{_DECISION_STYLE[decision]}]{decision}[/]"
    return (entry.node_id, shown, why_decided(entry), why_escalated(entry))


def why_decided(result: ReviewResult) -> str:
    """The decision in words: the failed check, the person's reason, or the deciding score."""
    floor, wall = result.stage1.floor, result.stage1.wall
    basis = result.basis
    if result.decision is Decision.ESCALATE_HUMAN:
        reasons = ", ".join(_HUMAN_WORDS[r] for r in reasons_for_human(result))
        return f"to a human: {reasons or 'out of iterations'} ({basis.dimension} {basis.score:.2f})"
    if not floor.passed:
        codes = ", ".join(dict.fromkeys(v.code for v in floor.violations))
        return f"floor failed: {codes}"
    if not wall.passed:
        return f"wall failed (grade {wall.grade or 0:.2f})"
    return f"weakest: {basis.dimension} {basis.score:.2f}"


def why_escalated(result: ReviewResult) -> str:
    """Whether Stage 2 ran, and the rule or figures that decided it."""
    esc = result.escalation
    if esc.escalate:
        if esc.reason is EscalationReason.ECONOMIC:
            return f"yes: E\\[waste] ${esc.expected_waste:.3f} >= Stage 2 ${esc.stage2_cost:.3f}"
        return f"yes: {esc.reason.value.replace('_', ' ')}"
    if esc.suppressed_by is not None:
        return f"no: {_SUPPRESSED[esc.suppressed_by]}"
    return f"no: E\\[waste] ${esc.expected_waste:.3f} < Stage 2 ${esc.stage2_cost:.3f}"


def _cost(entry: ReviewResult | ReviewError) -> str:
    if isinstance(entry, ReviewError):
        return f"{entry.cost_usd:.4f}"
    return f"{entry.envelope.review_cost_usd:.4f}"


def _score(result: ReviewResult, dimension: Dimension) -> str:
    score = result.quality.get(dimension)
    if score.status is ScoreStatus.SCORED and score.value is not None:
        return f"{score.value:.2f}"
    return "?" if score.status is ScoreStatus.INDETERMINATE else "-"
