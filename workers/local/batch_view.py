"""The summary a batch review prints: decisions, failures by code, and label agreement."""

from __future__ import annotations

from rich.table import Table

from workers.local.batch import Expect, Outcome, Tally


def summary_tables(tally: Tally) -> list[Table]:
    """What happened to the batch, in tables a person reads at a glance."""
    tables = [_decisions(tally)]
    if tally.failures:
        tables.append(_failures(tally))
    if tally.confusion:
        tables.append(_confusion(tally))
    return tables


def _decisions(tally: Tally) -> Table:
    table = Table(title="decisions")
    table.add_column("decision")
    table.add_column("lines", justify="right")
    for decision, count in sorted(tally.decisions.items()):
        table.add_row(decision, str(count))
    table.add_row("invalid line (typed error)", str(tally.errors))
    rate = tally.escalated / tally.reviewed if tally.reviewed else 0.0
    table.add_row("escalated to Stage 2", f"{tally.escalated} ({rate:.0%})")
    return table


def _failures(tally: Tally) -> Table:
    table = Table(title="why outputs were not accepted (a line may count under several codes)")
    table.add_column("code")
    table.add_column("lines", justify="right")
    for code, count in tally.failures.most_common(15):
        table.add_row(code, str(count))
    return table


def _confusion(tally: Tally) -> Table:
    outcomes = list(Outcome)
    table = Table(title="labels (rows) against outcomes (columns)")
    table.add_column("expected")
    for outcome in outcomes:
        table.add_column(outcome.value, justify="right")
    for expect in Expect:
        counts = [tally.confusion[(expect.value, o.value)] for o in outcomes]
        if any(counts):
            table.add_row(expect.value, *map(str, counts))
    recall, false_rejects = tally.recall, tally.false_reject_rate
    table.caption = (
        f"defect recall {_pct(recall)} (reject or floor not accepted)   "
        f"false-reject rate {_pct(false_rejects)} (accept labels not accepted)"
    )
    return table


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
