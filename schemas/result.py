"""`ReviewResult`: the verdict published on the DAG's stream, and its parts."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field

from schemas.base import NonNegative, Unit, Usd, WireModel
from schemas.judging import TokenUsage
from schemas.quality import Dimension, QualityVector


class Violation(WireModel):
    """One way the output breaks its Floor."""

    code: str
    """Stable machine name (``SyntaxError``, ``SchemaViolation``, ``MissingField``...)."""
    message: str
    """What is wrong, with the location when known."""
    field: str | None = None
    """The offending field or path, when there is one."""


class FloorResult(WireModel):
    """Structural validity: parse, contract, required fields, length bounds."""

    passed: bool
    """Whether every Floor check passed."""
    violations: tuple[Violation, ...] = ()
    """Every violation found."""


class WallIssue(WireModel):
    """One content problem the Wall found."""

    dimension: Dimension
    """The Wall dimension it lowers."""
    code: str
    """Stable machine name (``Filler``, ``Contradiction``, ``DanglingCitation``...)."""
    message: str
    """What is wrong."""
    field: str | None = None
    """Where, when it can be located."""
    fix: str = ""
    """What would repair it; feeds iteration feedback."""


class WallResolution(StrEnum):
    """How the Wall grade was read (partial grades depend on criticality)."""

    PASS = "pass"
    PASS_WITH_WARNING = "pass_with_warning"
    FAIL = "fail"
    NOT_RUN = "not_run"


class WallResult(WireModel):
    """Semantic validity: substance, consistency, grounding."""

    passed: bool
    """Whether the grade resolved to a pass."""
    grade: Unit | None = None
    """Combined Wall grade; null when the Wall did not run."""
    resolution: WallResolution = WallResolution.NOT_RUN
    """How the grade was resolved."""
    issues: tuple[WallIssue, ...] = ()
    """Every issue found."""


class Stage1Result(WireModel):
    """Floor and Wall, run on every node."""

    passed: bool
    """Floor and Wall both passed."""
    floor: FloorResult
    """The structural check."""
    wall: WallResult
    """The semantic check; not run when the Floor failed."""


class EscalationReason(StrEnum):
    """Why Stage 2 ran, or ``none``."""

    HUMAN_GATE = "human_gate"
    FINAL_DELIVERABLE = "final_deliverable"
    IRREVERSIBLE = "irreversible"
    ECONOMIC = "economic"
    NONE = "none"


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
    suppressed_by: str | None = None
    """Why a warranted escalation did not run (``wall_failed``, ``budget_exhausted``)."""


class BiasCheck(WireModel):
    """Position-bias control for a pairwise comparison (BC-EVAL-004)."""

    forward: Unit
    """P(candidate better) with the candidate shown first."""
    reverse: Unit
    """P(candidate better) with the candidate shown second."""
    disagreement: Unit
    """|forward - reverse|."""
    flagged: bool
    """Disagreement above 0.3: position bias detected."""
    retried: bool = False
    """Whether the pair was run again after a flag."""
    preference: Unit
    """Mean of both orders; 0.5 is a tie."""


class CeilingStatus(StrEnum):
    """Whether the Ceiling produced scores."""

    SCORED = "scored"
    INDETERMINATE = "indeterminate"


class Stage2Result(WireModel):
    """The Ceiling evaluation, run only when escalated."""

    status: CeilingStatus
    """Scored, or indeterminate when the judge failed (never a 0 score)."""
    model: str
    """The judge that scored."""
    error: str | None = None
    """The judge's failure, when indeterminate."""
    length_normalised: bool = True
    """Scores were corrected for output length (verbosity bias)."""
    bias: BiasCheck | None = None
    """Pairwise position-bias check, when a baseline was given."""
    calls: Annotated[int, Field(ge=0)] = 0
    """Judge calls made."""


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


