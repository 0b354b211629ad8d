"""What ``windags-eval demo`` prints once the reviews are in: tables, legend, summary.

Written for someone who has not read the README: nodes in the sample file's (DAG) order,
each figure explained once, and a closing summary of what happened and what it cost.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console

from schemas.decisions import Decision
from schemas.result import ReviewError, ReviewResult
from workers.local.console import results_table, scores_table, why_decided, why_escalated

LEGEND = (
    "[dim]decision: accept = goes downstream; iterate = sent back to its agent with feedback; "
    "escalate_human = waits for a person (the review page).\n"
    "stage 2 = the model judge (the Ceiling). It runs for final deliverables and irreversible "
    "actions, and when E\\[waste] (P(fail) x the downstream work lost if this node is wrong) is "
    "at least what a Stage 2 review costs. A node can go to a human without Stage 2: a failed "
    "floor or wall decides first.[/dim]"
)


def in_dag_order(
    entries: Sequence[ReviewResult | ReviewError], node_ids: Sequence[str]
) -> list[ReviewResult | ReviewError]:
    """``entries`` sorted as the nodes appear in the DAG file (results arrive as they finish)."""
    position = {node: index for index, node in enumerate(node_ids)}
    return sorted(entries, key=lambda e: (position.get(e.node_id or "", len(position)), e.attempt))


def print_report(
    console: Console,
    entries: Sequence[ReviewResult | ReviewError],
    *,
    title: str,
    took_s: float,
) -> None:
    """Both tables, the legend and the closing summary."""
    console.print(results_table(entries, title=title))
    console.print(LEGEND)
    console.print(scores_table(entries))
    for line in summary(entries, took_s=took_s):
        console.print(line)


def summary(entries: Sequence[ReviewResult | ReviewError], *, took_s: float) -> list[str]:
    """What happened, in a few lines: decisions with their nodes, escalations, spend."""
    results = [e for e in entries if isinstance(e, ReviewResult)]
    errors = [e for e in entries if isinstance(e, ReviewError)]
    lines = ["[bold]summary[/bold]"]
    for decision, words in (
        (Decision.ACCEPT, "accepted"),
        (Decision.ITERATE, "sent back to iterate"),
        (Decision.ESCALATE_HUMAN, "sent to a human"),
    ):
        chosen = [r for r in results if r.decision is decision]
        detail = "; ".join(
            f"{r.node_id} ({why_decided(r).removeprefix('to a human: ')})" for r in chosen
        )
        lines.append(f"  {words} ({len(chosen)})" + (f": {detail}" if detail else ""))
    escalated = [r for r in results if r.escalation.escalate]
    detail = "; ".join(f"{r.node_id} ({why_escalated(r)[5:]})" for r in escalated)
    lines.append(
        f"  escalated to Stage 2, the model judge ({len(escalated)} of {len(results)})"
        + (f": {detail}" if detail else "")
    )
    if errors:
        lines.append(f"  not reviewed (errors): {len(errors)}")
    lines.append("  " + spend_line(results, took_s))
    return lines


def spend_line(results: Sequence[ReviewResult], took_s: float) -> str:
    """The review spend, with why it is what it is."""
    spend = sum(r.envelope.review_cost_usd for r in results)
    if spend == 0:
        why = (
            "the built-in judge runs in the workers and costs nothing; with ANTHROPIC_API_KEY "
            "set, model calls are priced per token"
        )
    else:
        why = "model calls priced per token (WINDAGS_PRICING)"
    return f"review spend: ${spend:.4f} ({why}); wall time {took_s:.1f}s"
