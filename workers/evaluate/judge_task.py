"""The judging task of a request: its output and everything the node was given."""

from __future__ import annotations

from schemas.judging import JudgeTask, JudgeTier
from schemas.quality import Dimension
from schemas.request import GroundingPolicy, ReviewRequest
from workers.evaluate.wall.grounding.policy import read_brief


def task_for(
    request: ReviewRequest, tier: JudgeTier, dimensions: tuple[Dimension, ...]
) -> JudgeTask:
    """The judging task of ``request``: its output and everything the node was given.

    The grounding policy is the one the Wall applies: declared, or inferred from the task.
    """
    use = read_brief(request.task, request.sources, request.grounding).use
    return JudgeTask(
        tier=tier,
        dimensions=dimensions,
        output=request.output,
        task=request.task,
        contract=request.contract,
        sources=request.sources,
        grounding=use.policy if use is not None else GroundingPolicy.ABSTRACTIVE,
    )