class Envelope(WireModel):
    """Operating margins of the node and of its review; computed for every node."""

    review_cost_usd: Usd
    """What reviewing this node cost (all judge calls)."""
    tokens: TokenUsage
    """Tokens the review consumed."""
    node_cost_usd: Usd
    """What producing the output cost."""
    output_chars: Annotated[int, Field(ge=0)]
    """Size of the output."""
    review_latency_ms: NonNegative
    """Time the review took in the engine."""
    node_elapsed_s: NonNegative | None = None
    """How long the node ran, when reported."""
    timeout_margin: float | None = None
    """1 - elapsed / timeout; below 0.2 is a near miss."""
    quality_margin: float | None = None
    """Relative distance of the decision score from its nearest threshold."""
    stages_run: tuple[str, ...]
    """Which stages ran (``floor``, ``wall``, ``ceiling``)."""


class NearMissKind(StrEnum):
    """What nearly crossed a line."""

    QUALITY = "quality"
    TIMEOUT = "timeout"
    WALL = "wall"
    ESCALATION = "escalation"


class NearMiss(WireModel):
    """A value within the near-miss band of a threshold."""

    kind: NearMissKind
    """What it concerns."""
    metric: str
    """The value's name."""
    value: float
    """The value."""
    threshold: float
    """The line it nearly crossed."""
    margin: float
    """Relative distance to the threshold."""


class ReviewResult(WireModel):
    """The verdict on one node attempt. Exactly one per (dag_id, node_id, attempt)."""

    schema_version: int = 1
    """Bumped on incompatible changes."""
    dag_id: str
    """The DAG run."""
    node_id: str
    """The node."""
    attempt: Annotated[int, Field(ge=1)]
    """The attempt reviewed."""
    stage1: Stage1Result
    """Floor and Wall."""
    stage2: Stage2Result | None
    """Ceiling, null when not run."""
    escalation: EscalationDecision
    """The Stage 2 decision with its breakdown."""
    quality: QualityVector
    """Per-dimension quality."""
    confidence: Confidence
    """Aggregated external signals."""
    decision: Decision
    """Accept, iterate or escalate to a human."""
    basis: DecisionBasis
    """The gate that decided."""
    feedback: Feedback | None = None
    """Guidance for the next attempt, when iterating."""
    convergence: Convergence
    """Quality across attempts."""
    envelope: Envelope
    """Operating margins; never null (BC-EVAL-001)."""
    near_misses: tuple[NearMiss, ...] = ()
    """Values within the near-miss band."""
    trace_id: str | None = None
    """OpenTelemetry trace of this review, when tracing is on."""


class ErrorCode(StrEnum):
    """Why a request produced no review."""

    INVALID_REQUEST = "invalid_request"
    OVERSIZED = "oversized"
    POISON = "poison"
    INTERNAL = "internal"


class ReviewError(WireModel):
    """The stream entry for a request that could not be reviewed: never a silent drop."""

    schema_version: int = 1
    """Bumped on incompatible changes."""
    dag_id: str | None
    """The DAG, when it could be read from the request."""
    node_id: str | None
    """The node, when it could be read."""
    attempt: int | None
    """The attempt, when it could be read."""
    code: ErrorCode
    """The class of failure."""
    field: str | None = None
    """The offending field, for invalid requests."""
    message: str
    """One line saying what was wrong."""
    tries: Annotated[int, Field(ge=0)] = 1
    """How many times the fleet tried before giving up."""
    cost_usd: Usd = 0.0
    """What the failed tries cost."""


__all__ = [
    "BiasCheck",
    "CeilingStatus",
    "Confidence",
    "Convergence",
    "Decision",
    "DecisionBasis",
    "Envelope",
    "ErrorCode",
    "EscalationDecision",
    "EscalationReason",
    "Feedback",
    "FeedbackIssue",
    "FloorResult",
    "NearMiss",
    "NearMissKind",
    "ReviewError",
    "ReviewResult",
    "SelfCheck",
    "Stage1Result",
    "Stage2Result",
    "Trend",
    "Violation",
    "WallIssue",
    "WallResolution",
    "WallResult",
]
