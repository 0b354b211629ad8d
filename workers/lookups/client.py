"""The SSRF-safe client: one cited URL fetched, its redirects followed by hand.

Written for this, not taken from a library. ``advocate`` is unmaintained (1.0.0, 2020);
``requests-hardened`` 1.3.0 checks only the first address a name resolves to and caps
neither total time nor the decompressed body; ``safehttpx`` follows no redirects, is
async only and lets CGNAT through. What it is built on is well kept: h11 for HTTP/1.1,
the standard library's ``ssl`` and ``ipaddress``.

For each hop: http or https only; the host resolved once, every address checked against
the policy (one bad answer refuses the name), the connection made to a checked address
with TLS verified against the host name; the answer's redirect, if any, is the next hop
(at most ``max_redirects``, a loop stopped at its first repeat). The whole chain shares
one time budget. Whatever goes wrong ends as a ``FetchedPage`` with its outcome: this
never raises for anything a server or a URL can do.
"""

from __future__ import annotations

import hashlib
import re
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from urllib.parse import quote, urljoin, urlsplit

from schemas.references import MAX_URL_CHARS, FetchedPage, FetchHop, FetchOutcome
from workers.evaluate.references import outcome_of_status
from workers.lookups.addresses import AddressPolicy, IPAddress, literal_address
from workers.lookups.page_text import media_type, page_text
from workers.lookups.resolver import NameNotFound, ResolutionFailed, Resolver, system_resolver
from workers.lookups.transport import (
    REDIRECTS,
    Connector,
    ExchangeError,
    Limits,
    RawResponse,
    Target,
    connect_tcp,
    exchange,
)
from workers.settings import USER_AGENT

_HOST = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9_-]*[a-z0-9])?)*\.?$")
_SAFE_PATH = "/%:@!$&'()*+,;=-._~"


