"""What a waiting runtime gets back: a review's payload, or a person's verdict and decision.

Both clients (``ReviewClient.review``, ``AsyncReviewClient``) read the same stream entries;
this module says which entries answer which wait, and turns an error entry into the typed
error the caller catches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from schemas.human import HumanDecision, HumanVerdict
from schemas.result import ReviewError, ReviewResult
from workers.errors import ReviewFailedError
from workers.results.stream import EntryKind, Payload

#: What a review leaves on the stream.
ReviewPayload: TypeAlias = ReviewResult | ReviewError
#: Entry kinds that answer a review; a person's answer is a verdict, then its decision.
REVIEW_KINDS = frozenset({EntryKind.RESULT.value, EntryKind.ERROR.value})
PERSON_KINDS = frozenset({EntryKind.HUMAN_VERDICT.value, EntryKind.DECISION.value})


@dataclass(frozen=True, slots=True)
class PersonDecided:
    """A person's verdict on an escalated attempt, and the decision recomputed with it."""

    verdict: HumanVerdict
    """What the reviewer said (action, scores, feedback, who, where)."""
    decision: HumanDecision
    """What the DAG should do now: ``accept``, ``iterate`` with feedback, or stop."""


def review_outcome(payload: ReviewPayload) -> ReviewResult:
    """The result itself; an error entry raised as ``ReviewFailedError``."""
    if isinstance(payload, ReviewError):
        raise ReviewFailedError(payload)
    return payload


def as_review(payload: Payload) -> ReviewPayload:
    """``payload`` when a review's own entry, else ``TypeError`` (a kind that lied)."""
    if isinstance(payload, ReviewResult | ReviewError):
        return payload
    raise TypeError(f"expected a review entry, got {type(payload).__name__}")


def person_decided(verdict: Payload, decision: Payload) -> PersonDecided:
    """The pair of entries the verdict desk adds together, checked for their kinds."""
    if not isinstance(verdict, HumanVerdict) or not isinstance(decision, HumanDecision):
        raise TypeError(f"expected a verdict and its decision, got {verdict!r}, {decision!r}")
    return PersonDecided(verdict, decision)


def decided_entry_id(raw: bytes | str | None) -> str | None:
    """The verdict's entry id from the desk's dedup key (``<entry id> <reviewer>``)."""
    if raw is None:
        return None
    text = raw.decode() if isinstance(raw, bytes) else raw
    return text.partition(" ")[0]


def text_of(raw: bytes | str | None) -> str | None:
    """A Redis reply as text."""
    if raw is None:
        return None
    return raw.decode() if isinstance(raw, bytes) else raw
