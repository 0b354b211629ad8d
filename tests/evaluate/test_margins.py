"""Near misses: quality within 10% of a threshold, timeout margin under 20%."""

from __future__ import annotations

import pytest

from schemas.result import NearMissKind
from workers.evaluate.verdict.margins import (
    detect_near_misses,
    nearest_threshold,
    relative_margin,
    timeout_margin,
)

QUALITY = (0.8, 0.3)


def _misses(
    score: float | None = None,
    wall: float | None = None,
    escalation: tuple[float, float] = (0.0, 0.0),
    timeout: float | None = None,
) -> set[NearMissKind]:
    found = detect_near_misses(
        quality=None if score is None else ("correctness", score, QUALITY),
        wall_grade=wall,
        wall_thresholds=(0.6, 0.3),
        escalation=escalation,
        timeout=timeout,
    )
    return {m.kind for m in found}


@pytest.mark.parametrize(
    ("score", "near"),
    [
        (0.75, True),
        (0.85, True),
        (0.721, True),
        (0.72, False),
        (0.7, False),
        (0.5, False),
        (0.32, True),
        (0.28, True),
        (0.27, False),
        (0.88, False),
        (0.26, False),
        (1.0, False),
    ],
)
def test_quality_within_10_percent_of_a_threshold_is_a_near_miss(score: float, near: bool) -> None:
    assert (NearMissKind.QUALITY in _misses(score=score)) is near


@pytest.mark.parametrize(
    ("elapsed", "timeout", "margin", "near"),
    [
        (81.0, 100.0, 0.19, True),
        (80.0, 100.0, 0.2, False),
        (10.0, 100.0, 0.9, False),
        (120.0, 100.0, -0.2, True),
    ],
)
def test_timeout_margin_under_20_percent_is_a_near_miss(
    elapsed: float, timeout: float, margin: float, near: bool
) -> None:
    value = timeout_margin(elapsed, timeout)
    assert value == pytest.approx(margin)
    assert (NearMissKind.TIMEOUT in _misses(timeout=value)) is near


def test_timeout_margin_is_unknown_without_both_numbers() -> None:
    assert timeout_margin(None, 10.0) is None
    assert timeout_margin(5.0, None) is None
    assert _misses(timeout=None) == set()


def test_wall_grade_and_escalation_near_their_lines_are_logged() -> None:
    assert _misses(wall=0.62) == {NearMissKind.WALL}
    assert _misses(wall=0.9) == set()
    assert _misses(escalation=(0.0162, 0.017)) == {NearMissKind.ESCALATION}
    assert _misses(escalation=(0.0162, 0.045)) == set()


def test_margin_is_relative_and_signed() -> None:
    assert relative_margin(0.72, 0.8) == pytest.approx(-0.1)
    assert relative_margin(0.33, 0.3) == pytest.approx(0.1)
    assert nearest_threshold(0.5, QUALITY) == pytest.approx((0.8, -0.375))
    assert nearest_threshold(0.35, QUALITY) == pytest.approx((0.3, 1 / 6))


def test_near_miss_records_value_threshold_and_margin() -> None:
    (miss,) = detect_near_misses(
        quality=("clarity", 0.76, QUALITY),
        wall_grade=None,
        wall_thresholds=(0.6, 0.3),
        escalation=(0.0, 0.0),
        timeout=None,
    )
    assert (miss.metric, miss.value, miss.threshold) == ("clarity", 0.76, 0.8)
    assert miss.margin == pytest.approx(-0.05)