class _Stop(Exception):
    def __init__(self, outcome: FetchOutcome, detail: str) -> None:
        super().__init__(detail)
        self.outcome = outcome
        self.detail = detail


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class SafeClient:
    """Fetches URLs a model wrote without letting them reach what they must not."""

    policy: AddressPolicy = field(default_factory=AddressPolicy)
    limits: Limits = field(default_factory=Limits)
    user_agent: str = USER_AGENT
    resolver: Resolver = system_resolver
    connect: Connector = connect_tcp
    tls_context: ssl.SSLContext = field(default_factory=ssl.create_default_context)
    clock: Callable[[], datetime] = _utc_now

    def fetch(self, url: str, *, deadline: float | None = None) -> FetchedPage:
        """GET ``url``, following redirects; never raises for what the server does."""
        started = time.monotonic()
        end = started + self.limits.total_s
        end = min(end, deadline) if deadline is not None else end
        chain: list[FetchHop] = []
        when = self.clock()
        try:
            return self._follow(url, chain, end, when)
        except _Stop as stop:
            return self._failed(url, chain, stop.outcome, stop.detail, when)
        except ExchangeError as exc:
            kind = FetchOutcome(exc.kind)
            return self._failed(url, chain, kind, exc.detail, when)
        except TimeoutError:
            detail = f"no whole answer within {self.limits.total_s:g}s"
            return self._failed(url, chain, FetchOutcome.TIMEOUT, detail, when)
        except ssl.SSLError as exc:  # certificate checks included
            return self._failed(url, chain, FetchOutcome.TLS_ERROR, str(exc)[:200], when)
        except OSError as exc:
            detail = exc.strerror or type(exc).__name__
            return self._failed(url, chain, FetchOutcome.CONNECTION_FAILED, detail, when)

    def _follow(self, url: str, chain: list[FetchHop], end: float, when: datetime) -> FetchedPage:
        current, seen = url, {url}
        for _ in range(self.limits.max_redirects + 1):
            target = parse_target(current)
            hop = FetchHop(url=current[:MAX_URL_CHARS])
            chain.append(hop)
            addresses = self._addresses(target)
            response = self._exchange(target, addresses, end, chain)
            chain[-1] = chain[-1].model_copy(update={"status": response.status})
            if response.status not in REDIRECTS or not response.location:
                return self._answered(url, chain, response, when)
            following = urljoin(current, response.location).partition("#")[0]
            if following in seen:
                raise _Stop(
                    FetchOutcome.TOO_MANY_REDIRECTS, f"a redirect loop back to {following[:100]}"
                )
            seen.add(following)
            current = following
        raise _Stop(
            FetchOutcome.TOO_MANY_REDIRECTS, f"more than {self.limits.max_redirects} redirects"
        )

    def _addresses(self, target: Target) -> list[IPAddress]:
        literal = literal_address(target.host)
        if literal is not None:
            addresses = [literal]
        else:
            try:
                addresses = list(self.resolver(target.host, target.port))
            except NameNotFound as exc:
                raise _Stop(FetchOutcome.NO_SUCH_HOST, str(exc)[:200]) from None
            except ResolutionFailed as exc:
                raise _Stop(FetchOutcome.DNS_FAILED, str(exc)[:200]) from None
        refusal = self.policy.refusal_of_any(addresses)
        if refusal is not None:
            raise _Stop(FetchOutcome.REFUSED, f"{target.host}: {refusal}"[:300])
        return addresses

    def _exchange(
        self, target: Target, addresses: list[IPAddress], end: float, chain: list[FetchHop]
    ) -> RawResponse:
        """The answer from the first checked address that takes the connection."""
        last: OSError | None = None
        for address in addresses:
            chain[-1] = chain[-1].model_copy(update={"address": str(address)})
            try:
                return exchange(
                    target,
                    address,
                    limits=self.limits,
                    deadline=end,
                    connect=self.connect,
                    tls_context=self.tls_context,
                    user_agent=self.user_agent,
                )
            except (ConnectionRefusedError, ConnectionResetError) as exc:
                last = exc  # another address of the name may answer
        raise last if last is not None else OSError("no address to connect to")

    def _answered(
        self, url: str, chain: list[FetchHop], response: RawResponse, when: datetime
    ) -> FetchedPage:
        outcome = outcome_of_status(response.status)
        text, readable = ("", False)
        if outcome is FetchOutcome.OK:
            text, readable = page_text(response.body, response.content_type)
        redirected = f" after {len(chain) - 1} redirect(s)" if len(chain) > 1 else ""
        return FetchedPage(
            url=url,
            outcome=outcome,
            status=response.status,
            chain=tuple(chain),
            detail=f"HTTP {response.status}{redirected}"
            + ("" if response.complete else f"; body cut at {self.limits.body_bytes} bytes"),
            fetched_at=when,
            content_sha256=hashlib.sha256(response.body).hexdigest(),
            content_type=media_type(response.content_type)[:100] or None,
            body_bytes=len(response.body),
            complete=readable and response.complete,
            text=text,
            requests=len(chain),
            retry_after_s=retry_after_s(response.retry_after, when),
        )

    def _failed(
        self, url: str, chain: list[FetchHop], outcome: FetchOutcome, detail: str, when: datetime
    ) -> FetchedPage:
        sent = sum(1 for hop in chain if hop.address is not None)
        return FetchedPage(
            url=url[:MAX_URL_CHARS],
            outcome=outcome,
            status=next((h.status for h in reversed(chain) if h.status is not None), None),
            chain=tuple(chain[-8:]),
            detail=detail[:300],
            fetched_at=when if sent or outcome is not FetchOutcome.REFUSED else None,
            requests=sent,
        )


def parse_target(url: str) -> Target:
    """Where ``url`` points: http(s), a host name or literal, a port; else unsupported."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise _Stop(FetchOutcome.UNSUPPORTED, f"not a URL that can be fetched: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise _Stop(FetchOutcome.UNSUPPORTED, f"scheme {scheme[:20]!r}: only http and https")
    host = parts.hostname or ""
    if ":" not in host:  # not an IPv6 literal: a name, in its ASCII form
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise _Stop(FetchOutcome.UNSUPPORTED, "a host name IDNA cannot encode") from None
        if not _HOST.match(host):
            raise _Stop(FetchOutcome.UNSUPPORTED, f"not a host name: {host[:60]!r}")
    path = quote(parts.path or "/", safe=_SAFE_PATH)
    if parts.query:
        path += "?" + quote(parts.query, safe=_SAFE_PATH + "?/")
    tls = scheme == "https"
    return Target(tls=tls, host=host, port=port or (443 if tls else 80), path=path)


def retry_after_s(value: str | None, now: datetime) -> float | None:
    """A ``Retry-After`` header in seconds (a delay or an HTTP date); None when absent."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, (when - now).total_seconds())
