"""Judge verdicts for tests that look at what a judge call cost: tokens, price, model."""

from __future__ import annotations

from schemas.judging import DimensionVerdict, JudgeVerdict, TokenUsage
from schemas.quality import CEILING_DIMENSIONS


def paid_verdict(
    score: float, *, model: str, tokens: tuple[int, int], cost_usd: float
) -> JudgeVerdict:
    """One model call's verdict: ``score`` on every Ceiling dimension, and what it cost.

    Args:
        score: The score of each Ceiling dimension.
        model: The model that answered.
        tokens: Input and output tokens of the call.
        cost_usd: Its price.
    """
    return JudgeVerdict(
        model=model,
        scores={
            d: DimensionVerdict(score=score, justification="observed") for d in CEILING_DIMENSIONS
        },
        usage=TokenUsage(input_tokens=tokens[0], output_tokens=tokens[1]),
        cost_usd=cost_usd,
        calls=1,
    )
