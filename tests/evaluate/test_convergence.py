"""Convergence: improving, plateau, degrading, oscillating, and the best attempt."""

from __future__ import annotations

import pytest

from schemas.result import Trend
from workers.evaluate.verdict.convergence import monitor_convergence


@pytest.mark.parametrize(
    ("history", "current", "trend", "best", "keep"),
    [
        ((), 0.5, Trend.FIRST_ATTEMPT, 1, True),
        ((0.4,), 0.6, Trend.IMPROVING, 2, True),
        ((0.4, 0.5), 0.6, Trend.IMPROVING, 3, True),
        ((0.6,), 0.6, Trend.PLATEAU, 2, False),
        ((0.5, 0.6), 0.6, Trend.PLATEAU, 3, False),
        ((0.6, 0.61), 0.6, Trend.PLATEAU, 2, False),
        ((0.3, 0.6, 0.61), 0.6, Trend.PLATEAU, 3, False),
        ((0.7,), 0.5, Trend.DEGRADING, 1, False),
        ((0.7, 0.6), 0.5, Trend.DEGRADING, 1, False),
        ((0.5, 0.7), 0.5, Trend.DEGRADING, 2, False),
        ((0.5, 0.7, 0.5), 0.7, Trend.OSCILLATING, 4, False),
        ((0.7, 0.5), 0.7, Trend.OSCILLATING, 3, False),
        ((0.4, 0.7, 0.6), 0.65, Trend.OSCILLATING, 2, False),
    ],
)
def test_trend_is_classified_from_the_whole_history(
    history: tuple[float, ...], current: float, trend: Trend, best: int, keep: bool
) -> None:
    convergence = monitor_convergence(history, current)
    assert convergence.trend is trend
    assert convergence.best_attempt == best
    assert convergence.keep_iterating is keep
    assert convergence.scores == (*history, current)


def test_only_an_improving_run_keeps_iterating() -> None:
    for history, current in [((0.2, 0.4), 0.6), ((0.6, 0.6), 0.6), ((0.9,), 0.3)]:
        convergence = monitor_convergence(history, current)
        assert convergence.keep_iterating is (convergence.trend is Trend.IMPROVING)


def test_best_attempt_prefers_the_latest_of_equal_scores() -> None:
    assert monitor_convergence((0.8, 0.5), 0.8).best_attempt == 3
