"""One HTTP/1.1 GET to an address already checked: h11 speaks the protocol, we hold the socket.

Holding the socket is the point. The connection goes to the address the policy passed,
never to a second resolution; TLS is negotiated with the URL's host name for SNI and the
certificate check; and every read gets only the time left of the fetch's whole budget, so
a server that drips a byte a second cannot hold a worker longer than that budget (a
per-read timeout alone would let it). The body is decompressed here, a bounded piece at a
time, so a gzip bomb stops at the body cap after decompression; headers are capped by
h11's limit on an incomplete event. No proxy, no cookies, no credentials: nothing is sent
but the request line and the headers below.
"""

from __future__ import annotations

import socket
import ssl
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import h11

from workers.lookups.addresses import IPAddress

READ_CHUNK = 64 * 1024
#: The encodings asked for, and so the only ones read.
ACCEPT_ENCODING = "gzip, deflate"
_ACCEPT = "text/html, text/plain;q=0.9, application/xhtml+xml;q=0.9, */*;q=0.5"
#: gzip or zlib framing, told apart by their headers.
_AUTO_WBITS = zlib.MAX_WBITS | 32
REDIRECTS = frozenset({301, 302, 303, 307, 308})

Connector = Callable[[IPAddress, int, float], socket.socket]
"""Opens a TCP connection to a checked address (tests inject a guard here)."""


class ExchangeError(Exception):
    """The exchange failed before a usable answer: ``kind`` names how."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Limits:
    """Caps on one fetch, its redirects included."""

    connect_s: float = 5.0
    total_s: float = 15.0
    header_bytes: int = 64 * 1024
    body_bytes: int = 2 * 1024 * 1024
    max_redirects: int = 5


@dataclass(frozen=True, slots=True)
class Target:
    """Where one request goes: scheme, the host as named, port and request target."""

    tls: bool
    host: str
    """The host as the URL names it (IDNA-encoded; an IPv6 literal without brackets)."""
    port: int
    path: str

    @property
    def host_header(self) -> str:
        """The ``Host`` header: the name, bracketed if IPv6, with a port only if not default."""
        shown = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.tls else 80
        return shown if self.port == default else f"{shown}:{self.port}"


@dataclass(slots=True)
class RawResponse:
    """What came back: the status, a redirect's location, the body as decoded."""

    status: int
    location: str | None = None
    content_type: str = ""
    retry_after: str | None = None
    body: bytes = b""
    complete: bool = True
    """The whole body was read (not cut at the body cap)."""
    headers: dict[str, str] = field(default_factory=dict)


def connect_tcp(address: IPAddress, port: int, timeout_s: float) -> socket.socket:
    """A TCP connection to ``address`` itself: no name, so nothing is resolved again."""
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.settimeout(timeout_s)
    try:
        sock.connect((str(address), port))
    except BaseException:
        sock.close()
        raise
    return sock


def exchange(
    target: Target,
    address: IPAddress,
    *,
    limits: Limits,
    deadline: float,
    connect: Connector,
    tls_context: ssl.SSLContext,
    user_agent: str,
) -> RawResponse:
    """GET ``target`` from ``address``; raises ``ExchangeError``, ``OSError``, ``SSLError``."""
    sock = connect(address, target.port, min(limits.connect_s, _left(deadline)))
    try:
        if target.tls:
            sock.settimeout(_left(deadline))
            sock = tls_context.wrap_socket(sock, server_hostname=target.host)
        conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=limits.header_bytes)
        request = h11.Request(
            method="GET",
            target=target.path,
            headers=[
                ("Host", target.host_header),
                ("User-Agent", user_agent),
                ("Accept", _ACCEPT),
                ("Accept-Encoding", ACCEPT_ENCODING),
                ("Connection", "close"),
            ],
        )
        sock.settimeout(_left(deadline))
        sock.sendall(conn.send(request) + conn.send(h11.EndOfMessage()))
        response = _head(conn, sock, deadline, limits.header_bytes)
        if response.status in REDIRECTS and response.location:
            return response
        _body(conn, sock, response, limits, deadline)
        return response
    except h11.RemoteProtocolError as exc:
        raise ExchangeError("bad_response", f"not an HTTP/1.1 answer: {exc}") from None
    except h11.LocalProtocolError as exc:  # a target or header h11 will not send
        raise ExchangeError("unsupported", f"not a request HTTP/1.1 can carry: {exc}") from None
    finally:
        sock.close()


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("the fetch's time budget ran out")
    return left


def _receive(
    conn: h11.Connection, sock: socket.socket, deadline: float, size: int = READ_CHUNK
) -> int:
    sock.settimeout(_left(deadline))
    data = sock.recv(size)
    conn.receive_data(data)
    return len(data)


def _head(conn: h11.Connection, sock: socket.socket, deadline: float, limit: int) -> RawResponse:
    """The status and headers.

    No more than ``limit`` + 1 bytes are read before they end, so a head over the limit
    is refused by h11 rather than parsed whole.
    """
    received = 0
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            received += _receive(
                conn, sock, deadline, max(1, min(READ_CHUNK, limit + 1 - received))
            )
        elif isinstance(event, h11.Response):
            headers = {
                name.decode("latin-1"): value.decode("latin-1") for name, value in event.headers
            }
            return RawResponse(
                status=event.status_code,
                location=headers.get("location"),
                content_type=headers.get("content-type", ""),
                retry_after=headers.get("retry-after"),
                headers=headers,
            )
        elif isinstance(event, h11.ConnectionClosed):
            raise ExchangeError("bad_response", "the server closed the connection unanswered")
        # h11.InformationalResponse (1xx): the real answer follows


def _body(
    conn: h11.Connection,
    sock: socket.socket,
    response: RawResponse,
    limits: Limits,
    deadline: float,
) -> None:
    decoder = _decoder(response.headers.get("content-encoding", ""))
    parts: list[bytes] = []
    size = 0
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            _receive(conn, sock, deadline)
            continue
        if isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
            break
        if isinstance(event, h11.Data):
            piece = decoder(bytes(event.data), limits.body_bytes - size)
            parts.append(piece)
            size += len(piece)
            if size > limits.body_bytes:
                response.complete = False
                break
    body = b"".join(parts)
    response.body = body[: limits.body_bytes]


Decoder = Callable[[bytes, int], bytes]


def _decoder(encoding: str) -> Decoder:
    """Turns body bytes into content, at most ``room + 1`` bytes at a time."""
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return lambda data, room: data[: room + 1]
    if encoding not in ("gzip", "x-gzip", "deflate"):
        raise ExchangeError("bad_response", f"body encoded as {encoding[:40]!r}, not asked for")
    inflater = zlib.decompressobj(_AUTO_WBITS)

    def inflate(data: bytes, room: int) -> bytes:
        try:
            out = inflater.decompress(data, room + 1)
            while inflater.unconsumed_tail and len(out) <= room:
                out += inflater.decompress(inflater.unconsumed_tail, room + 1 - len(out))
        except zlib.error as exc:
            detail = f"the {encoding} body does not inflate: {exc}"
            raise ExchangeError("bad_response", detail) from None
        return out

    return inflate
