"""Convergence: the shape of quality across a node's attempts."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from schemas.result import Convergence, Trend

#: Scores closer than this are "the same" for plateau detection.
PLATEAU_TOLERANCE = 0.02


def monitor_convergence(history: Sequence[float], current: float) -> Convergence:
    """Classify the trajectory ``history + [current]`` (oldest first).

    Plateau: stable (within tolerance) for 2+ iterations. Oscillating: the direction of
    change flips at least twice, or flips once with a plateau ruled out on three points.
    Degrading: the latest score is below the best earlier one. Improving otherwise.
    """
    scores = (*history, current)
    best = max(range(len(scores)), key=lambda i: (scores[i], i)) + 1
    if len(scores) == 1:
        return Convergence(
            trend=Trend.FIRST_ATTEMPT, scores=scores, best_attempt=1, keep_iterating=True
        )
    trend = _trend(scores)
    return Convergence(
        trend=trend,
        scores=tuple(round(s, 6) for s in scores),
        best_attempt=best,
        keep_iterating=trend is Trend.IMPROVING,
    )


def _trend(scores: Sequence[float]) -> Trend:
    steps = [b - a for a, b in itertools.pairwise(scores)]
    moves = [s for s in steps if abs(s) > PLATEAU_TOLERANCE]
    if len(steps) >= 2 and all(abs(s) <= PLATEAU_TOLERANCE for s in steps[-2:]):
        return Trend.PLATEAU
    flips = sum(1 for a, b in itertools.pairwise(moves) if (a > 0) != (b > 0))
    if flips >= 2 or (flips == 1 and len(moves) >= 2 and moves[-1] > 0):
        return Trend.OSCILLATING
    if scores[-1] < max(scores[:-1]) - PLATEAU_TOLERANCE:
        return Trend.DEGRADING
    if abs(steps[-1]) <= PLATEAU_TOLERANCE:
        return Trend.PLATEAU
    return Trend.IMPROVING
