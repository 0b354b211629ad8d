"""The QualityVector: one named score per dimension, never collapsed to a scalar."""

from __future__ import annotations

from enum import StrEnum

from schemas.base import Unit, WireModel


class Layer(StrEnum):
    """The layer of the quality model that scores a dimension."""

    FLOOR = "floor"
    WALL = "wall"
    CEILING = "ceiling"


class Dimension(StrEnum):
    """The dimensions of quality, each scored by exactly one layer."""

    STRUCTURE = "structure"
    SUBSTANCE = "substance"
    CONSISTENCY = "consistency"
    GROUNDING = "grounding"
    CORRECTNESS = "correctness"
    COMPLETENESS = "completeness"
    CLARITY = "clarity"
    RELEVANCE = "relevance"

    @property
    def layer(self) -> Layer:
        """The layer that scores this dimension."""
        return _LAYERS[self]


_LAYERS = {
    Dimension.STRUCTURE: Layer.FLOOR,
    Dimension.SUBSTANCE: Layer.WALL,
    Dimension.CONSISTENCY: Layer.WALL,
    Dimension.GROUNDING: Layer.WALL,
    Dimension.CORRECTNESS: Layer.CEILING,
    Dimension.COMPLETENESS: Layer.CEILING,
    Dimension.CLARITY: Layer.CEILING,
    Dimension.RELEVANCE: Layer.CEILING,
}
WALL_DIMENSIONS = tuple(d for d in Dimension if d.layer is Layer.WALL)
CEILING_DIMENSIONS = tuple(d for d in Dimension if d.layer is Layer.CEILING)


class ScoreStatus(StrEnum):
    """Whether a dimension carries a score, and if not, why not."""

    SCORED = "scored"
    UNSCORED = "unscored"
    """Its layer did not run (short-circuited or not escalated)."""
    INDETERMINATE = "indeterminate"
    """Its layer ran but the judge failed: not a quality failure, not a pass."""


class DimensionScore(WireModel):
    """One dimension's score with the reason for it."""

    status: ScoreStatus
    """Scored, unscored (layer not run) or indeterminate (judge failed)."""
    value: Unit | None = None
    """The score when ``status`` is ``scored``, else null."""
    justification: str = ""
    """Why this score; always present for scores above 0.8 (no rubber stamps)."""
    definite: Unit | None = None
    """The score counting only definite findings, when suspect ones lowered ``value``
    (null otherwise). Decisions gate on it: suspicion alone never sends an output back;
    the router weighs it, and Stage 2 judges it."""

    @classmethod
    def scored(
        cls, value: float, justification: str, *, definite: float | None = None
    ) -> DimensionScore:
        """A dimension that was evaluated (``definite``: see the field)."""
        kept = None if definite is None or definite <= value else round(definite, 4)
        return cls(
            status=ScoreStatus.SCORED,
            value=round(value, 4),
            justification=justification,
            definite=kept,
        )

    @property
    def gate(self) -> float | None:
        """The score a decision reads: the definite one when suspicion lowered ``value``."""
        return self.definite if self.definite is not None else self.value

    @classmethod
    def unscored(cls, why: str) -> DimensionScore:
        """A dimension whose layer did not run."""
        return cls(status=ScoreStatus.UNSCORED, justification=why)

    @classmethod
    def indeterminate(cls, why: str) -> DimensionScore:
        """A dimension whose judge failed."""
        return cls(status=ScoreStatus.INDETERMINATE, justification=why)


class QualityVector(WireModel):
    """Per-dimension quality. Deliberately has no ``score()`` and no ``__float__``.

    A consumer that wants a threshold names the dimension it thresholds.
    """

    structure: DimensionScore
    """Floor: the output parses and meets its declared contract."""
    substance: DimensionScore
    """Wall: meaningful content of a sensible length, not filler."""
    consistency: DimensionScore
    """Wall: no internal contradictions."""
    grounding: DimensionScore
    """Wall: references resolve, claims are cited, citations look real."""
    correctness: DimensionScore
    """Ceiling: the output does what it should without defects."""
    completeness: DimensionScore
    """Ceiling: nothing required is missing or left as a placeholder."""
    clarity: DimensionScore
    """Ceiling: readable, well organised."""
    relevance: DimensionScore
    """Ceiling: addresses the node's task."""

    def get(self, dimension: Dimension) -> DimensionScore:
        """The score of one named dimension."""
        score: DimensionScore = getattr(self, dimension.value)
        return score

    def scored(self) -> dict[Dimension, float]:
        """The dimensions that carry a score, by name."""
        return {
            d: s.value
            for d in Dimension
            if (s := self.get(d)).status is ScoreStatus.SCORED and s.value is not None
        }

    def gates(self) -> dict[Dimension, float]:
        """The scores decisions read, by name: suspect findings left out (``gate``)."""
        return {
            d: gate
            for d in Dimension
            if (s := self.get(d)).status is ScoreStatus.SCORED and (gate := s.gate) is not None
        }


__all__ = [
    "CEILING_DIMENSIONS",
    "WALL_DIMENSIONS",
    "Dimension",
    "DimensionScore",
    "Layer",
    "QualityVector",
    "ScoreStatus",
]
