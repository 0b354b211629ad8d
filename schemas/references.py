"""What the output points to outside the request, and what the world answered.

The engine says which cited URLs need fetching (``LookupPlan``); the network lane fetches
them and hands the answers back as data (``LookupAnswers``), which the engine turns into
Wall issues; the result lists each reference with its status chain (``ReferenceCheck``).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated

from pydantic import Field

from schemas.base import WireModel
from schemas.packages import PackageAnswer

#: The longest URL the lane fetches; longer ones are listed, never fetched.
MAX_URL_CHARS = 2048
#: The most fetched text a page carries across a hop or into the cache.
MAX_PAGE_TEXT_CHARS = 400_000
#: At most this many references listed on a result (the per-review cap is lower).
MAX_REFERENCES = 200

_Code = Field(strict=False)


class FetchOutcome(StrEnum):
    """How a fetch ended: one row of the status table (``workers/evaluate/references/statuses``)."""

    OK = "ok"
    NOT_FOUND = "not_found"
    GONE = "gone"
    NO_SUCH_HOST = "no_such_host"
    UNAUTHORIZED = "unauthorized"
    FORBIDDEN = "forbidden"
    RATE_LIMITED = "rate_limited"
    LEGAL = "unavailable_for_legal_reasons"
    SERVER_ERROR = "server_error"
    OTHER_STATUS = "other_status"
    TIMEOUT = "timeout"
    TLS_ERROR = "tls_error"
    CONNECTION_FAILED = "connection_failed"
    DNS_FAILED = "dns_failed"
    TOO_MANY_REDIRECTS = "too_many_redirects"
    BAD_RESPONSE = "bad_response"
    REFUSED = "refused"
    UNSUPPORTED = "unsupported"
    UNVERIFIED = "unverified"


class ReferenceVerdict(StrEnum):
    """What a reference's check says about the output."""

    LIVE = "live"
    """The page answered; any quotes attributed to it were found."""
    DEAD = "dead"
    """A definite failure (404, 410, NXDOMAIN), confirmed by a second request."""
    MISQUOTED = "misquoted"
    """The page answered but does not hold a quote the output attributes to it."""
    SUSPECT = "suspect"
    """Could not be settled (403, 429, 5xx, a timeout...): evidence, never a verdict."""
    REFUSED = "refused"
    """Not fetched by policy (a private address): listed, not a defect of the output."""
    UNVERIFIED = "unverified"
    """Not fetched: over the per-review cap or time budget, or fetching is off."""


class CitedUrl(WireModel):
    """One URL the output cites, and the quotes it attributes to that URL alone."""

    url: Annotated[str, Field(max_length=MAX_URL_CHARS)]
    """The URL as fetched (a DOI resolved to https://doi.org/...; the fragment dropped)."""
    label: str | None = Field(default=None, max_length=40)
    """How the output refers to it, when it does (``[3]``)."""
    quotes: tuple[Annotated[str, Field(max_length=1000)], ...] = Field(default=(), max_length=20)
    """Quoted spans, or ``#:~:text=`` fragments, attributed to this URL and no other."""


class LookupPlan(WireModel):
    """What needs the network for one review; empty for an output that cites nothing."""

    urls: tuple[CitedUrl, ...] = Field(default=(), max_length=MAX_REFERENCES)
    """The URLs to fetch, at most the per-review cap, in the order cited."""
    skipped: tuple[CitedUrl, ...] = Field(default=(), max_length=MAX_REFERENCES)
    """URLs cited but over the per-review cap: left unverified."""
    overlong: tuple[CitedUrl, ...] = Field(default=(), max_length=MAX_REFERENCES)
    """URLs too long to fetch (over ``MAX_URL_CHARS``), by the head of each."""
    unlisted: Annotated[int, Field(ge=0)] = 0
    """Further URLs skipped and not listed (an output citing thousands)."""
    packages: tuple[Annotated[str, Field(max_length=200)], ...] = Field(default=(), max_length=200)
    """Package names the snapshot cannot decide, for the index to confirm."""

    @property
    def needs_network(self) -> bool:
        """Whether the lane must look something up."""
        return bool(self.urls or self.packages)

    @property
    def empty(self) -> bool:
        """Whether nothing is cited and nothing needs looking up: today's path."""
        return not (self.needs_network or self.skipped or self.overlong or self.unlisted)


