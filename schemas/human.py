"""The human gate on the wire: a reviewer's verdict and the decision recomputed with it.

A result that ends in ``escalate_human`` waits in a review queue until a person judges
it. Their verdict goes on the DAG's stream as its own entry (``kind=human_verdict``),
exactly once per (dag_id, node_id, attempt), followed by the decision recomputed with
the human signal at weight 0.50 (``kind=decision``). A second ``ReviewResult`` for the
same attempt would break the one-result-per-key promise subscribers dedup on, so the
recomputed decision is a model of its own.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field

from schemas.base import Identifier, Unit, WireModel
from schemas.calibration import Evidence
from schemas.decisions import Confidence, Convergence, Decision, DecisionBasis, Feedback
from schemas.quality import Dimension, QualityVector
from schemas.request import BreakerState, ReviewRequest, SkillStage
from schemas.result import ReviewResult

#: A reviewer's identity as recorded: a login name, an e-mail, an upstream user id.
ReviewerId = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[^\x00-\x1f\x7f]+$")]
#: Free text a reviewer writes: bounded, shown back escaped.
ReviewerText = Annotated[str, Field(max_length=5000)]


class VerdictAction(StrEnum):
    """What the reviewer decided."""

    ACCEPT = "accept"
    """The output may go downstream as it is."""
    REJECT = "reject"
    """The output is wrong: redo it (the reviewer's reasons go back as feedback)."""
    SEND_BACK = "send_back"
    """Close, but fix what the feedback says and try again."""


#: The human signal of an action when the reviewer scores no dimension.
ACTION_SCORES: dict[VerdictAction, float] = {
    VerdictAction.ACCEPT: 1.0,
    VerdictAction.SEND_BACK: 0.5,
    VerdictAction.REJECT: 0.0,
}


class VerdictChannel(StrEnum):
    """Where a verdict was recorded."""

    PAGE = "page"
    """The review page (``windags-eval review-ui``)."""
    API = "api"
    """``ReviewClient.record_verdict`` or ``windags-eval verdict``."""


class VerdictInput(WireModel):
    """What a reviewer submits; the rest of the verdict is filled in by the gate."""

    action: VerdictAction
    """Accept, reject or send back."""
    scores: dict[Dimension, Unit] = Field(default_factory=dict)
    """Optional per-dimension scores; they replace the fleet's for those dimensions."""
    feedback: ReviewerText | None = None
    """What the node should change (sent back with ``iterate``)."""
    comment: ReviewerText | None = None
    """A note for the record."""

    @property
    def human_score(self) -> float:
        """The ``human`` signal: the weakest dimension scored, else the action's own score.

        The weakest dimension, not a mean: the fleet gates on the weakest dimension too,
        so a reviewer's low mark on one dimension is not averaged away.
        """
        return min(self.scores.values()) if self.scores else ACTION_SCORES[self.action]


class HumanVerdict(WireModel):
    """The ``human_verdict`` stream entry: one per (dag_id, node_id, attempt)."""

    schema_version: int = 1
    """Bumped on incompatible changes."""
    dag_id: Identifier
    """The DAG run."""
    node_id: Identifier
    """The node."""
    attempt: Annotated[int, Field(ge=1)]
    """The attempt judged."""
    action: VerdictAction
    """What the reviewer decided."""
    human_score: Unit
    """The human signal, weighted 0.50 in the recomputed confidence."""
    scores: dict[Dimension, Unit] = Field(default_factory=dict)
    """The reviewer's per-dimension scores, when given."""
    feedback: ReviewerText | None = None
    """What the node should change."""
    comment: ReviewerText | None = None
    """A note for the record."""
    reviewer: ReviewerId
    """Who judged: the page's signed-in name or upstream user, or the API caller's name."""
    channel: VerdictChannel
    """Where the verdict was recorded."""
    recorded_at: str
    """When, ISO 8601 in UTC."""
    machine_decision: Decision
    """What the fleet had decided before the human looked."""


class HumanDecision(WireModel):
    """The ``decision`` stream entry: the attempt's decision recomputed with the human.

    The reviewer's action decides (accept -> ``accept``; send back -> ``iterate``;
    reject -> ``iterate`` while attempts remain, else ``escalate_human``, which now means
    a person rejected the last allowed attempt and the DAG must stop the node). The
    scores are recomputed: confidence with the human signal at 0.50, the reviewer's
    dimension scores over the fleet's, and the basis the next attempt's convergence reads.
    """

    schema_version: int = 1
    """Bumped on incompatible changes."""
    dag_id: Identifier
    """The DAG run."""
    node_id: Identifier
    """The node."""
    attempt: Annotated[int, Field(ge=1)]
    """The attempt decided."""
    decision: Decision
    """What the DAG should do now; replaces the result's ``escalate_human``."""
    supersedes: Decision
    """The fleet's decision this one replaces."""
    action: VerdictAction
    """The reviewer's action that decided."""
    reviewer: ReviewerId
    """Who decided."""
    confidence: Confidence
    """The signals re-aggregated with the human one at weight 0.50."""
    quality: QualityVector
    """The fleet's vector with the reviewer's dimension scores in place of its own."""
    basis: DecisionBasis
    """The weakest gate after the human's input; stored as the attempt's score."""
    feedback: Feedback | None = None
    """The reviewer's feedback first, then the fleet's, when iterating."""
    convergence: Convergence
    """Quality across attempts with this attempt's recomputed score."""


class HumanReason(StrEnum):
    """Why a result waits for a person."""

    DISAGREEMENT = "disagreement"
    """Peer and downstream signals disagree by more than 0.4."""
    JUDGE_FAILED = "judge_failed"
    """The Ceiling's judge failed: the layer is indeterminate."""
    POSITION_BIAS = "position_bias"
    """The pairwise check changed its mind when the order was swapped."""
    HOPELESS = "hopeless"
    """Below 0.3 on the first attempt: fundamentally wrong."""
    OSCILLATING = "oscillating"
    """Scores flip up and down across attempts: the feedback is contradictory."""
    STALLED = "stalled"
    """Plateau or decline with no attempt good enough to accept."""
    OUT_OF_ITERATIONS = "out_of_iterations"
    """Below the bar with no attempts left."""


class StageOneView(WireModel):
    """What Stage 1 saw of the attempt, so outcomes can calibrate it later."""

    floor_passed: bool
    """Whether the Floor passed."""
    wall_grade: Unit | None
    """The Wall's grade, when it ran."""
    failure_probability: Unit
    """The escalation prior P(fail)."""
    escalated: bool
    """Whether Stage 2 ran."""
    decision: Decision
    """The fleet's decision."""
    claimed_success_rate: Unit | None = None
    """The skill's success rate as the request claimed it (null on older records)."""
    stage: SkillStage | None = None
    """The skill's stage, a factor of the prior."""
    breaker: BreakerState | None = None
    """The skill's breaker state, a factor of the prior."""
    evidence: Evidence | None = None
    """Stage 1's evidence as the router's calibration map reads it."""


class AttemptRecord(WireModel):
    """What the fleet remembers of one attempt of one node."""

    attempt: Annotated[int, Field(ge=1)]
    """The attempt."""
    skill_id: Identifier
    """The skill that produced it."""
    score: Unit
    """The decision basis score the fleet published."""
    dimension: str
    """The basis's dimension (the weakest gate)."""
    stage1: StageOneView
    """What the fleet saw and decided."""
    human_score: Unit | None = None
    """The basis recomputed after a human verdict; convergence prefers it."""
    human_action: VerdictAction | None = None
    """The reviewer's action, once judged."""

    @property
    def effective_score(self) -> float:
        """The score convergence reads: the human-informed one when there is one."""
        return self.human_score if self.human_score is not None else self.score


class ReviewItem(WireModel):
    """One entry of the human review queue: everything a reviewer needs on one page."""

    review_key: str
    """``dag_id:node_id:attempt``."""
    reasons: tuple[HumanReason, ...]
    """Why it waits for a person."""
    enqueued_at: str
    """When it entered the queue, ISO 8601 in UTC."""
    request: ReviewRequest
    """The task, the sources and the output, as the node sent them."""
    result: ReviewResult
    """The fleet's published verdict."""
    earlier: tuple[AttemptRecord, ...] = ()
    """The node's earlier attempts, oldest first."""


class ReviewSummary(WireModel):
    """One line of the review queue: enough to filter and pick, without the output."""

    review_key: str
    """``dag_id:node_id:attempt``."""
    dag_id: Identifier
    """The DAG run."""
    node_id: Identifier
    """The node."""
    attempt: Annotated[int, Field(ge=1)]
    """The attempt."""
    skill_id: Identifier
    """The skill that produced the output."""
    reasons: tuple[HumanReason, ...]
    """Why it waits for a person."""
    enqueued_at: str
    """When it entered the queue, ISO 8601 in UTC."""
    basis: DecisionBasis
    """The fleet's weakest gate."""
    output_kind: str
    """The output's declared format."""

    @classmethod
    def of(cls, item: ReviewItem) -> ReviewSummary:
        """The queue line of ``item``."""
        return cls(
            review_key=item.review_key,
            dag_id=item.result.dag_id,
            node_id=item.result.node_id,
            attempt=item.result.attempt,
            skill_id=item.request.skill.id,
            reasons=item.reasons,
            enqueued_at=item.enqueued_at,
            basis=item.result.basis,
            output_kind=item.request.output.kind.value,
        )


class OutcomeSource(StrEnum):
    """Who produced a labelled outcome."""

    HUMAN = "human"
    DOWNSTREAM = "downstream"
    STAGE2 = "stage2"
    PEER = "peer"
    """A peer evaluator's signal the request carried: graded for reliability, never truth."""


class LabelledOutcome(WireModel):
    """One label on one reviewed attempt, for calibration (per skill, per evaluator)."""

    source: OutcomeSource
    """Human, downstream consumer, or Stage 2."""
    evaluator: str
    """Who labelled: ``human:<reviewer>``, ``downstream:<node>``, ``stage2:<model>``,
    ``peer:<skill>``."""
    skill_id: Identifier
    """The skill whose output was labelled."""
    dag_id: Identifier
    """The DAG run."""
    node_id: Identifier
    """The node."""
    attempt: Annotated[int, Field(ge=1)]
    """The attempt."""
    label: Unit
    """The evaluator's score of the output."""
    action: VerdictAction | None = None
    """A human's action, for human outcomes."""
    stage1: StageOneView | None = None
    """What Stage 1 saw, when the fleet still remembers the review."""
    recorded_at: str
    """When, ISO 8601 in UTC."""


__all__ = [
    "ACTION_SCORES",
    "AttemptRecord",
    "HumanDecision",
    "HumanReason",
    "HumanVerdict",
    "LabelledOutcome",
    "OutcomeSource",
    "ReviewItem",
    "ReviewSummary",
    "StageOneView",
    "VerdictAction",
    "VerdictChannel",
    "VerdictInput",
]
