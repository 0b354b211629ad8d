"""BC-EVAL-001..006, the evaluator seed's behavioural contracts, as the engine keeps them."""

from __future__ import annotations

from typing import Any

import pytest

from schemas.quality import CEILING_DIMENSIONS, QualityVector, ScoreStatus
from schemas.request import ReviewRequest
from schemas.result import Decision, EscalationReason, ReviewResult, WallResolution
from workers.judges.builtin import BuiltinJudge
from workers.review import review

from .builders import (
    BROKEN_FLASK,
    CLEAN_TEXT,
    GOOD_PYTHON,
    PRICE,
    FirstShownJudge,
    RecordingJudge,
    request,
    skill,
)

CONTRADICTION = "The cache is on by default. The cache is not on by default. " * 2

CASES: dict[str, dict[str, Any]] = {
    "floor_fail": {"output": {"kind": "python", "content": BROKEN_FLASK}},
    "wall_fail": {
        "output": {"kind": "text", "content": "TODO TBD lorem ipsum placeholder FIXME"},
        "downstream": [{"node_id": "d", "cost_usd": 0.1, "critical": True}],
    },
    "escalated": {
        "output": {"kind": "text", "content": CLEAN_TEXT},
        "flags": {"irreversible": True},
    },
    "not_escalated": {"output": {"kind": "python", "content": GOOD_PYTHON}},
}


def _run(case: str, judge: Any = None) -> ReviewResult:
    return review(request(**CASES[case]), judge or BuiltinJudge(), stage2_price=PRICE)


# BC-EVAL-001 ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(CASES))
def test_bc_eval_001_every_result_carries_an_envelope(case: str) -> None:
    result = _run(case)
    envelope = result.envelope
    assert envelope is not None
    assert envelope.stages_run[0] == "floor"
    assert envelope.output_chars == len(request(**CASES[case]).output.content)
    assert envelope.node_cost_usd == 0.02
    assert envelope.review_latency_ms >= 0
    assert '"envelope":null' not in result.model_dump_json()


def test_bc_eval_001_cases_cover_floor_fail_wall_fail_escalated_and_not() -> None:
    runs = {case: _run(case) for case in CASES}
    assert runs["floor_fail"].stage1.floor.passed is False
    assert runs["wall_fail"].stage1.wall.resolution is WallResolution.FAIL
    assert runs["escalated"].escalation.escalate is True
    assert runs["escalated"].envelope.stages_run == ("floor", "wall", "ceiling")
    assert runs["not_escalated"].escalation.escalate is False
    assert runs["not_escalated"].envelope.stages_run == ("floor", "wall")


# BC-EVAL-002 ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "flags",
    [{}, {"feeds_human_gate": True}, {"final_deliverable": True}, {"irreversible": True}],
)
def test_bc_eval_002_floor_failure_short_circuits_wall_and_ceiling(
    flags: dict[str, bool],
) -> None:
    judge = RecordingJudge()
    req = request(
        output={"kind": "json", "content": '{"a": '},
        flags=flags,
        skill=skill(0.1, "novice", "open"),
        downstream=[{"node_id": "d", "cost_usd": 5.0}],
        node_cost_usd=1.0,
        baseline={"kind": "json", "content": '{"a": 1}'},
    )
    result = review(req, judge, stage2_price=PRICE)
    assert judge.tasks == []
    assert result.stage1.wall.resolution is WallResolution.NOT_RUN
    assert result.stage2 is None
    assert result.escalation.escalate is False
    assert result.escalation.suppressed_by == "floor_failed"
    assert result.escalation.reason is not EscalationReason.NONE
    for dimension in CEILING_DIMENSIONS:
        assert result.quality.get(dimension).status is ScoreStatus.UNSCORED


# BC-EVAL-003 ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(CASES))
def test_bc_eval_003_every_decision_records_its_economic_breakdown(case: str) -> None:
    escalation = _run(case).escalation
    wire = escalation.model_dump()
    for name in (
        "failure_probability",
        "downstream_waste",
        "expected_waste",
        "stage2_cost",
        "raw_failure_probability",
        "raw_downstream_waste",
    ):
        assert isinstance(wire[name], float), name
    assert escalation.failure_probability >= 0.01
    assert escalation.stage2_cost > 0
    assert escalation.expected_waste == pytest.approx(
        escalation.failure_probability * escalation.downstream_waste, abs=1e-6
    )


