"""The iterate loop, runtime-free: produce, review, and act on the verdict until it stops.

dag-quality.md's loop continues past the verdict: below the bar with iterations left,
the node runs again with the feedback; convergence stops the loop (a plateau accepts
the best attempt, a decline reverts to the best earlier one, oscillation stops it); out
of iterations, or fundamentally wrong, a person decides. The fleet already reads the
trend into each result's decision (``workers.evaluate.verdict.iteration``); ``next_step``
turns a decision into what the runtime does, and names which attempt's output goes on.

``iterate`` runs the loop for any async producer. Runtimes with a graph of their own
(``workers.runtime.langgraph_gate``) take ``next_step`` and ``after_person`` instead and
express the loop as their own edges.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from schemas.decisions import Decision, Feedback, Trend
from schemas.request import NodeOutput, ReviewRequest
from schemas.result import ReviewResult
from workers.runtime.verdicts import PersonDecided


class Action(StrEnum):
    """What the runtime does after a verdict."""

    ACCEPT = "accept"
    """Send ``keep_attempt``'s output downstream."""
    RETRY = "retry"
    """Run the node again with the feedback."""
    PERSON = "person"
    """A person decides: wait for them, or hand over to the runtime's own human step."""
    STOP = "stop"
    """A person rejected the last allowed attempt: the node's output goes nowhere."""


class StopReason(StrEnum):
    """Why the loop stopped (or, for a person's step, why it handed over)."""

    ACCEPTED = "accepted"
    """The fleet accepted the latest attempt."""
    PLATEAU = "plateau"
    """Quality stopped moving: the best attempt is accepted."""
    DEGRADING = "degrading"
    """Quality fell: the best earlier attempt is accepted instead."""
    OSCILLATING = "oscillating"
    """Scores flip up and down, the feedback is contradictory: stopped for a person."""
    STALLED = "stalled"
    """Plateau or decline with no attempt good enough: stopped for a person."""
    OUT_OF_ITERATIONS = "out_of_iterations"
    """Below the bar at ``max_iterations``: escalated to a person."""
    ESCALATED = "escalated"
    """The fleet wants a person now (fundamentally wrong, signals disagree, a judge failed)."""
    PERSON_ACCEPTED = "person_accepted"
    """A person accepted the attempt."""
    PERSON_REJECTED = "person_rejected"
    """A person rejected the last allowed attempt."""


@dataclass(frozen=True, slots=True)
class Step:
    """What to do after one verdict, and whose output it concerns."""

    action: Action
    """Accept, retry, ask a person, or stop."""
    keep_attempt: int
    """The attempt whose output goes downstream on ``accept`` (the best so far otherwise)."""
    stop: StopReason | None = None
    """Why the loop stops or hands over; None while it retries."""
    feedback: Feedback | None = None
    """What the next attempt must fix, on ``retry``."""


def next_step(result: ReviewResult, *, max_iterations: int) -> Step:
    """The step ``result``'s decision calls for; the gate's bound is ``max_iterations``.

    The fleet has already read the convergence into the decision: an ``accept`` after a
    plateau or a decline keeps the best attempt, which may be an earlier one.
    """
    trend = result.convergence.trend
    best = result.convergence.best_attempt
    if result.decision is Decision.ACCEPT:
        if trend in (Trend.PLATEAU, Trend.DEGRADING):
            return Step(Action.ACCEPT, best, StopReason(trend.value))
        return Step(Action.ACCEPT, result.attempt, StopReason.ACCEPTED)
    if result.decision is Decision.ITERATE and result.attempt < max_iterations:
        return Step(Action.RETRY, best, feedback=result.feedback)
    return Step(Action.PERSON, best, _why_a_person(result, max_iterations))


def _why_a_person(result: ReviewResult, max_iterations: int) -> StopReason:
    trend = result.convergence.trend
    if trend is Trend.OSCILLATING:
        return StopReason.OSCILLATING
    if trend in (Trend.PLATEAU, Trend.DEGRADING):
        return StopReason.STALLED
    if result.attempt >= max_iterations:
        return StopReason.OUT_OF_ITERATIONS
    return StopReason.ESCALATED


