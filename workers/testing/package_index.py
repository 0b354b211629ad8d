"""A PEP 691 simple index on loopback, for tests and benches of the package look-up.

It lists the projects it is given (200 with a JSON page), answers 404 for any other
name, and plays a fault for the names scripted to have one (a status such as 503, or
a hang until the server stops). Every request path is recorded, so a test counts what
reached the index. Binds 127.0.0.1 only.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
HANG = 0
"""The fault of a name whose request is held until the server stops (a hung index)."""


class IndexServer(ThreadingHTTPServer):
    """The server; its state is the projects, the faults and the requests seen."""

    daemon_threads = True

    def __init__(self, projects: Iterable[str], faults: dict[str, int]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.projects = set(projects)
        self.faults = dict(faults)
        self.requests: Counter[str] = Counter()
        self.accepts: list[str] = []
        self.stopping = threading.Event()
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        """The index's base URL (``http://127.0.0.1:<port>/simple/``)."""
        return f"http://127.0.0.1:{self.server_address[1]}/simple/"


class _Handler(BaseHTTPRequestHandler):
    server: IndexServer

    def do_GET(self) -> None:
        name = self.path.removeprefix("/simple/").rstrip("/")
        with self.server.lock:
            self.server.requests[name] += 1
            self.server.accepts.append(self.headers.get("Accept", ""))
        fault = self.server.faults.get(name)
        if fault == HANG:
            self.server.stopping.wait(60)
            return
        if fault is not None:
            self._reply(fault, b"fault\n", "text/plain")
        elif name in self.server.projects:
            page = {"meta": {"api-version": "1.1"}, "name": name, "files": [], "versions": []}
            self._reply(200, json.dumps(page).encode(), JSON_TYPE)
        else:
            self._reply(404, b"not found\n", "text/plain")

    def _reply(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: tests read ``requests``, not a log."""


@contextmanager
def index_server(
    projects: Iterable[str] = (), faults: dict[str, int] | None = None
) -> Iterator[IndexServer]:
    """A running index on loopback, stopped (and its hung requests released) on exit."""
    server = IndexServer(projects, faults or {})
    thread = threading.Thread(
        target=server.serve_forever, args=(0.05,), name="package-index", daemon=True
    )
    thread.start()
    try:
        yield server
    finally:
        server.stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
