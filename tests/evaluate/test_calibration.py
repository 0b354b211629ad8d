"""The learned router's P(fail | evidence): cold start is the seed, outcomes move it."""

from __future__ import annotations

import random
from typing import Any

import pytest

from schemas.calibration import CalibrationModel, Evidence, SkillRecord, TrainingOutcome
from schemas.request import ReviewRequest
from schemas.result import EscalationReason, FloorResult, Stage1Result, WallResult
from workers.evaluate.escalation.calibration import brier, ece, fit, posterior, predict
from workers.evaluate.escalation.formula import decide_escalation

from .builders import PRICE, request, skill


def _stage1(grade: float) -> Stage1Result:
    return Stage1Result(
        passed=True, floor=FloorResult(passed=True), wall=WallResult(passed=True, grade=grade)
    )


def _example2(**fields: Any) -> ReviewRequest:
    base: dict[str, Any] = {
        "skill": skill(0.85, "novice"),
        "node_cost_usd": 0.05,
        "downstream": [
            {"node_id": f"d{i}", "cost_usd": c} for i, c in enumerate((0.04, 0.05, 0.03))
        ],
        "stage2_cost_usd": 0.045,
    }
    base.update(fields)
    return request(**base)


@pytest.mark.parametrize("model", [None, CalibrationModel(version="v0-n0")])
def test_worked_example_2_on_a_fresh_deployment(model: CalibrationModel | None) -> None:
    decision = decide_escalation(
        _example2(), stage2_price=PRICE, stage1=_stage1(1.0), calibration=model
    )
    assert decision.failure_probability == pytest.approx(0.225)
    assert decision.prior_failure_probability == pytest.approx(0.225)
    assert decision.downstream_waste == pytest.approx(0.072)
    assert decision.expected_waste == pytest.approx(0.0162)
    assert decision.expected_value == pytest.approx(0.0162)
    assert decision.catch_rate == 1.0
    assert decision.evidence_terms == {}
    assert decision.expected_value is not None
    assert decision.expected_value < decision.stage2_cost == pytest.approx(0.045)
    assert (decision.escalate, decision.reason) == (False, EscalationReason.NONE)


def _record(successes: int, failures: int) -> CalibrationModel:
    return CalibrationModel(
        version="v1", outcomes=successes + failures, pseudo_count=20.0,
        skills={"skill-1": SkillRecord(successes=successes, failures=failures)},
    )  # fmt: skip


def test_a_record_worse_than_claimed_raises_p_fail_within_twenty_outcomes() -> None:
    req = request(skill=skill(0.95))
    cold = posterior(req, _stage1(1.0), None).probability
    after = posterior(req, _stage1(1.0), _record(0, 20)).probability
    assert cold == pytest.approx(0.05)
    # Beta mean (20 x 0.95 + 0) / 40 = 0.475: P(fail) 0.05 -> 0.525 after 20 failures.
    assert after == pytest.approx(0.525)
    assert posterior(req, _stage1(1.0), _record(0, 5)).probability > 2 * cold


def test_a_record_better_than_claimed_lowers_p_fail() -> None:
    req = request(skill=skill(0.75))
    after = posterior(req, _stage1(1.0), _record(20, 0)).probability
    assert after == pytest.approx(1 - (20 * 0.75 + 20) / 40)
    assert after < 0.25


def _outcomes(n: int, seed: int = 7) -> list[TrainingOutcome]:
    """Synthetic outcomes whose failure rate rises as the Wall grade falls."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        grade = rng.uniform(0.6, 1.0)
        failed = rng.random() < 0.05 + 1.5 * (1.0 - grade)
        rows.append(
            TrainingOutcome(
                skill_id=f"s{rng.randint(0, 9)}", claimed_success_rate=0.9, prior=0.1,
                evidence=Evidence(wall_grade=grade), failed=failed,
            )
        )  # fmt: skip
    return rows


def test_wall_grade_one_and_point_six_one_differ_once_calibrated() -> None:
    req = request(skill=skill(0.9))
    model = fit(_outcomes(600), version="v1-n600", min_outcomes=200)
    high = posterior(req, _stage1(1.0), model)
    low = posterior(req, _stage1(0.61), model)
    assert low.probability > high.probability + 0.2
    assert high.version == low.version == "v1-n600"
    assert low.terms["wall_gap"] > 0.0
    # Below min_outcomes the map is unused: both get the prior.
    young = fit(_outcomes(100), version="v1-n100", min_outcomes=200)
    assert posterior(req, _stage1(1.0), young).probability == pytest.approx(
        posterior(req, _stage1(0.61), young).probability
    )


def test_the_fitted_map_is_better_calibrated_than_the_prior_on_held_out_outcomes() -> None:
    model = fit(_outcomes(600), version="v1", min_outcomes=200)
    held = _outcomes(600, seed=99)
    failed = [o.failed for o in held]
    prior = [o.prior for o in held]
    learned = [predict(model, o.prior, o.evidence) for o in held]
    assert brier(learned, failed) < brier(prior, failed)
    assert ece(learned, failed) < ece(prior, failed)


def test_stage2_misses_lower_the_value_of_escalating() -> None:
    model = CalibrationModel(version="v1", catches=10, misses=30)
    decision = decide_escalation(
        _example2(), stage2_price=PRICE, stage1=_stage1(1.0), calibration=model
    )
    assert decision.catch_rate == pytest.approx(12 / 42)
    assert decision.expected_value == pytest.approx(0.0162 * 12 / 42, abs=1e-6)


def test_hard_rules_and_the_floor_hold_under_a_calibrated_model() -> None:
    model = fit(_outcomes(600), version="v1", min_outcomes=200)
    req = _example2(flags={"irreversible": True}, skill=skill(0.999))
    decision = decide_escalation(req, stage2_price=PRICE, stage1=_stage1(1.0), calibration=model)
    assert decision.reason is EscalationReason.IRREVERSIBLE and decision.escalate
    assert decision.failure_probability >= 0.01


def test_metrics_are_zero_for_perfect_predictions() -> None:
    assert brier([1.0, 0.0], [True, False]) == 0.0
    assert ece([1.0, 0.0], [True, False]) == 0.0
