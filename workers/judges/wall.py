"""Stage 1's judged part of the Wall: a cheap model scores what heuristics cannot."""

from __future__ import annotations

from schemas.judging import JudgeTier
from schemas.quality import WALL_DIMENSIONS
from schemas.request import ReviewRequest
from workers.errors import JudgeError
from workers.evaluate.judge_task import task_for
from workers.evaluate.stage1 import WallJudge, WallJudgement
from workers.judges.base import Judge
from workers.judges.builtin import BuiltinJudge


def model_wall_judge(judge: Judge) -> WallJudge:
    """A ``WallJudge`` that asks ``judge`` (wall tier) for every Wall dimension at once."""

    def judge_wall(request: ReviewRequest) -> WallJudgement:
        task = task_for(request, JudgeTier.WALL, WALL_DIMENSIONS)
        try:
            verdict = judge.evaluate(task)
        except JudgeError as exc:
            return WallJudgement(error=f"{type(exc).__name__}: {exc}")
        return WallJudgement(scores=verdict.scores, usage=verdict.usage, cost_usd=verdict.cost_usd)

    return judge_wall


def stage1_judge(judge: Judge) -> WallJudge | None:
    """The judged part of the Wall for model judges; the built-in's Wall is the heuristics."""
    return None if isinstance(judge, BuiltinJudge) else model_wall_judge(judge)
