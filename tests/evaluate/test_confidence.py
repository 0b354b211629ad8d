"""Confidence: renormalised weights over available signals, conflict rules, self excluded."""

from __future__ import annotations

import json
from typing import Any

import pytest

from schemas.request import Signals
from workers.evaluate.verdict.confidence import aggregate_confidence, weighted_average


def _signals(**fields: Any) -> Signals:
    return Signals.model_validate_json(json.dumps(fields))


def test_no_signals_give_no_score_and_no_weights() -> None:
    confidence = aggregate_confidence(None, downstream_critical=False)
    assert (confidence.score, confidence.weights, confidence.human_review) == (None, {}, False)


@pytest.mark.parametrize(
    ("fields", "critical", "weights", "score"),
    [
        ({"peer": 0.8}, False, {"peer": 0.25}, 0.8),
        ({"downstream": 0.6}, False, {"downstream": 0.35}, 0.6),
        ({"human": 0.4}, False, {"human": 0.5}, 0.4),
        (
            {"peer": 0.8, "downstream": 0.6},
            False,
            {"peer": 0.25, "downstream": 0.35},
            (0.25 * 0.8 + 0.35 * 0.6) / 0.60,
        ),
        (
            {"peer": 0.8, "downstream": 0.6, "human": 1.0},
            False,
            {"peer": 0.25, "downstream": 0.35, "human": 0.5},
            (0.25 * 0.8 + 0.35 * 0.6 + 0.5 * 1.0) / 1.10,
        ),
        (
            {"peer": 0.85, "downstream": 0.35, "peer_reliability": 0.82},
            True,
            {"peer": 0.15, "downstream": 0.45},
            (0.15 * 0.85 + 0.45 * 0.35) / 0.60,
        ),
        (
            {"peer": 0.9, "downstream": 0.6, "peer_has_expertise": True},
            False,
            {"peer": 0.40, "downstream": 0.25},
            (0.40 * 0.9 + 0.25 * 0.6) / 0.65,
        ),
        (
            {"peer": 0.9, "downstream": 0.6, "peer_has_expertise": True},
            True,
            {"peer": 0.15, "downstream": 0.45},
            (0.15 * 0.9 + 0.45 * 0.6) / 0.60,
        ),
        (
            {"peer": 0.9, "downstream": 0.6, "peer_reliability": 0.5},
            False,
            {"peer": 0.125, "downstream": 0.35},
            (0.125 * 0.9 + 0.35 * 0.6) / 0.475,
        ),
        (
            {"peer": 0.9, "downstream": 0.6, "peer_reliability": 0.7},
            False,
            {"peer": 0.25, "downstream": 0.35},
            (0.25 * 0.9 + 0.35 * 0.6) / 0.60,
        ),
        (
            {"peer": 0.9, "downstream": 0.6, "peer_reliability": 0.5},
            True,
            {"peer": 0.075, "downstream": 0.45},
            (0.075 * 0.9 + 0.45 * 0.6) / 0.525,
        ),
    ],
)
def test_score_is_the_renormalised_weighted_average_of_available_signals(
    fields: dict[str, Any], critical: bool, weights: dict[str, float], score: float
) -> None:
    confidence = aggregate_confidence(_signals(**fields), downstream_critical=critical)
    assert confidence.weights == pytest.approx(weights)
    assert confidence.score == pytest.approx(score, abs=1e-6)


def test_worked_example_3_scores_0_475_and_flags_human_review() -> None:
    signals = _signals(peer=0.85, downstream=0.35, peer_reliability=0.82)
    confidence = aggregate_confidence(signals, downstream_critical=True)
    assert confidence.score == pytest.approx(0.475)
    assert confidence.disagreement == pytest.approx(0.5)
    assert confidence.human_review is True
    assert confidence.rules[0].startswith("disagreement 0.50 > 0.4")
    assert any("critical downstream" in r for r in confidence.rules)


@pytest.mark.parametrize(
    ("peer", "downstream", "flagged"),
    [(0.9, 0.5, False), (0.85, 0.35, True), (0.2, 0.7, True), (0.5, 0.5, False), (1.0, 0.0, True)],
)
def test_disagreement_above_0_4_flags_human_review(
    peer: float, downstream: float, flagged: bool
) -> None:
    confidence = aggregate_confidence(
        _signals(peer=peer, downstream=downstream), downstream_critical=False
    )
    assert confidence.disagreement == pytest.approx(abs(peer - downstream))
    assert confidence.human_review is flagged


def test_disagreement_needs_both_peer_and_downstream() -> None:
    confidence = aggregate_confidence(_signals(peer=1.0, human=0.0), downstream_critical=False)
    assert (confidence.disagreement, confidence.human_review) == (None, False)


@pytest.mark.parametrize("self_score", [0.0, 0.3, 1.0])
def test_self_signal_never_changes_the_score_but_is_kept_as_a_self_check(
    self_score: float,
) -> None:
    without = aggregate_confidence(_signals(peer=0.6, downstream=0.7), downstream_critical=False)
    with_self = aggregate_confidence(
        _signals(peer=0.6, downstream=0.7, self=self_score), downstream_critical=False
    )
    assert with_self.score == without.score
    assert with_self.weights == without.weights
    assert "self" not in with_self.weights
    assert with_self.self_check is not None
    assert with_self.self_check.weight == 0.15
    assert with_self.self_check.score == self_score
    assert without.score is not None
    assert with_self.self_check.gap == pytest.approx(self_score - without.score)


def test_self_signal_alone_gives_no_score() -> None:
    confidence = aggregate_confidence(_signals(self=0.99), downstream_critical=False)
    assert confidence.score is None
    assert confidence.weights == {}
    assert confidence.self_check is not None and confidence.self_check.score == 0.99


def test_weighted_average_of_nothing_is_none() -> None:
    assert weighted_average({}, {"peer": 0.25}) is None
    assert weighted_average({"peer": 0.5}, {"peer": 0.0}) is None


def test_a_human_signal_settles_a_disagreement_instead_of_asking_for_another_human() -> None:
    confidence = aggregate_confidence(
        _signals(peer=0.85, downstream=0.35, human=1.0), downstream_critical=True
    )
    assert confidence.disagreement == pytest.approx(0.5)
    assert confidence.human_review is False
    assert confidence.rules[0] == "disagreement 0.50 > 0.4: settled by the human signal"
    # (0.15 * 0.85 + 0.45 * 0.35 + 0.50 * 1.0) / 1.10
    assert confidence.score == pytest.approx(0.713636, abs=1e-6)
