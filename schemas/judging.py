"""What a judge is asked and what it answers: the judge interface's data."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field

from schemas.base import NonNegative, Unit, Usd, WireModel
from schemas.claims import MAX_CLAIMS, ClaimVerdict
from schemas.quality import Dimension
from schemas.request import MAX_SOURCES, GroundingPolicy, NodeOutput, OutputContract, Source


class JudgeTier(StrEnum):
    """Which stage is asking: it picks the model (cheap for Wall, expensive for Ceiling)."""

    WALL = "wall"
    CEILING = "ceiling"
    PAIRWISE = "pairwise"
    """Which of two outputs is better; run in both orders by the caller."""


class JudgeTask(WireModel):
    """One structured judging call: all requested dimensions are scored at once."""

    tier: JudgeTier
    """The stage asking."""
    dimensions: tuple[Dimension, ...]
    """What to score."""
    output: NodeOutput
    """The output under review (for pairwise: the one shown first)."""
    task: str | None = None
    """The node's instruction, when known."""
    contract: OutputContract | None = None
    """The output contract, when declared."""
    other: NodeOutput | None = None
    """Pairwise only: the output shown second."""
    sources: tuple[Source, ...] = Field(default=(), max_length=MAX_SOURCES)
    """What the node worked from; the judge checks the output's claims against them."""
    grounding: GroundingPolicy = GroundingPolicy.ABSTRACTIVE
    """How closely the output must keep to ``sources``."""


class DimensionVerdict(WireModel):
    """A judge's score for one dimension."""

    score: Unit
    """0..1; for pairwise tasks, the probability that the first output is better."""
    justification: str = Field(default="", max_length=4000)
    """Why; required for scores above 0.8."""


class TokenUsage(WireModel):
    """Tokens one or more model calls consumed."""

    input_tokens: Annotated[int, Field(ge=0)] = 0
    """Uncached input tokens."""
    output_tokens: Annotated[int, Field(ge=0)] = 0
    """Generated tokens."""
    cache_read_input_tokens: Annotated[int, Field(ge=0)] = 0
    """Input tokens served from the prompt cache."""
    cache_creation_input_tokens: Annotated[int, Field(ge=0)] = 0
    """Input tokens written to the prompt cache."""

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens
            + other.cache_creation_input_tokens,
        )


class ModelPrice(WireModel):
    """Prices of one model in USD per million tokens."""

    input_per_mtok: NonNegative
    """Uncached input."""
    output_per_mtok: NonNegative
    """Output."""
    cache_read_per_mtok: NonNegative
    """Cache reads (typically 0.1x input)."""
    cache_write_per_mtok: NonNegative
    """Cache writes (typically 1.25x input)."""

    def cost(self, usage: TokenUsage) -> float:
        """What ``usage`` costs at these prices."""
        return (
            usage.input_tokens * self.input_per_mtok
            + usage.output_tokens * self.output_per_mtok
            + usage.cache_read_input_tokens * self.cache_read_per_mtok
            + usage.cache_creation_input_tokens * self.cache_write_per_mtok
        ) / 1_000_000


class ReplyForm(StrEnum):
    """Where a model judge found its verdict in the reply."""

    TOOL = "tool"
    """The ``record_scores`` tool call."""
    TEXT = "text"
    """A JSON object in the reply's text (a server that ignored or lacks tool use)."""


class VerdictParse(WireModel):
    """How a model judge's verdict was read: what the parse and repair rates count."""

    form: ReplyForm
    """Where the verdict that validated was found."""
    repaired: bool = False
    """The first reply did not validate; the verdict came from the repair turn."""
    first_error: str | None = Field(default=None, max_length=1000)
    """What was wrong with the first reply, when it was repaired."""


class JudgeVerdict(WireModel):
    """A judge's answer to one task."""

    model: str
    """The model (or built-in judge version) that answered."""
    scores: dict[Dimension, DimensionVerdict]
    """One verdict per requested dimension."""
    usage: TokenUsage = TokenUsage()
    """Tokens consumed, all calls of this task included."""
    cost_usd: Usd = 0.0
    """What the calls cost."""
    calls: Annotated[int, Field(ge=0)] = 1
    """Model calls made, retries included."""
    parse: VerdictParse | None = None
    """How a model judge's reply was read; None for judges that call no model."""
    claims: tuple[ClaimVerdict, ...] = Field(default=(), max_length=MAX_CLAIMS)
    """The output's claims and their support in the sources, when the judge gave them
    (Ceiling tasks with input to ground in); empty when it did not."""


__all__ = [
    "DimensionVerdict",
    "JudgeTask",
    "JudgeTier",
    "JudgeVerdict",
    "ModelPrice",
    "ReplyForm",
    "TokenUsage",
    "VerdictParse",
]