def after_person(decided: PersonDecided) -> Step:
    """The step a person's verdict calls for (the decision the fleet recomputed with it)."""
    decision = decided.decision
    if decision.decision is Decision.ACCEPT:
        return Step(Action.ACCEPT, decision.attempt, StopReason.PERSON_ACCEPTED)
    if decision.decision is Decision.ITERATE:
        return Step(Action.RETRY, decision.attempt, feedback=decision.feedback)
    return Step(Action.STOP, decision.attempt, StopReason.PERSON_REJECTED)


class Reviewer(Protocol):
    """What the loop needs of a client (``workers.client.AsyncReviewClient``)."""

    async def review(self, request: ReviewRequest, *, timeout: float) -> ReviewResult:
        """The verdict on ``request``, submitted unless already reviewed."""
        ...

    async def wait_for_person(
        self, dag_id: str, node_id: str, attempt: int, *, timeout: float
    ) -> PersonDecided:
        """A person's verdict on an escalated attempt."""
        ...


#: Makes the node's output for an attempt (1-based), given the feedback on the last one.
Producer = Callable[[int, Feedback | None], Awaitable[NodeOutput]]


@dataclass(frozen=True, slots=True)
class Attempt:
    """One attempt: what the node produced and the fleet's verdict on it."""

    output: NodeOutput
    result: ReviewResult


@dataclass(frozen=True, slots=True)
class LoopOutcome:
    """How the loop ended."""

    accepted: bool
    """Whether an output may go downstream."""
    stop: StopReason
    """Why the loop stopped."""
    kept_attempt: int
    """The attempt whose output is ``output``: the accepted one, else the best so far."""
    output: NodeOutput | None
    """That attempt's output; None when it was made before this loop started (a loop
    resumed at a later attempt), whose output the runtime keeps itself."""
    attempts: tuple[Attempt, ...]
    """Every attempt with its verdict, oldest first."""
    person: PersonDecided | None = None
    """The last person's verdict, when one decided."""


class PersonMode(StrEnum):
    """What the loop does when a person must decide."""

    WAIT = "wait"
    """Wait for the verdict (review page or ``windags-eval verdict``) and act on it."""
    HAND_OVER = "hand_over"
    """Return at once; the runtime's own human step takes over."""


async def iterate(
    reviewer: Reviewer,
    template: ReviewRequest,
    produce: Producer,
    *,
    timeout_s: float,
    person: PersonMode = PersonMode.WAIT,
    person_timeout_s: float = 3600.0,
) -> LoopOutcome:
    """Produce, review, and follow each verdict until the loop stops.

    ``template`` is the node's request; each attempt replaces its ``attempt`` (counting
    on from the template's) and ``output``. Re-running an attempt the fleet already
    reviewed (after a crash) costs nothing: its verdict answers at once.

    Raises:
        ReviewTimeoutError: a verdict, or a person, did not come in time.
        ReviewFailedError: the fleet could not review an attempt.
    """
    attempts: list[Attempt] = []
    number, feedback = template.attempt, None
    decided: PersonDecided | None = None
    while True:
        output = await produce(number, feedback)
        request = template.model_copy(update={"attempt": number, "output": output})
        result = await reviewer.review(request, timeout=timeout_s)
        attempts.append(Attempt(output, result))
        step = next_step(result, max_iterations=template.max_iterations)
        if step.action is Action.PERSON and person is PersonMode.WAIT:
            decided = await reviewer.wait_for_person(
                template.dag_id, template.node_id, number, timeout=person_timeout_s
            )
            step = after_person(decided)
        if step.action is not Action.RETRY:
            return _outcome(step, attempts, template.attempt, decided)
        number, feedback = number + 1, step.feedback


def _outcome(
    step: Step, attempts: list[Attempt], first: int, decided: PersonDecided | None
) -> LoopOutcome:
    if step.stop is None:  # only a retry has none, and a retry does not end the loop
        raise ValueError(f"no stop reason for {step}")
    index = step.keep_attempt - first
    return LoopOutcome(
        accepted=step.action is Action.ACCEPT,
        stop=step.stop,
        kept_attempt=step.keep_attempt,
        output=attempts[index].output if 0 <= index < len(attempts) else None,
        attempts=tuple(attempts),
        person=decided,
    )
