"""The iteration decision: accept, iterate, or a human; convergence can stop a loop."""

from __future__ import annotations

import pytest

from schemas.result import Decision
from workers.evaluate.verdict.convergence import monitor_convergence
from workers.evaluate.verdict.iteration import decide_iteration

A, IT, H = Decision.ACCEPT, Decision.ITERATE, Decision.ESCALATE_HUMAN


def _decide(
    score: float,
    attempt: int = 1,
    history: tuple[float, ...] = (),
    max_iterations: int = 3,
    **flags: bool,
) -> Decision:
    return decide_iteration(
        score,
        attempt=attempt,
        max_iterations=max_iterations,
        convergence=monitor_convergence(history, score),
        **flags,
    )


@pytest.mark.parametrize(
    ("score", "attempt", "history", "decision"),
    [
        (0.8, 1, (), A),
        (0.95, 3, (0.5, 0.6), A),
        (0.79, 1, (), IT),
        (0.5, 1, (), IT),
        (0.3, 1, (), IT),
        (0.29, 1, (), H),
        (0.0, 1, (), H),
        (0.29, 2, (0.1,), IT),
        (0.6, 2, (0.4,), IT),
        (0.7, 3, (0.5, 0.6), H),
        (0.79, 5, (0.1, 0.3, 0.5, 0.7), H),
    ],
)
def test_thresholds_decide_with_iterations_left_or_spent(
    score: float, attempt: int, history: tuple[float, ...], decision: Decision
) -> None:
    assert _decide(score, attempt, history, max_iterations=max(3, attempt)) is decision


def test_single_attempt_budget_escalates_instead_of_iterating() -> None:
    assert _decide(0.6, 1, (), max_iterations=1) is H


@pytest.mark.parametrize(
    ("score", "attempt", "history", "decision", "why"),
    [
        (0.6, 2, (0.6,), A, "plateau: accept the best (>= 0.5)"),
        (0.45, 2, (0.45,), H, "plateau below 0.5: nobody accepts it"),
        (0.5, 2, (0.7,), A, "degrading: stop, revert to the best (0.7)"),
        (0.3, 3, (0.4, 0.35), H, "degrading with best 0.4 < 0.5"),
        (0.7, 3, (0.7, 0.5), H, "oscillating: the feedback is contradictory"),
    ],
)
def test_convergence_stops_a_loop_that_no_longer_helps(
    score: float, attempt: int, history: tuple[float, ...], decision: Decision, why: str
) -> None:
    assert _decide(score, attempt, history, max_iterations=5) is decision, why


def test_human_review_flag_overrides_a_passing_score() -> None:
    assert _decide(0.95, human_review=True) is H


@pytest.mark.parametrize(("attempt", "decision"), [(1, IT), (2, IT), (3, H)])
def test_floor_failure_iterates_while_attempts_remain(attempt: int, decision: Decision) -> None:
    assert _decide(0.0, attempt, (0.0,) * (attempt - 1), floor_failed=True) is decision
