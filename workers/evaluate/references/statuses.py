"""What each answer to a fetch means for the output that cites the URL: one table.

Only what the server or the name system states for certain is definite: the page is not
there (404), it was removed (410), or the host name exists nowhere (NXDOMAIN). Even these
count only once a second request gives the same answer, so a deploy in progress or a
resolver's blip does not send an output back. Everything else a live site answers a
crawler with is ambiguous: bot walls answer live pages with 403 and 429 (lychee#1157,
#1504), a 5xx or a timeout is the server's state, not the page's, and a TLS error may be
an interception. Those are suspect: evidence for the router, never a reason on their own.
A URL the policy refused (a private address) was never fetched: it is listed, and it is
no defect of the output; nor is one left unverified by the per-review cap or time budget.

The cache follows the same rows: a live page is kept for hours, a confirmed definite
failure for less (a page can come back), and a transient answer never (lychee's cache
replayed Cloudflare's bot 403s as failures: yearn/risk-score#187).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from schemas.references import FetchOutcome, ReferenceVerdict
from schemas.stages import Certainty


class Caching(StrEnum):
    """How long an answer may be reused (the durations are settings)."""

    LIVE = "live"
    """A page that answered: hours (``WINDAGS_REFS_CACHE_LIVE_S``)."""
    DEAD = "dead"
    """A confirmed definite failure: less (``WINDAGS_REFS_CACHE_DEAD_S``)."""
    NEVER = "never"
    """A transient answer, a refusal, or nothing fetched: asked again next time."""


@dataclass(frozen=True, slots=True)
class Row:
    """One outcome's meaning."""

    verdict: ReferenceVerdict
    certainty: Certainty | None
    """Definite or suspect finding; None: no finding (live, refused, unverified)."""
    confirm: bool
    """Definite only when a second request gave the same answer; else suspect."""
    caching: Caching
    reason: str


_D, _S = Certainty.DEFINITE, Certainty.SUSPECT
_DEAD, _SUSPECT = ReferenceVerdict.DEAD, ReferenceVerdict.SUSPECT
_NEVER = Caching.NEVER

TABLE: dict[FetchOutcome, Row] = {
    FetchOutcome.OK: Row(
        ReferenceVerdict.LIVE, None, False, Caching.LIVE, "2xx: the page is there"
    ),
    FetchOutcome.NOT_FOUND: Row(
        _DEAD, _D, True, Caching.DEAD, "404: the server says there is no such page"
    ),
    FetchOutcome.GONE: Row(_DEAD, _D, True, Caching.DEAD, "410: the page was removed for good"),
    FetchOutcome.NO_SUCH_HOST: Row(
        _DEAD, _D, True, Caching.DEAD, "NXDOMAIN: the host name exists nowhere"
    ),
    FetchOutcome.UNAUTHORIZED: Row(
        _SUSPECT, _S, False, _NEVER, "401: a page behind a login may well exist"
    ),
    FetchOutcome.FORBIDDEN: Row(
        _SUSPECT, _S, False, _NEVER, "403: bot walls answer live pages with it"
    ),
    FetchOutcome.RATE_LIMITED: Row(
        _SUSPECT, _S, False, _NEVER, "429: a rate limit says nothing about the page"
    ),
    FetchOutcome.LEGAL: Row(
        _SUSPECT, _S, False, _NEVER, "451: blocked where the fleet runs, not gone"
    ),
    FetchOutcome.SERVER_ERROR: Row(
        _SUSPECT, _S, False, _NEVER, "5xx: the server's state, not the page's"
    ),
    FetchOutcome.OTHER_STATUS: Row(
        _SUSPECT, _S, False, _NEVER, "another status (400, 405, a 3xx without Location)"
    ),
    FetchOutcome.TIMEOUT: Row(
        _SUSPECT, _S, False, _NEVER, "no whole answer in time: slow is not missing"
    ),
    FetchOutcome.TLS_ERROR: Row(
        _SUSPECT, _S, False, _NEVER, "a certificate or handshake failure: the server's setup"
    ),
    FetchOutcome.CONNECTION_FAILED: Row(
        _SUSPECT, _S, False, _NEVER, "refused or reset: the host may be down for now"
    ),
    FetchOutcome.DNS_FAILED: Row(
        _SUSPECT, _S, False, _NEVER, "the resolver failed (SERVFAIL): not an answer"
    ),
    FetchOutcome.TOO_MANY_REDIRECTS: Row(
        _SUSPECT, _S, False, _NEVER, "a redirect loop or chain: often a cookie wall"
    ),
    FetchOutcome.BAD_RESPONSE: Row(_SUSPECT, _S, False, _NEVER, "not a readable HTTP answer"),
    FetchOutcome.REFUSED: Row(
        ReferenceVerdict.REFUSED, None, False, _NEVER, "a non-public address: never fetched"
    ),
    FetchOutcome.UNSUPPORTED: Row(
        ReferenceVerdict.UNVERIFIED, None, False, _NEVER, "not http(s), or too long to fetch"
    ),
    FetchOutcome.UNVERIFIED: Row(
        ReferenceVerdict.UNVERIFIED, None, False, _NEVER, "over the per-review cap or budget"
    ),
}


def outcome_of_status(status: int) -> FetchOutcome:
    """The outcome of a final HTTP status (after redirects)."""
    if 200 <= status < 300:
        return FetchOutcome.OK
    named = _BY_STATUS.get(status)
    if named is not None:
        return named
    return FetchOutcome.SERVER_ERROR if 500 <= status < 600 else FetchOutcome.OTHER_STATUS


_BY_STATUS = {
    401: FetchOutcome.UNAUTHORIZED,
    403: FetchOutcome.FORBIDDEN,
    404: FetchOutcome.NOT_FOUND,
    410: FetchOutcome.GONE,
    429: FetchOutcome.RATE_LIMITED,
    451: FetchOutcome.LEGAL,
}


def needs_confirmation(outcome: FetchOutcome) -> bool:
    """Whether ``outcome`` is definite only once a second request repeats it."""
    return TABLE[outcome].confirm


def caching_of(outcome: FetchOutcome, *, confirmed: bool) -> Caching:
    """How long an answer may be kept: a definite one only once confirmed."""
    row = TABLE[outcome]
    if row.confirm and not confirmed:
        return Caching.NEVER
    return row.caching
