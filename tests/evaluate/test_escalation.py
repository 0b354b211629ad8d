"""Escalation: hard rules in order, then the economic formula with its floor and cap."""

from __future__ import annotations

from typing import Any

import pytest

from schemas.request import ReviewRequest
from schemas.result import EscalationReason, FloorResult, Stage1Result, Violation, WallResult
from schemas.stages import ViolationCode
from workers.evaluate.escalation.formula import (
    decide_escalation,
    downstream_waste,
    estimate_stage2_cost,
    failure_probability,
)

from .builders import PRICE, request, skill

PASSED = Stage1Result(
    passed=True, floor=FloorResult(passed=True), wall=WallResult(passed=True, grade=1.0)
)
FLOOR_FAILED = Stage1Result(
    passed=False,
    floor=FloorResult(
        passed=False, violations=(Violation(code=ViolationCode.SYNTAX_ERROR, message="x"),)
    ),
    wall=WallResult(passed=False),
)
WALL_FAILED = Stage1Result(
    passed=False, floor=FloorResult(passed=True), wall=WallResult(passed=False, grade=0.1)
)


def _downstream(*costs: float) -> list[dict[str, Any]]:
    return [{"node_id": f"d{i}", "cost_usd": c} for i, c in enumerate(costs)]


def _example2(**fields: Any) -> ReviewRequest:
    base: dict[str, Any] = {
        "skill": skill(0.85, "novice"),
        "node_cost_usd": 0.05,
        "downstream": _downstream(0.04, 0.05, 0.03),
        "stage2_cost_usd": 0.045,
    }
    base.update(fields)
    return request(**base)


def test_worked_example_2_reproduces_exactly() -> None:
    decision = decide_escalation(_example2(), stage2_price=PRICE, stage1=PASSED)
    assert decision.failure_probability == pytest.approx(0.225)
    assert decision.downstream_waste == pytest.approx(0.072)
    assert decision.expected_waste == pytest.approx(0.0162)
    assert decision.expected_waste == pytest.approx(0.016, abs=5e-4)
    assert decision.stage2_cost == pytest.approx(0.045)
    assert decision.expected_waste < decision.stage2_cost
    assert (decision.escalate, decision.reason) == (False, EscalationReason.NONE)
    assert decision.stage2_cost_estimated is False
    assert decision.suppressed_by is None


@pytest.mark.parametrize(
    ("rate", "stage", "breaker", "expected"),
    [
        (0.85, "novice", "closed", 0.225),
        (0.85, "journeyman", "closed", 0.18),
        (0.85, "expert", "closed", 0.15),
        (0.9, "expert", "half_open", 0.15),
        (0.9, "expert", "open", 0.2),
        (0.8, "novice", "open", 0.6),
        (0.995, "expert", "closed", 0.01),
        (1.0, "expert", "closed", 0.01),
        (0.2, "novice", "open", 1.0),
    ],
)
def test_failure_probability_applies_stage_and_breaker_with_floor_and_ceiling(
    rate: float, stage: str, breaker: str, expected: float
) -> None:
    used, raw = failure_probability(request(skill=skill(rate, stage, breaker)))
    assert used == pytest.approx(expected)
    assert raw == pytest.approx(
        (1 - rate)
        * {"novice": 1.5, "journeyman": 1.2, "expert": 1.0}[stage]
        * {"closed": 1.0, "half_open": 1.5, "open": 2.0}[breaker]
    )


@pytest.mark.parametrize(
    ("node_cost", "costs", "cascade", "used", "raw"),
    [
        (0.05, (0.04, 0.05, 0.03), 0.6, 0.072, 0.072),
        (0.01, (0.04, 0.05, 0.03), 0.6, 0.05, 0.072),
        (0.01, (1.0,), 1.0, 0.05, 1.0),
        (0.05, (0.04, 0.05, 0.03), 0.3, 0.036, 0.036),
        (0.05, (), 0.6, 0.0, 0.0),
    ],
)
def test_downstream_waste_is_cascade_weighted_and_capped_at_5x_node_cost(
    node_cost: float, costs: tuple[float, ...], cascade: float, used: float, raw: float
) -> None:
    req = request(
        node_cost_usd=node_cost, downstream=_downstream(*costs), cascade_probability=cascade
    )
    assert downstream_waste(req) == pytest.approx((used, raw))


def test_cap_and_floor_are_recorded_beside_the_raw_values() -> None:
    req = request(
        skill=skill(1.0),
        node_cost_usd=0.01,
        downstream=_downstream(10.0),
        stage2_cost_usd=0.0001,
    )
    decision = decide_escalation(req, stage2_price=PRICE, stage1=PASSED)
    assert (decision.failure_probability, decision.raw_failure_probability) == (0.01, 0.0)
    assert decision.downstream_waste == pytest.approx(0.05)
    assert decision.raw_downstream_waste == pytest.approx(6.0)
    assert decision.expected_waste == pytest.approx(0.0005)
    assert decision.reason is EscalationReason.ECONOMIC


