"""A local server speaking enough of the Anthropic Messages API for the real SDK.

Tests script its replies (scores, latency, 429 with ``retry-after``, 529, 500, 400, a
hung connection, malformed or missing tool calls) and read back every request it got;
with an empty script it answers deterministic scores derived from the request, so it
also serves benchmarks (``python -m workers.testing.messages_api.server --latency-ms 200``).
"""

from __future__ import annotations

import argparse
import signal
import socket
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from typing import Any

from workers.testing.messages_api.handler import MessagesHandler
from workers.testing.messages_api.script import Exchange, Reply, ReplyKind

DEFAULT_API_KEY = "test-key"


class MessagesServer(ThreadingHTTPServer):
    """The HTTP server; its state is the script, the exchanges and the open connections."""

    daemon_threads = False
    block_on_close = True
    request_queue_size = 1024

    def __init__(
        self, addr: tuple[str, int], api_key: str, latency_s: float, tool_use: bool = True
    ) -> None:
        super().__init__(addr, MessagesHandler)
        self.api_key = api_key
        self.latency_s = latency_s
        # False: a server without tool use; OK replies carry the verdict as JSON text.
        self.tool_use = tool_use
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.script: deque[Reply] = deque()
        self.exchanges: list[Exchange] = []
        self.seen_systems: set[str] = set()
        self.connections: set[socket.socket] = set()
        self.in_flight = 0
        self.max_in_flight = 0

    def process_request(self, request: Any, client_address: Any) -> None:
        """Track the connection so that ``stop`` can unblock its handler."""
        with self.lock:
            self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        """Forget a finished connection."""
        with self.lock:
            self.connections.discard(request)
        super().shutdown_request(request)

    def stop(self) -> None:
        """Stop serving, wake sleeping handlers, cut idle keep-alive connections, join."""
        self.stopping.set()
        self.shutdown()
        with self.lock:
            open_connections = list(self.connections)
        for conn in open_connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.server_close()


class ServerHandle:
    """A running server: where it is, what to answer next, what it received."""

    def __init__(self, server: MessagesServer) -> None:
        self._server = server
        host, port = server.server_address[:2]
        self.base_url = f"http://{host!s}:{port}"
        self.api_key = server.api_key

    def script(self, *replies: Reply) -> None:
        """Queue replies, answered in order, one per request; then the default."""
        with self._server.lock:
            self._server.script.extend(replies)

    @property
    def requests(self) -> list[Exchange]:
        """Every request received so far, oldest first (rejected ones included)."""
        with self._server.lock:
            return list(self._server.exchanges)

    @property
    def max_in_flight(self) -> int:
        """The most requests that waited for their answer at the same time."""
        with self._server.lock:
            return self._server.max_in_flight

    @property
    def calls(self) -> int:
        """How many HTTP requests arrived."""
        return len(self.requests)

    def reset(self) -> None:
        """Forget the script and the recorded requests."""
        with self._server.lock:
            self._server.script.clear()
            self._server.exchanges.clear()
            self._server.max_in_flight = self._server.in_flight


@contextmanager
def running_server(
    api_key: str = DEFAULT_API_KEY,
    latency_s: float = 0.0,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    tool_use: bool = True,
) -> Iterator[ServerHandle]:
    """Serve in a background thread; on exit wake hung handlers and join every thread.

    ``tool_use=False`` plays a server that ignores ``tools`` and ``tool_choice``: its OK
    replies (scripted or derived) are the verdict as JSON in the text.
    """
    server = MessagesServer((host, port), api_key, latency_s, tool_use)
    thread = threading.Thread(
        target=server.serve_forever, args=(0.05,), name="messages-server", daemon=True
    )
    thread.start()
    try:
        yield ServerHandle(server)
    finally:
        server.stop()
        thread.join()


def main(argv: list[str] | None = None) -> None:
    """Run the server in the foreground until SIGINT or SIGTERM; either stops it cleanly.

    Both are handled whatever the process inherited: started in the background (``nohup``,
    some CI runners), it would ignore SIGINT, and SIGTERM would kill it mid-request.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--api-key", default=DEFAULT_API_KEY)
    parser.add_argument(
        "--no-tool-use",
        action="store_true",
        help="ignore tools and tool_choice: answer the verdict as JSON text",
    )
    args = parser.parse_args(argv)
    stopped = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stopped.set())
    with running_server(
        args.api_key, args.latency_ms / 1000, args.host, args.port, tool_use=not args.no_tool_use
    ) as handle:
        print(f"listening on {handle.base_url}", flush=True)
        while not stopped.wait(0.2):
            pass


if __name__ == "__main__":
    main()


__all__ = [
    "DEFAULT_API_KEY",
    "Exchange",
    "MessagesHandler",
    "MessagesServer",
    "Reply",
    "ReplyKind",
    "ServerHandle",
    "running_server",
]
