"""The seed's three worked examples, end to end (docs/architecture.md: the engine's layers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemas.quality import CEILING_DIMENSIONS, WALL_DIMENSIONS, ScoreStatus
from schemas.result import Decision, EscalationReason, WallResolution
from workers.judges.builtin import BuiltinJudge
from workers.review import review

from .builders import BROKEN_FLASK, PRICE, RecordingJudge, decode, request, skill

SAMPLES = Path(__file__).resolve().parents[2] / "workers" / "samples"


def _sample(name: str) -> dict[str, object]:
    loaded: dict[str, object] = json.loads((SAMPLES / name).read_text(encoding="utf-8"))
    return loaded


def test_example_1_broken_flask_fails_the_floor_and_still_has_an_envelope() -> None:
    judge = RecordingJudge()
    req = request(
        output={"kind": "python", "content": BROKEN_FLASK},
        task="Generate a Flask route handler",
        skill=skill(0.9, "journeyman"),
        flags={"final_deliverable": True},
    )
    result = review(req, judge, stage2_price=PRICE)
    codes = [v.code for v in result.stage1.floor.violations]
    assert {"SyntaxError", "IncompleteFunction"} <= set(codes)
    assert (result.stage1.passed, result.stage1.floor.passed) == (False, False)
    assert result.stage1.wall.resolution is WallResolution.NOT_RUN
    assert result.stage1.wall.grade is None
    assert result.stage2 is None
    assert judge.tasks == []
    assert result.escalation.suppressed_by == "floor_failed"
    assert result.envelope is not None
    assert result.envelope.stages_run == ("floor",)
    assert result.envelope.output_chars == len(BROKEN_FLASK)
    assert result.quality.structure.value == 0.0
    for dimension in (*WALL_DIMENSIONS, *CEILING_DIMENSIONS):
        assert result.quality.get(dimension).status is ScoreStatus.UNSCORED


def test_example_1_sample_iterates_with_the_violations_as_feedback() -> None:
    result = review(
        decode(_sample("floor_failure_python.json")), BuiltinJudge(), stage2_price=PRICE
    )
    assert result.decision is Decision.ITERATE
    assert result.feedback is not None
    assert any("SyntaxError" in i.fix for i in result.feedback.specific_issues)
    assert result.basis.dimension == "structure"


def test_example_2_reproduces_the_seeds_numbers_and_stays_in_stage_1() -> None:
    judge = RecordingJudge()
    result = review(decode(_sample("example2_no_escalation.json")), judge, stage2_price=PRICE)
    escalation = result.escalation
    assert escalation.failure_probability == pytest.approx(0.225)
    assert escalation.downstream_waste == pytest.approx(0.072)
    assert escalation.expected_waste == pytest.approx(0.0162)
    assert escalation.expected_waste == pytest.approx(0.016, abs=5e-4)
    assert escalation.stage2_cost == pytest.approx(0.045)
    assert (escalation.escalate, escalation.reason) == (False, EscalationReason.NONE)
    assert result.stage2 is None
    assert judge.tasks == []
    assert result.envelope.stages_run == ("floor", "wall")


def test_example_3_weights_downstream_flags_human_review_and_fails_the_wall() -> None:
    result = review(
        decode(_sample("example3_conflicting_signals.json")), BuiltinJudge(), stage2_price=PRICE
    )
    confidence = result.confidence
    assert confidence.weights == {"peer": 0.15, "downstream": 0.45}
    assert confidence.score == pytest.approx((0.15 * 0.85 + 0.45 * 0.35) / 0.60)
    assert confidence.score == pytest.approx(0.475)
    assert confidence.disagreement == pytest.approx(0.5)
    assert confidence.human_review is True
    assert result.stage1.wall.passed is False
    assert result.stage1.wall.resolution is WallResolution.FAIL
    assert result.stage1.wall.grade == pytest.approx(0.475)
    assert result.decision is Decision.ESCALATE_HUMAN


def test_example_3_on_a_non_critical_consumer_passes_the_wall_with_a_warning() -> None:
    value = _sample("example3_conflicting_signals.json")
    value["downstream"] = [{"node_id": "execution-engine", "cost_usd": 0.03, "critical": False}]
    result = review(decode(value), BuiltinJudge(), stage2_price=PRICE)
    assert result.confidence.score == pytest.approx((0.25 * 0.85 + 0.35 * 0.35) / 0.60)
    assert result.stage1.wall.resolution is WallResolution.PASS_WITH_WARNING
    assert result.decision is Decision.ESCALATE_HUMAN
