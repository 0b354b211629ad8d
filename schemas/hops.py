"""What one stage hands the next across the queue: only what the next one needs."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from schemas.base import Identifier, NonNegative, Usd, WireModel
from schemas.judging import TokenUsage
from schemas.quality import QualityVector
from schemas.request import ReviewRequest, review_key
from schemas.result import Confidence, EscalationDecision, Stage1Result, Stage2Result


class ReviewIdentity(WireModel):
    """Whose review a hop carries: read by every stage without parsing the request body."""

    dag_id: Identifier
    """The DAG run."""
    node_id: Identifier
    """The node."""
    attempt: Annotated[int, Field(ge=1)]
    """The attempt."""

    @classmethod
    def of(cls, request: ReviewRequest) -> ReviewIdentity:
        """The identity of ``request``."""
        return cls(dag_id=request.dag_id, node_id=request.node_id, attempt=request.attempt)

    @property
    def key(self) -> str:
        """The review key (``dag:node:attempt``): one stream entry per key."""
        return review_key(self.dag_id, self.node_id, self.attempt)


class Stage1Report(WireModel):
    """Stage 1's outcome: Floor and Wall, the vector so far, and what it cost."""

    stage1: Stage1Result
    """Floor and Wall verdicts."""
    quality: QualityVector
    """Floor and Wall dimensions scored, Ceiling dimensions unscored."""
    confidence: Confidence
    """Aggregated external signals."""
    review_ms: NonNegative
    """Engine time spent so far."""
    usage: TokenUsage = TokenUsage()
    """Tokens spent so far."""
    cost_usd: Usd = 0.0
    """Review spend so far."""
    fetches: Annotated[int, Field(ge=0)] = 0
    """HTTP requests sent for the output's references (0 when answered from the cache)."""
    fetched_bytes: Annotated[int, Field(ge=0)] = 0
    """Body bytes those requests read, after decompression."""
    dag_version: Annotated[int, Field(ge=1)] | None = None
    """The registered DAG version Stage 1 derived the request's ``downstream`` from;
    null when the request's own list (or none) was used."""


class Stage2Report(WireModel):
    """Stage 2's outcome, merged into the final result."""

    stage2: Stage2Result
    """The Ceiling verdict."""
    quality: QualityVector
    """All layers' dimensions."""
    review_ms: NonNegative
    """Engine time spent in Stage 2."""
    usage: TokenUsage = TokenUsage()
    """Tokens Stage 2 spent."""
    cost_usd: Usd = 0.0
    """What Stage 2 cost."""


class RoutedReview(WireModel):
    """The router's output: Stage 1 plus the escalation decision."""

    report: Stage1Report
    """Stage 1's outcome."""
    escalation: EscalationDecision
    """Whether Stage 2 runs, with its breakdown."""
