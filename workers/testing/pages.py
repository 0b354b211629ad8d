"""A loopback web server with scripted pages: what the reference tests and bench fetch.

Each path answers as its ``Page`` says: a status, a body, a redirect, a wait before the
answer, a body dripped a byte at a time, raw bytes. The server counts what reached it (per
path, and the most requests it held at once), so a test can show that a refused URL sent
nothing and a cached one was fetched once. It binds 127.0.0.1 (or ::1) only.
"""

from __future__ import annotations

import gzip
import socket
import threading
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import TracebackType


@dataclass(frozen=True, slots=True)
class Page:
    """How one path answers."""

    status: int = 200
    body: bytes = b""
    content_type: str = "text/html; charset=utf-8"
    headers: tuple[tuple[str, str], ...] = ()
    hold_s: float = 0.0
    """Wait this long before answering (to count requests in flight)."""
    drip_s: float | None = None
    """Send the body one byte at a time, this far apart, for as long as the client reads."""
    raw: bytes | None = None
    """Send exactly these bytes as the answer."""
    length: int | None = None
    """A ``Content-Length`` to claim instead of the body's own."""


def html(text: str, *, status: int = 200) -> Page:
    """A small HTML page holding ``text`` in a paragraph, among markup and a script."""
    body = (
        "<!doctype html><html><head><title>Page</title><script>var x = 'not text';</script>"
        f"</head><body><nav>Home</nav><p>{text}</p></body></html>"
    )
    return Page(status=status, body=body.encode())


def redirect(to: str, *, status: int = 302) -> Page:
    """A redirect to ``to`` (a path on this server, or any URL)."""
    return Page(status=status, headers=(("Location", to),))


def gzip_bomb(inflated_bytes: int) -> Page:
    """A gzip body that inflates to ``inflated_bytes`` zero bytes (about 1,000 to 1)."""
    chunk = b"\0" * (1024 * 1024)
    out = bytearray()
    with gzip.GzipFile(fileobj=_Sink(out), mode="wb", compresslevel=9) as packed:
        for _ in range(inflated_bytes // len(chunk)):
            packed.write(chunk)
    return Page(body=bytes(out), headers=(("Content-Encoding", "gzip"),))


class _Sink:
    def __init__(self, out: bytearray) -> None:
        self.out = out

    def write(self, data: bytes) -> int:
        self.out.extend(data)
        return len(data)

    def flush(self) -> None:
        """Nothing buffered."""


_REASONS = {200: "OK", 301: "Moved", 302: "Found", 404: "Not Found", 410: "Gone"}


@dataclass
class PageServer:
    """Serves ``pages`` on loopback until closed; a context manager."""

    pages: Mapping[str, Page]
    host: str = "127.0.0.1"
    hits: Counter[str] = field(default_factory=Counter)
    connections: int = 0
    max_in_flight: int = 0
    _in_flight: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stopping: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)
    _listener: socket.socket | None = None
    _port: int = 0

    def __enter__(self) -> PageServer:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        self._listener = socket.socket(family, socket.SOCK_STREAM)
        self._listener.bind((self.host, 0))
        self._port = int(self._listener.getsockname()[1])
        self._listener.listen(64)
        self._listener.settimeout(0.2)
        accepting = threading.Thread(target=self._accept, name="page-server", daemon=True)
        accepting.start()
        self._threads.append(accepting)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stopping.set()
        for thread in list(self._threads):
            thread.join(timeout=10)
        if self._listener is not None:
            self._listener.close()

    @property
    def port(self) -> int:
        """The port the server listens on (kept after it closes, for the record)."""
        return self._port

    def url(self, path: str, *, host: str | None = None) -> str:
        """The URL of ``path`` on this server (``host``: another spelling of its address)."""
        shown = host or (f"[{self.host}]" if ":" in self.host else self.host)
        return f"http://{shown}:{self.port}{path}"

    @property
    def requests(self) -> int:
        """Requests that reached the server, all paths."""
        return sum(self.hits.values())

    def _accept(self) -> None:
        assert self._listener is not None
        while not self._stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                self.connections += 1
            worker = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            worker.start()
            self._threads.append(worker)

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            head = b""
            while b"\r\n\r\n" not in head and len(head) < 65536:
                try:
                    piece = conn.recv(4096)
                except OSError:
                    return
                if not piece:
                    return
                if not head and piece[:1] == b"\x16":  # a TLS hello to a plain server
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")
                    return
                head += piece
            path = head.split(b" ", 2)[1].decode("latin-1") if head.count(b" ") >= 2 else "/"
            page = self.pages.get(path, Page(status=404, body=b"not here"))
            with self._lock:
                self.hits[path] += 1
                self._in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self._in_flight)
            # In flight from its arrival until its answer starts to go out: counted so, the
            # server never sees more at once than a client let out (a client that has read
            # a whole answer may start its next request before this thread runs again).
            try:
                if page.hold_s:
                    self._stopping.wait(page.hold_s)
            finally:
                with self._lock:
                    self._in_flight -= 1
            try:
                self._answer(conn, page)
            except OSError:
                pass  # the client hung up: what it was owed no longer matters

    def _pad(self, conn: socket.socket, missing: int) -> None:
        """Zeros up to a claimed length, until the client hangs up (it should, at its cap)."""
        block = b"\0" * 65536
        while missing > 0 and not self._stopping.is_set():
            conn.sendall(block[: min(missing, len(block))])
            missing -= len(block)

    def _answer(self, conn: socket.socket, page: Page) -> None:
        if page.raw is not None:
            conn.sendall(page.raw)
            return
        length = page.length if page.length is not None else len(page.body)
        lines = [f"HTTP/1.1 {page.status} {_REASONS.get(page.status, 'Status')}"]
        lines += [f"Content-Type: {page.content_type}", f"Content-Length: {length}"]
        lines += [f"{name}: {value}" for name, value in page.headers]
        conn.sendall(("\r\n".join([*lines, "Connection: close", "", ""])).encode("latin-1"))
        if page.drip_s is None:
            conn.sendall(page.body)
            self._pad(conn, length - len(page.body))
            return
        sent = 0
        while sent < length and not self._stopping.is_set():
            conn.sendall(page.body[sent : sent + 1] or b"x")
            sent += 1
            time.sleep(page.drip_s)
