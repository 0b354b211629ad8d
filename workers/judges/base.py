"""The judge interface: one method, structured in, structured out."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from schemas.judging import JudgeTask, JudgeTier, JudgeVerdict
from schemas.quality import Dimension
from schemas.request import GroundingPolicy, ReviewRequest
from workers.evaluate.policy import read_brief


@runtime_checkable
class Judge(Protocol):
    """Scores every requested dimension of one output in a single structured call.

    Implementations raise a ``workers.errors.JudgeError`` subclass when they cannot
    answer; they never return a made-up score. The caller marks the layer
    indeterminate.
    """

    def evaluate(self, task: JudgeTask) -> JudgeVerdict:
        """Score ``task.dimensions`` of ``task.output``."""
        ...


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
