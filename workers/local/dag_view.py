"""A DAG's progress for people at a terminal: one row per node, then its totals.

Every cell is built as ``rich.text.Text``: error messages and reviewer names are shown
as typed, never read as markup.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from schemas.progress import DagProgress, NodeProgress, NodeState
from schemas.quality import Dimension, ScoreStatus

STATE_WORDS = {
    NodeState.PENDING: ("not reviewed yet", "dim"),
    NodeState.ACCEPTED: ("accepted", "green"),
    NodeState.ITERATING: ("iterating", "yellow"),
    NodeState.WAITING_FOR_PERSON: ("waiting for a person", "red"),
    NodeState.REJECTED: ("rejected by a person", "red"),
    NodeState.ERROR: ("error", "red"),
}
#: Short column names of the quality dimensions (the legend spells them out).
SHORT = {d: d.value[:4] for d in Dimension}
LEGEND = (
    "* = on the critical path; "
    + ", ".join(f"{SHORT[d]} = {d.value}" for d in Dimension)
    + "; - = layer not run, ? = its judge failed"
)


def progress_table(progress: DagProgress) -> Table:
    """One row per node, registered nodes in the shape's order."""
    table = Table(title=Text(title(progress)), caption=LEGEND)
    for name in ("node", "state", "attempt", "decision", "stage 2", "downstream $"):
        table.add_column(name)
    for dimension in Dimension:
        table.add_column(SHORT[dimension], justify="right")
    table.add_column("spend $", justify="right")
    for node in progress.nodes:
        table.add_row(*_cells(node))
    return table


def title(progress: DagProgress) -> str:
    """The DAG, its registered version, deadline and critical path."""
    parts = [f"DAG {progress.dag_id}"]
    if progress.dag_version is None:
        parts.append("no registered shape")
    else:
        parts.append(f"version {progress.dag_version}")
    if progress.critical_path_s is not None:
        parts.append(f"critical path {progress.critical_path_s:g} s")
    if progress.deadline is not None:
        parts.append(f"deadline {progress.deadline.isoformat()}")
    return ", ".join(parts)


def totals_line(progress: DagProgress) -> Text:
    """Counts by state, Stage 2 escalations, and spend against the budget."""
    totals = progress.totals
    counts = totals.counts
    reviewed = totals.nodes - counts[NodeState.PENDING]
    line = (
        f"{reviewed} of {totals.nodes} nodes reviewed: accepted {counts[NodeState.ACCEPTED]}, "
        f"iterating {counts[NodeState.ITERATING]}, escalated to Stage 2 {totals.escalated}, "
        f"waiting for a person {counts[NodeState.WAITING_FOR_PERSON]}, "
        f"rejected {counts[NodeState.REJECTED]}, errors {counts[NodeState.ERROR]}. "
        f"Spend ${totals.spend_usd:.4f} (nodes ${totals.node_spend_usd:.4f} + reviews "
        f"${totals.review_spend_usd:.4f})"
    )
    if totals.budget_usd is None:
        return Text(line + ", no budget registered")
    over = " OVER BUDGET" if totals.over_budget else ""
    return Text(
        line + f" of a ${totals.budget_usd:.2f} budget{over}", style="bold red" if over else ""
    )


def _cells(node: NodeProgress) -> list[Text]:
    words, style = STATE_WORDS[node.state]
    name = Text(node.node_id + (" *" if node.critical else ""))
    if node.state is NodeState.ERROR and node.error:
        words = f"error: {node.error}"
    decision = node.decision.value if node.decision is not None else ""
    if node.decided_by:
        decision += f" (by {node.decided_by})"
    stage2 = ""
    if node.escalation_reason is not None:
        stage2 = f"yes: {node.escalation_reason.value}" if node.escalated else "no"
    downstream = ""
    if node.downstream_waste_usd is not None:
        source = node.downstream_source.value if node.downstream_source else "?"
        downstream = f"{node.downstream_waste_usd:.3f} ({source})"
    cells = [
        name,
        Text(words, style=style),
        Text(str(node.attempt) if node.attempt else ""),
        Text(decision),
        Text(stage2),
        Text(downstream),
    ]
    cells += [Text(_score(node, d)) for d in Dimension]
    spend = node.node_spend_usd + node.review_spend_usd
    cells.append(Text(f"{spend:.4f}" if node.attempts else ""))
    return cells


def _score(node: NodeProgress, dimension: Dimension) -> str:
    if node.quality is None:
        return ""
    score = node.quality.get(dimension)
    if score.status is ScoreStatus.SCORED and score.value is not None:
        return f"{score.value:.2f}"
    return "?" if score.status is ScoreStatus.INDETERMINATE else "-"
