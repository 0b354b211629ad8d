"""Tracing of judge calls, as a wrapper composed where the fleet builds its judge.

The judges stay free of observability: the fleet wraps whichever judge it built.
"""

from __future__ import annotations

from schemas.judging import JudgeTask, JudgeVerdict
from workers.judges.base import Judge
from workers.observe.spans import judge_call


class TracedJudge:
    """``inner.evaluate`` inside a ``windags.judge <tier>`` span, counted in the metrics."""

    def __init__(self, inner: Judge, name: str | None = None) -> None:
        self._inner = inner
        self._name = name or type(inner).__name__

    def evaluate(self, task: JudgeTask) -> JudgeVerdict:
        """Evaluate, recording model, tokens and cost, or the error's class."""
        with judge_call(task, self._name) as call:
            verdict = self._inner.evaluate(task)
            call.done(verdict)
        return verdict
