"""The judge interface: one method, structured in, structured out."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from schemas.judging import JudgeTask, JudgeVerdict


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
