"""What the review decided, and why: escalation, confidence, iteration, convergence."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field

from schemas.base import NonNegative, Unit, Usd, WireModel
from schemas.topology import DownstreamSource


class EscalationReason(StrEnum):
    """Why Stage 2 ran, or ``none``."""

    HUMAN_GATE = "human_gate"
    FINAL_DELIVERABLE = "final_deliverable"
    IRREVERSIBLE = "irreversible"
    ECONOMIC = "economic"
    NONE = "none"


class Suppression(StrEnum):
    """Why a warranted escalation did not run."""

    FLOOR_FAILED = "floor_failed"
    """The Floor failed: the Ceiling is short-circuited (BC-EVAL-002)."""
    WALL_FAILED = "wall_failed"
    """The Wall failed: the Ceiling is skipped."""
    BUDGET_EXHAUSTED = "budget_exhausted"
    """The DAG's review budget is spent."""


class EscalationDecision(WireModel):
    """The Stage 2 decision with its full economic breakdown (BC-EVAL-003)."""

    escalate: bool
    """Whether Stage 2 runs."""
    reason: EscalationReason
    """The rule that decided."""
    failure_probability: Unit
    """P(fail) = (1 - success_rate) x stage factor x breaker penalty, floored at 0.01."""
    downstream_waste: Usd
    """Sum of downstream costs x cascade probability, capped at 5x the node's cost."""
    expected_waste: Usd
    """P(fail) x downstream waste."""
    stage2_cost: Usd
    """Cost of a Stage 2 review (given or estimated)."""
    stage2_cost_estimated: bool = False
    """Whether ``stage2_cost`` came from the pricing table rather than the request."""
    raw_failure_probability: NonNegative = 0.0
    """P(fail) before the floor and the 1.0 ceiling."""
    raw_downstream_waste: Usd = 0.0
    """Downstream waste before the 5x cap."""
    suppressed_by: Suppression | None = None
    """Why a warranted escalation did not run."""
    prior_failure_probability: Unit | None = None
    """The seed formula's P(fail) with the claimed success rate (learned router)."""
    skill_success_rate: Unit | None = None
    """The success rate used: the claim, or its Beta posterior over the skill's record."""
    evidence_terms: dict[str, float] = Field(default_factory=dict)
    """Each Stage 1 evidence feature's contribution to the logit of P(fail)."""
    catch_rate: Unit | None = None
    """P(Stage 2 catches | fail) from Stage 2's record (1.0 on a cold start)."""
    model_version: str | None = None
    """The calibration model that priced the decision; null on a cold start."""
    expected_value: Usd | None = None
    """P(fail) x catch rate x downstream waste: what escalating is worth."""
    downstream_source: DownstreamSource | None = None
    """Where the downstream list priced came from: the request's, the registered DAG's,
    or none; null on results from before it was recorded."""
    dag_version: Annotated[int, Field(ge=1)] | None = None
    """The registered DAG version the downstream was derived from, when it was."""


class SelfCheck(WireModel):
    """The producer's self-assessment: a process check, excluded from quality (BC-EVAL-005)."""

    score: Unit
    """What the agent said of its own output."""
    weight: Unit = 0.15
    """Its weight as a process self-check."""
    gap: float
    """Self score minus the confidence score; large positive gaps show sycophancy."""


class Confidence(WireModel):
    """Aggregated evaluator signals (weights renormalised over the available ones)."""

    score: Unit | None
    """Weighted average of the available non-self signals; null when there are none."""
    weights: dict[str, float]
    """The weights applied, after conflict rules and renormalisation."""
    rules: tuple[str, ...] = ()
    """The conflict rules that fired, in order."""
    disagreement: Unit | None = None
    """|peer - downstream| when both are present."""
    human_review: bool = False
    """Disagreement above 0.4: a human should look."""
    self_check: SelfCheck | None = None
    """The self-assessment, kept out of ``score``."""


class Decision(StrEnum):
    """What the DAG should do with the node."""

    ACCEPT = "accept"
    ITERATE = "iterate"
    ESCALATE_HUMAN = "escalate_human"


class FeedbackIssue(WireModel):
    """One concrete thing to fix."""

    field: str
    """Where (a field, a dimension, a section)."""
    issue: str
    """What is wrong."""
    fix: str
    """What to do about it."""


class Feedback(WireModel):
    """Structured guidance for the next attempt (the shape dag-quality.md gives)."""

    overall_score: Unit
    """The decision basis score."""
    specific_issues: tuple[FeedbackIssue, ...]
    """What to fix, most important first."""
    strengths_to_preserve: tuple[str, ...]
    """What is good and must survive the rewrite."""
    iteration_guidance: str
    """One paragraph on where to focus."""


class Trend(StrEnum):
    """The shape of quality across attempts."""

    FIRST_ATTEMPT = "first_attempt"
    IMPROVING = "improving"
    PLATEAU = "plateau"
    DEGRADING = "degrading"
    OSCILLATING = "oscillating"


class Convergence(WireModel):
    """Quality across iterations, and what it advises."""

    trend: Trend
    """The detected trend."""
    scores: tuple[Unit, ...]
    """All attempts' scores, oldest first, this one last."""
    best_attempt: Annotated[int, Field(ge=1)]
    """1-based attempt with the best score."""
    keep_iterating: bool
    """Whether another iteration is worth it."""


class DecisionBasis(WireModel):
    """The named gate that decided: never a collapse of the vector."""

    dimension: str
    """The weakest scored dimension, or ``confidence`` or ``floor``."""
    score: Unit
    """Its score."""


__all__ = [
    "Confidence",
    "Convergence",
    "Decision",
    "DecisionBasis",
    "EscalationDecision",
    "EscalationReason",
    "Feedback",
    "FeedbackIssue",
    "SelfCheck",
    "Trend",
]
