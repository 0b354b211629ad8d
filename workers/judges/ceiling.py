"""The Ceiling's judge as the engine asks for it: a model judge whose errors become values.

Replies that never validated were still answered, and paid for: the failure carries what
they cost, so an indeterminate Ceiling is charged.
"""

from __future__ import annotations

from schemas.judging import JudgeTask, JudgeVerdict, TokenUsage
from workers.errors import JudgeError, JudgeOutputError
from workers.evaluate.ceiling.judge import CeilingJudge, JudgeFailure
from workers.judges.base import Judge


def model_ceiling_judge(judge: Judge) -> CeilingJudge:
    """A ``CeilingJudge`` that asks ``judge`` and reports its errors as ``JudgeFailure``."""

    def ask(task: JudgeTask) -> JudgeVerdict | JudgeFailure:
        try:
            return judge.evaluate(task)
        except JudgeError as exc:
            spent = exc if isinstance(exc, JudgeOutputError) else JudgeOutputError("")
            return JudgeFailure(
                model=type(judge).__name__,
                error=f"{type(exc).__name__}: {exc}",
                calls=spent.calls,
                usage=TokenUsage(
                    input_tokens=spent.input_tokens,
                    output_tokens=spent.output_tokens,
                    cache_read_input_tokens=spent.cache_read_input_tokens,
                    cache_creation_input_tokens=spent.cache_creation_input_tokens,
                ),
                cost_usd=spent.cost_usd,
            )

    return ask
