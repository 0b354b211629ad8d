"""The iteration decision: accept, iterate with feedback, or hand to a human."""

from __future__ import annotations

from schemas.result import Convergence, Decision, Trend
from workers.evaluate.thresholds import ACCEPT_SCORE, ACCEPTABLE_BEST, HOPELESS_SCORE


def decide_iteration(
    score: float,
    *,
    attempt: int,
    max_iterations: int,
    convergence: Convergence,
    human_review: bool = False,
    floor_failed: bool = False,
) -> Decision:
    """Apply the thresholds, then let convergence stop a loop that no longer helps.

    >= 0.8 accepts. < 0.3 on the first attempt goes to a human at once (fundamentally
    wrong). Below 0.8 with iterations left iterates, unless the trend says more tries
    will not help: a plateau or a degrading run accepts the best attempt when it is good
    enough, an oscillating one (contradictory feedback) stops. Out of iterations, a human.
    A Floor failure is rejected back to the node with its violations (dag-quality.md's
    "reject + specific errors") while iterations remain.
    """
    if human_review:
        return Decision.ESCALATE_HUMAN
    if floor_failed:
        return Decision.ITERATE if attempt < max_iterations else Decision.ESCALATE_HUMAN
    if score >= ACCEPT_SCORE:
        return Decision.ACCEPT
    if attempt == 1 and score < HOPELESS_SCORE:
        return Decision.ESCALATE_HUMAN
    if convergence.trend in (Trend.PLATEAU, Trend.DEGRADING):
        best = max(convergence.scores)
        return Decision.ACCEPT if best >= ACCEPTABLE_BEST else Decision.ESCALATE_HUMAN
    if convergence.trend is Trend.OSCILLATING:
        return Decision.ESCALATE_HUMAN
    if attempt < max_iterations:
        return Decision.ITERATE
    return Decision.ESCALATE_HUMAN