class FetchHop(WireModel):
    """One request of a redirect chain."""

    url: Annotated[str, Field(max_length=MAX_URL_CHARS)]
    """What was asked for."""
    address: str | None = None
    """The address connected to (the one checked), when a connection was made."""
    status: int | None = None
    """The HTTP status, when one came back."""


class FetchedPage(WireModel):
    """What one cited URL answered: the lane's record, cached and carried to the engine."""

    url: Annotated[str, Field(max_length=MAX_URL_CHARS)]
    """The URL as cited (after DOI resolution, without its fragment)."""
    outcome: Annotated[FetchOutcome, _Code]
    """How the fetch ended."""
    status: int | None = None
    """The last HTTP status of the chain, when there was one."""
    chain: tuple[FetchHop, ...] = Field(default=(), max_length=8)
    """Every request made, redirects included, in order."""
    detail: str = Field(default="", max_length=300)
    """Why, in words (the refused address and range, the timeout, the TLS error)."""
    fetched_at: datetime | None = None
    """When it was fetched (UTC); null when nothing was sent."""
    content_sha256: str | None = None
    """A hash of the body as decoded (the bytes read, when it was cut at the cap)."""
    content_type: str | None = None
    """The media type the server named."""
    body_bytes: Annotated[int, Field(ge=0)] = 0
    """Bytes of body read, after decompression."""
    complete: bool = False
    """The whole body was read, and it is HTML or plain text: a quote it lacks is missing."""
    text: Annotated[str, Field(max_length=MAX_PAGE_TEXT_CHARS)] = ""
    """The page as text (HTML tags dropped), for the quote check."""
    confirmed: bool = False
    """A second request gave the same definite answer (404, 410, NXDOMAIN)."""
    cached: bool = False
    """Taken from the cache: no request was sent for this review."""
    requests: Annotated[int, Field(ge=0)] = 0
    """Requests sent for this review (0 from the cache or when refused)."""
    retry_after_s: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None
    """What the server's ``Retry-After`` asked for (the host is left alone that long, capped)."""


class LookupAnswers(WireModel):
    """What the lane found out, handed to the engine as data."""

    pages: tuple[FetchedPage, ...] = Field(default=(), max_length=MAX_REFERENCES)
    """One record per URL of the plan (fetched, refused or unverified)."""
    packages: dict[str, PackageAnswer] | None = None
    """The package index's answers by normalised name; None when no index was asked."""


class QuoteCheck(WireModel):
    """One quote attributed to a reference, looked for on its page."""

    quote: Annotated[str, Field(max_length=1000)]
    """The quoted words."""
    found: bool | None
    """Found on the page; null when the page could not be read."""


class ReferenceCheck(WireModel):
    """One cited reference on the result: what was asked, what came back, what it means."""

    url: Annotated[str, Field(max_length=MAX_URL_CHARS)]
    """The URL checked."""
    label: str | None = None
    """How the output refers to it (``[3]``), when it does."""
    verdict: Annotated[ReferenceVerdict, _Code]
    """What the answer says about the output."""
    outcome: Annotated[FetchOutcome, _Code]
    """How the fetch ended."""
    chain: tuple[FetchHop, ...] = Field(default=(), max_length=8)
    """The status chain: each request, the address used, the status."""
    detail: str = Field(default="", max_length=300)
    """Why, in words."""
    fetched_at: datetime | None = None
    """When it was fetched (UTC)."""
    content_sha256: str | None = None
    """A hash of the content read."""
    quotes: tuple[QuoteCheck, ...] = Field(default=(), max_length=20)
    """The quotes attributed to it, each found or not."""


__all__ = [
    "MAX_PAGE_TEXT_CHARS",
    "MAX_REFERENCES",
    "MAX_URL_CHARS",
    "CitedUrl",
    "FetchHop",
    "FetchOutcome",
    "FetchedPage",
    "LookupAnswers",
    "LookupPlan",
    "QuoteCheck",
    "ReferenceCheck",
    "ReferenceVerdict",
]
