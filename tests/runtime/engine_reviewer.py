"""The loop's reviewer without a fleet: the real engine in this process, with the fleet's memory.

It remembers each node's basis scores as the fleet does and passes them as ``history``;
a person's verdict is decided by the engine's own ``decide_with_human``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from schemas.human import HumanVerdict, VerdictAction, VerdictChannel
from schemas.request import ReviewRequest
from schemas.result import ReviewResult
from workers.evaluate.verdict.human import decide_with_human
from workers.review import Reviewer
from workers.runtime.verdicts import PersonDecided
from workers.settings import Settings


@dataclass
class EngineReviewer:
    """Reviews with the engine; a scripted person answers escalations with ``actions``."""

    actions: list[VerdictAction] = field(default_factory=list)
    engine: Reviewer = field(default_factory=lambda: Reviewer(Settings(judge_backend="builtin")))
    scores: dict[str, list[float]] = field(default_factory=dict)
    reviewed: dict[str, tuple[ReviewRequest, ReviewResult]] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)

    async def review(self, request: ReviewRequest, *, timeout: float) -> ReviewResult:
        if request.review_key in self.reviewed:  # the fleet publishes once per key
            return self.reviewed[request.review_key][1]
        earlier = tuple(self.scores.get(request.node_id, ()))
        result = self.engine(request.model_copy(update={"history": earlier}))
        self.scores.setdefault(request.node_id, []).append(result.basis.score)
        self.reviewed[request.review_key] = (request, result)
        return result

    async def wait_for_person(
        self, dag_id: str, node_id: str, attempt: int, *, timeout: float
    ) -> PersonDecided:
        request, result = self.reviewed[f"{dag_id}:{node_id}:{attempt}"]
        self.asked.append(request.review_key)
        action = self.actions.pop(0)
        verdict = HumanVerdict(
            dag_id=dag_id,
            node_id=node_id,
            attempt=attempt,
            action=action,
            human_score={"accept": 1.0, "send_back": 0.5, "reject": 0.0}[action.value],
            feedback="Say who asked for it" if action is not VerdictAction.ACCEPT else None,
            reviewer="alice",
            channel=VerdictChannel.API,
            recorded_at="2026-01-01T00:00:00Z",
            machine_decision=result.decision,
        )
        earlier = tuple(self.scores[node_id][: attempt - 1])
        return PersonDecided(verdict, decide_with_human(request, result, verdict, earlier))
