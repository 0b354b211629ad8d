"""The wire contract: pydantic models only; imports nothing else from this repository."""

from schemas.judging import JudgeTask, JudgeTier, JudgeVerdict, ModelPrice, TokenUsage
from schemas.quality import Dimension, DimensionScore, QualityVector, ScoreStatus
from schemas.request import NodeOutput, OutputKind, ReviewRequest
from schemas.result import (
    Decision,
    Envelope,
    EscalationDecision,
    EscalationReason,
    ReviewError,
    ReviewResult,
)

__all__ = [
    "Decision",
    "Dimension",
    "DimensionScore",
    "Envelope",
    "EscalationDecision",
    "EscalationReason",
    "JudgeTask",
    "JudgeTier",
    "JudgeVerdict",
    "ModelPrice",
    "NodeOutput",
    "OutputKind",
    "QualityVector",
    "ReviewError",
    "ReviewRequest",
    "ReviewResult",
    "ScoreStatus",
    "TokenUsage",
]