@pytest.mark.parametrize(
    ("flags", "reason"),
    [
        ({"feeds_human_gate": True}, EscalationReason.HUMAN_GATE),
        ({"final_deliverable": True}, EscalationReason.FINAL_DELIVERABLE),
        ({"irreversible": True}, EscalationReason.IRREVERSIBLE),
        (
            {"feeds_human_gate": True, "final_deliverable": True, "irreversible": True},
            EscalationReason.HUMAN_GATE,
        ),
        ({"final_deliverable": True, "irreversible": True}, EscalationReason.FINAL_DELIVERABLE),
        ({"feeds_human_gate": True, "irreversible": True}, EscalationReason.HUMAN_GATE),
    ],
)
def test_hard_rules_escalate_in_precedence_order_whatever_the_economics(
    flags: dict[str, bool], reason: EscalationReason
) -> None:
    decision = decide_escalation(_example2(flags=flags), stage2_price=PRICE, stage1=PASSED)
    assert (decision.escalate, decision.reason) == (True, reason)
    assert decision.expected_waste < decision.stage2_cost
    assert decision.failure_probability == pytest.approx(0.225)


@pytest.mark.parametrize(
    ("stage2_cost", "escalate"), [(0.0161, True), (0.0162, False), (0.045, False)]
)
def test_economic_rule_escalates_only_when_expected_waste_exceeds_stage2_cost(
    stage2_cost: float, escalate: bool
) -> None:
    decision = decide_escalation(
        _example2(stage2_cost_usd=stage2_cost), stage2_price=PRICE, stage1=PASSED
    )
    assert decision.escalate is escalate
    assert decision.reason is (EscalationReason.ECONOMIC if escalate else EscalationReason.NONE)


@pytest.mark.parametrize(
    ("stage1", "budget_left", "suppressed"),
    [
        (FLOOR_FAILED, True, "floor_failed"),
        (WALL_FAILED, True, "wall_failed"),
        (PASSED, False, "budget_exhausted"),
        (FLOOR_FAILED, False, "floor_failed"),
    ],
)
def test_warranted_escalation_is_suppressed_with_its_reason_and_keeps_the_breakdown(
    stage1: Stage1Result, budget_left: bool, suppressed: str
) -> None:
    decision = decide_escalation(
        _example2(flags={"final_deliverable": True}),
        stage2_price=PRICE,
        stage1=stage1,
        budget_left=budget_left,
    )
    assert decision.escalate is False
    assert decision.reason is EscalationReason.FINAL_DELIVERABLE
    assert decision.suppressed_by == suppressed
    assert decision.failure_probability == pytest.approx(0.225)
    assert decision.downstream_waste == pytest.approx(0.072)
    assert decision.expected_waste == pytest.approx(0.0162)
    assert decision.stage2_cost == pytest.approx(0.045)


def test_non_escalation_is_never_marked_suppressed() -> None:
    decision = decide_escalation(_example2(), stage2_price=PRICE, stage1=WALL_FAILED)
    assert (decision.escalate, decision.reason, decision.suppressed_by) == (
        False,
        EscalationReason.NONE,
        None,
    )


def test_stage2_cost_is_estimated_from_pricing_and_size_when_absent() -> None:
    small = request(output={"kind": "text", "content": "x" * 400})
    large = request(output={"kind": "text", "content": "x" * 40_000})
    a = decide_escalation(small, stage2_price=PRICE, stage1=PASSED)
    b = decide_escalation(large, stage2_price=PRICE, stage1=PASSED)
    assert a.stage2_cost_estimated and b.stage2_cost_estimated
    assert a.stage2_cost == pytest.approx(((1500 + 100) * 3.0 + 600 * 15.0) / 1e6)
    assert b.stage2_cost > a.stage2_cost
    assert estimate_stage2_cost(400, PRICE) == pytest.approx(a.stage2_cost)


def test_stage2_cost_counts_the_sources_and_task_the_judge_reads() -> None:
    """The Ceiling's prompt carries the node's input: a long article is paid for."""
    output = {"kind": "text", "content": "x" * 400}
    bare = decide_escalation(request(output=output), stage2_price=PRICE, stage1=PASSED)
    text = "yyyyyyyyy " * 1199 + "y" * 10  # 12,000 characters of words, as an article has
    article = [{"id": "doc", "text": text}]
    given = request(output=output, task="Summarize the document.", sources=article)
    read = decide_escalation(given, stage2_price=PRICE, stage1=PASSED)
    extra_tokens = (12_000 + len("Summarize the document.") + 400) // 4 - 100
    assert read.stage2_cost - bare.stage2_cost == pytest.approx(extra_tokens * 3.0 / 1e6, abs=1e-6)
    # The article pasted into the task as well is in the judge's prompt once, paid once.
    both = request(output=output, task=f"Summarize the document.\nDocument: {text}")
    both = both.model_copy(update={"sources": given.sources})
    assert (
        decide_escalation(both, stage2_price=PRICE, stage1=PASSED).stage2_cost == read.stage2_cost
    )
