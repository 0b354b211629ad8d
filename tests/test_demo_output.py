"""The demo as a newcomer meets it: readable tables, a summary, nothing left behind.

The tests here render real reviews (the built-in judge, in process); the end-to-end runs
of ``windags-eval demo`` are in ``tests/test_demo_run.py``.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from schemas.decisions import Decision
from schemas.human import HumanDecision, HumanVerdict, VerdictAction, VerdictChannel
from schemas.quality import Dimension
from schemas.result import ErrorCode, ReviewError, ReviewResult
from workers.intake import request_from_obj
from workers.local.console import results_table, scores_table, watch_header, watch_row
from workers.local.demo import sample_dag
from workers.local.demo_report import in_dag_order, summary
from workers.review import Reviewer
from workers.settings import JudgeBackend, Settings

ROOT = Path(__file__).resolve().parent.parent


def _text(*renderables: Any) -> str:
    console = Console(width=200, record=True, file=io.StringIO())
    for renderable in renderables:
        console.print(renderable)
    return console.export_text()


@pytest.fixture(scope="module")
def reviewed() -> list[ReviewResult]:
    settings = Settings(judge_backend=JudgeBackend.BUILTIN)
    review = Reviewer(settings)
    limits = {"max_request_bytes": 10**7, "max_output_chars": 10**6}
    return [review(request_from_obj(node, **limits)) for node in sample_dag("unit")]


def test_rows_follow_the_dag_file_whatever_order_results_arrive_in(
    reviewed: list[ReviewResult],
) -> None:
    order = [r.node_id for r in reviewed]
    shuffled = list(reversed(reviewed))
    assert [r.node_id for r in in_dag_order(shuffled, order)] == order


def test_the_tables_name_every_dimension_and_explain_each_escalation(
    reviewed: list[ReviewResult],
) -> None:
    text = _text(results_table(reviewed), scores_table(reviewed))
    for dimension in Dimension:
        assert dimension.value in text
    for result in reviewed:
        if not result.escalation.escalate and result.escalation.suppressed_by is None:
            esc = result.escalation
            assert f"E[waste] ${esc.expected_waste:.3f} < Stage 2 ${esc.stage2_cost:.3f}" in text


def test_a_node_sent_to_a_human_says_why_beside_a_stage_2_no(
    reviewed: list[ReviewResult],
) -> None:
    human = [
        r for r in reviewed if r.decision is Decision.ESCALATE_HUMAN and not r.escalation.escalate
    ]
    assert human, "the sample DAG has nodes sent to a person without Stage 2"
    lines = _text(results_table(human)).splitlines()
    for result in human:
        row = next(line for line in lines if f" {result.node_id} " in line)
        assert "to a human:" in row and "no:" in row


def test_the_summary_counts_decisions_escalations_and_says_why_spend_is_zero(
    reviewed: list[ReviewResult],
) -> None:
    text = "\n".join(summary(reviewed, took_s=1.0))
    count = {d: sum(r.decision is d for r in reviewed) for d in Decision}
    assert f"accepted ({count[Decision.ACCEPT]})" in text
    assert f"sent back to iterate ({count[Decision.ITERATE]})" in text
    assert f"sent to a human ({count[Decision.ESCALATE_HUMAN]})" in text
    escalated = sum(r.escalation.escalate for r in reviewed)
    assert f"({escalated} of {len(reviewed)})" in text
    assert "$0.0000" in text and "costs nothing" in text


def test_watch_prints_one_header_and_one_row_per_result(reviewed: list[ReviewResult]) -> None:
    text = _text(watch_header(), *(watch_row(r) for r in reviewed[:4]))
    lines = [line for line in text.splitlines() if line.strip()]
    assert sum("decision" in line for line in lines) == 1
    assert len([line for line in lines if line.split()[0] in {"plan", "schema", "api"}]) == 3
    header = lines[0]
    row = next(line for line in lines if line.split()[0] == "plan")
    assert header.index("decision") == row.index("accept")


def test_watch_shows_a_persons_verdict_and_the_decision_recomputed_with_it(
    reviewed: list[ReviewResult],
) -> None:
    hostile = "[red]fine[/red] [link=https://evil.example]click[/link]"
    verdict = HumanVerdict(
        dag_id="d",
        node_id="sql-optimizer",
        attempt=1,
        action=VerdictAction.SEND_BACK,
        human_score=0.4,
        feedback=hostile,
        reviewer="dana",
        channel=VerdictChannel.API,
        recorded_at="2026-12-03T13:00:00.000+00:00",
        machine_decision=Decision.ESCALATE_HUMAN,
    )
    judged = reviewed[0]
    decision = HumanDecision(
        dag_id="d",
        node_id="sql-optimizer",
        attempt=1,
        decision=Decision.ITERATE,
        supersedes=Decision.ESCALATE_HUMAN,
        action=VerdictAction.SEND_BACK,
        reviewer="dana",
        confidence=judged.confidence,
        quality=judged.quality,
        basis=judged.basis,
        convergence=judged.convergence,
    )
    error = ReviewError(
        dag_id="d",
        node_id="n1",
        attempt=1,
        code=ErrorCode.INVALID_REQUEST,
        message=f"bad field: {hostile}",
    )
    text = _text(watch_header(), watch_row(verdict), watch_row(decision), watch_row(error))
    rows = [line for line in text.splitlines() if line.split()[:1] in (["sql-optimizer"], ["n1"])]
    assert "human verdict" in rows[0] and "send_back by dana: [red]fine" in rows[0]
    assert "iterate" in rows[1] and "after send_back by dana" in rows[1]
    assert "[red]fine[/red]" in rows[2]  # the error's text, shown as typed, not as markup
