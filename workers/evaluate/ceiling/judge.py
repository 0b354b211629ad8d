"""What the engine asks of a Ceiling judge: a verdict, or a failure with what it cost.

The judges layer supplies the callable (``workers.judges.ceiling.model_ceiling_judge``), as
it supplies Stage 1's ``WallJudge``: the engine never sees a model client or its errors.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from schemas.judging import JudgeTask, JudgeVerdict, TokenUsage


@dataclass(frozen=True, slots=True)
class JudgeFailure:
    """Why a judge gave no usable verdict; replies that never validated were paid for."""

    model: str
    """The judge that failed, as the result names it."""
    error: str
    calls: int = 0
    usage: TokenUsage = field(default_factory=TokenUsage)
    cost_usd: float = 0.0


#: Asks a model judge for one task; a failure is a value, never an exception.
CeilingJudge = Callable[[JudgeTask], JudgeVerdict | JudgeFailure]
