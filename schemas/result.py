"""`ReviewResult`: the verdict published on the DAG's stream, and `ReviewError`.

The parts live in ``schemas.stages`` and ``schemas.decisions``; they are re-exported here
so consumers import the whole contract from one place.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field

from schemas.base import NonNegative, Usd, WireModel
from schemas.decisions import (
    Confidence,
    Convergence,
    Decision,
    DecisionBasis,
    EscalationDecision,
    EscalationReason,
    Feedback,
    FeedbackIssue,
    SelfCheck,
    Trend,
)
from schemas.judging import TokenUsage
from schemas.quality import QualityVector
from schemas.stages import (
    BiasCheck,
    CeilingStatus,
    Certainty,
    FloorResult,
    GroundingUse,
    Stage1Result,
    Stage2Result,
    Violation,
    WallIssue,
    WallResolution,
    WallResult,
)


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
    fetches: Annotated[int, Field(ge=0)] = 0
    """HTTP requests sent for the output's references, redirects and confirmations
    included (0 when the cache answered, or nothing is cited)."""
    fetched_bytes: Annotated[int, Field(ge=0)] = 0
    """Body bytes those requests read, after decompression."""


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
    "Certainty",
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
    "GroundingUse",
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