# BC-EVAL-004 ---------------------------------------------------------------------------


def _pairwise_request() -> ReviewRequest:
    return request(
        output={"kind": "text", "content": CLEAN_TEXT},
        baseline={"kind": "text", "content": CLEAN_TEXT.replace("five hundred", "fifty")},
        flags={"feeds_human_gate": True},
    )


def test_bc_eval_004_pairwise_runs_in_both_orders_with_the_baseline() -> None:
    judge = RecordingJudge(score=0.9, pairwise=0.5)
    req = _pairwise_request()
    result = review(req, judge, stage2_price=PRICE)
    pairs = [t for t in judge.tasks if t.other is not None]
    assert [(t.output, t.other) for t in pairs] == [
        (req.output, req.baseline),
        (req.baseline, req.output),
    ]
    assert result.stage2 is not None and result.stage2.bias is not None
    assert result.stage2.bias.flagged is False
    assert result.stage2.bias.preference == pytest.approx(0.5)


def test_bc_eval_004_a_position_biased_judge_is_flagged_and_goes_to_a_human() -> None:
    judge = FirstShownJudge()
    result = review(_pairwise_request(), judge, stage2_price=PRICE)
    assert result.stage2 is not None and result.stage2.bias is not None
    bias = result.stage2.bias
    assert (bias.forward, bias.reverse) == pytest.approx((0.9, 0.1))
    assert bias.disagreement == pytest.approx(0.8)
    assert bias.flagged is True
    assert bias.retried is True
    assert bias.preference == 0.5
    assert len([t for t in judge.tasks if t.other is not None]) == 4
    assert result.decision is Decision.ESCALATE_HUMAN


# BC-EVAL-005 ---------------------------------------------------------------------------


@pytest.mark.parametrize("peer", [None, 0.2, 0.9])
def test_bc_eval_005_self_signal_never_changes_confidence_or_decision(peer: float | None) -> None:
    def run(self_score: float | None) -> ReviewResult:
        signals: dict[str, Any] = {"downstream": 0.7}
        if peer is not None:
            signals["peer"] = peer
        if self_score is not None:
            signals["self"] = self_score
        return review(request(signals=signals), BuiltinJudge(), stage2_price=PRICE)

    baseline = run(None)
    for self_score in (0.0, 0.5, 1.0):
        result = run(self_score)
        assert result.confidence.score == baseline.confidence.score
        assert result.confidence.weights == baseline.confidence.weights
        assert result.quality == baseline.quality
        assert result.decision is baseline.decision
        assert result.confidence.self_check is not None
        assert result.confidence.self_check.weight == 0.15


# BC-EVAL-006 ---------------------------------------------------------------------------


def test_bc_eval_006_no_scalar_collapse_of_the_quality_vector() -> None:
    result = _run("escalated")
    assert not hasattr(QualityVector, "__float__")
    assert not hasattr(QualityVector, "score")
    with pytest.raises(TypeError):
        float(result.quality)  # type: ignore[arg-type]
    assert len(result.quality.scored()) == 8
    assert result.basis.dimension in {*(d.value for d in result.quality.scored()), "confidence"}


def test_bc_eval_006_one_weak_dimension_blocks_acceptance_however_good_the_rest() -> None:
    judge = RecordingJudge(score=0.95)
    result = review(request(flags={"irreversible": True}), judge, stage2_price=PRICE)
    assert result.decision is Decision.ACCEPT
    weak = CLEAN_TEXT + " See the guide at http:/example.com/docs for more."
    judged = review(
        request(output={"kind": "text", "content": weak}, flags={"irreversible": True}),
        judge,
        stage2_price=PRICE,
    )
    assert judged.quality.grounding.value is not None and judged.quality.grounding.value < 0.8
    assert judged.basis.dimension == "grounding"
    assert judged.decision is not Decision.ACCEPT
