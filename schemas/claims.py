"""Per-claim grounding: what a Ceiling judge says of each claim, and what the review keeps.

The judge lists the output's checkable claims (names, numbers, dates, quotations,
citations, statements of fact) with their support in the sources and the source's own
words (the span). A reply may omit the list: servers and models that do not give it still
produce a verdict. What the review keeps (``CheckedClaim``) says whether the span was
found in the sources (a span that is not there supports nothing) and which of Stage 1's
suspect findings the claim settles, so that each claim is reported once.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated

from pydantic import BeforeValidator, Field

from schemas.base import WireModel

#: Longest claim, span or source id kept from a reply: the rest is cut, never quoted.
MAX_CLAIM_CHARS = 300
MAX_SPAN_CHARS = 300
MAX_SOURCE_CHARS = 200
#: Most claims kept from one reply; a longer list is cut.
MAX_CLAIMS = 24


class ClaimSupport(StrEnum):
    """What the sources say of one claim, as the judge reads them."""

    SUPPORTED = "supported"
    """A source states it; the span is the source's words."""
    CONTRADICTED = "contradicted"
    """A source says otherwise; the span is the source's words that say so."""
    NOT_IN_SOURCES = "not_in_sources"
    """No source states it or its opposite."""


#: Spellings a model writes for each label, after lower-casing and ``_`` for spaces.
_ALIASES = {
    "support": ClaimSupport.SUPPORTED,
    "supports": ClaimSupport.SUPPORTED,
    "entailed": ClaimSupport.SUPPORTED,
    "contradicts": ClaimSupport.CONTRADICTED,
    "contradiction": ClaimSupport.CONTRADICTED,
    "refuted": ClaimSupport.CONTRADICTED,
    "unsupported": ClaimSupport.NOT_IN_SOURCES,
    "not_supported": ClaimSupport.NOT_IN_SOURCES,
    "not_in_source": ClaimSupport.NOT_IN_SOURCES,
    "not_in_the_sources": ClaimSupport.NOT_IN_SOURCES,
    "not_in_the_source": ClaimSupport.NOT_IN_SOURCES,
    "not_found": ClaimSupport.NOT_IN_SOURCES,
}
_SEPARATORS = re.compile(r"[\s\-]+")


def _label(value: object) -> object:
    """``value`` as a ``ClaimSupport`` value when it is one of its usual spellings."""
    if not isinstance(value, str):
        return value
    key = _SEPARATORS.sub("_", value.strip().lower())
    return _ALIASES.get(key, key)


def _clip(limit: int) -> BeforeValidator:
    """Text cut at ``limit`` characters (a long reply is clipped, not refused).

    A null is empty and a whole number is its digits (``"source": 2``); anything else is
    left for validation to refuse.
    """

    def clipped(value: object) -> object:
        if value is None:
            return ""
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        return value[:limit] if isinstance(value, str) else value

    return BeforeValidator(clipped)


Support = Annotated[ClaimSupport, Field(strict=False), BeforeValidator(_label)]


class ClaimVerdict(WireModel):
    """One claim of the output and its support, as the judge gave it (untrusted text)."""

    claim: Annotated[str, _clip(MAX_CLAIM_CHARS), Field(min_length=1)]
    """The claim, as the output states it."""
    support: Support
    """Supported, contradicted, or not in the sources."""
    span: Annotated[str, _clip(MAX_SPAN_CHARS)] = ""
    """The source's words that support or contradict it; empty when not in the sources."""
    source: Annotated[str, _clip(MAX_SOURCE_CHARS)] = ""
    """The id (or 1-based position) of the source the span is from, when given."""


class CheckedClaim(WireModel):
    """A judge's claim after the review checked its span and merged Stage 1's findings."""

    claim: Annotated[str, Field(max_length=MAX_CLAIM_CHARS)]
    """The claim, as the judge quoted it (untrusted text, bounded)."""
    support: Support
    """What the judge said."""
    span: Annotated[str, Field(max_length=MAX_SPAN_CHARS)] = ""
    """The span the judge gave (untrusted text, bounded)."""
    source: str | None = Field(default=None, max_length=MAX_SOURCE_CHARS)
    """The id of the given source the span was found in; null when it was found in none."""
    span_found: bool = False
    """Whether the span occurs in the sources (or the task's material). A claim marked
    supported whose span is not there counts as not in the sources."""
    settles: tuple[str, ...] = Field(default=(), max_length=40)
    """Stage 1's suspect findings (their subjects) this claim settles: reported once, here."""
    penalty: Annotated[float, Field(ge=0.0, le=1.0)] = 0.0
    """What it took off the grounding score."""
    definite: bool = False
    """Whether that penalty counts at the decision gate (a contradiction the span shows,
    or a claim the sources lack under an extractive or abstractive policy)."""

    @property
    def effective(self) -> ClaimSupport:
        """The support the review applied: supported only with a span found in the sources."""
        if self.support is ClaimSupport.SUPPORTED and not self.span_found:
            return ClaimSupport.NOT_IN_SOURCES
        return self.support


__all__ = [
    "MAX_CLAIMS",
    "MAX_CLAIM_CHARS",
    "MAX_SOURCE_CHARS",
    "MAX_SPAN_CHARS",
    "CheckedClaim",
    "ClaimSupport",
    "ClaimVerdict",
]
