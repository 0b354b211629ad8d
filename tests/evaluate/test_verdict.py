"""The verdict: the weakest named gate decides; the envelope and near misses are assembled."""

from __future__ import annotations

import pytest

from schemas.quality import DimensionScore
from schemas.result import Decision, NearMissKind, Trend
from workers.evaluate.stage1 import run_stage1
from workers.evaluate.verdict.final import decision_basis
from workers.judges.builtin import BuiltinJudge
from workers.review import review

from .builders import BROKEN_FLASK, CLEAN_TEXT, PRICE, request


def test_basis_is_the_weakest_scored_dimension() -> None:
    quality = run_stage1(request()).quality.model_copy(
        update={"clarity": DimensionScore.scored(0.55, "long sentences")}
    )
    basis = decision_basis(quality, None, True)
    assert (basis.dimension, basis.score) == ("clarity", 0.55)


def test_basis_is_the_confidence_when_it_is_weaker_than_every_dimension() -> None:
    quality = run_stage1(request()).quality
    basis = decision_basis(quality, 0.42, True)
    assert (basis.dimension, basis.score) == ("confidence", 0.42)


def test_basis_is_structure_zero_when_the_floor_failed() -> None:
    quality = run_stage1(request(output={"kind": "python", "content": BROKEN_FLASK})).quality
    basis = decision_basis(quality, 0.99, False)
    assert (basis.dimension, basis.score) == ("structure", 0.0)


def test_floor_failure_has_no_quality_margin_but_a_full_envelope() -> None:
    result = review(
        request(
            output={"kind": "python", "content": BROKEN_FLASK},
            node_elapsed_s=9.0,
            node_timeout_s=10.0,
        ),
        BuiltinJudge(),
        stage2_price=PRICE,
    )
    assert result.envelope.quality_margin is None
    assert result.envelope.timeout_margin == pytest.approx(0.1)
    assert [m.kind for m in result.near_misses] == [NearMissKind.TIMEOUT]


def test_iterating_result_carries_feedback_and_an_accepted_one_does_not() -> None:
    weak = CLEAN_TEXT + " See [7] for the benchmark. Studies show it always helps."
    iterating = review(
        request(output={"kind": "text", "content": weak}), BuiltinJudge(), stage2_price=PRICE
    )
    assert iterating.decision is Decision.ITERATE
    assert iterating.feedback is not None
    assert iterating.feedback.overall_score == iterating.basis.score
    accepted = review(request(), BuiltinJudge(), stage2_price=PRICE)
    assert accepted.decision is Decision.ACCEPT
    assert accepted.feedback is None


def test_history_feeds_convergence_and_the_decision() -> None:
    weak = CLEAN_TEXT + " See [7] for the benchmark."
    result = review(
        request(output={"kind": "text", "content": weak}, attempt=3, history=[0.65, 0.65]),
        BuiltinJudge(),
        stage2_price=PRICE,
    )
    assert result.basis.score == pytest.approx(0.65)
    assert result.convergence.trend is Trend.PLATEAU
    assert result.convergence.scores == (0.65, 0.65, 0.65)
    assert result.decision is Decision.ACCEPT
