"""A local server speaking enough of the Anthropic Messages API for the real SDK.

Tests script its replies (scores, latency, 429 with ``retry-after``, 529, 500, 400, a
hung connection, malformed or missing tool calls) and read back every request it got;
with an empty script it answers deterministic scores derived from the request, so it
also serves benchmarks (``python -m workers.testing.messages_api.server --latency-ms 200``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import socket
import threading
import uuid
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from workers.testing.messages_api.script import Exchange, Reply, ReplyKind

DEFAULT_API_KEY = "test-key"


class _Server(ThreadingHTTPServer):
    daemon_threads = False
    block_on_close = True
    request_queue_size = 1024

    def __init__(self, addr: tuple[str, int], api_key: str, latency_s: float) -> None:
        super().__init__(addr, _Handler)
        self.api_key = api_key
        self.latency_s = latency_s
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.script: deque[Reply] = deque()
        self.exchanges: list[Exchange] = []
        self.seen_systems: set[str] = set()
        self.connections: set[socket.socket] = set()

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


def _error_body(error_type: str, message: str, code: str | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"type": error_type, "message": message}
    if code is not None:
        error["details"] = {"error_code": code}
    return {"type": "error", "error": error}


def _tool_dimensions(body: Mapping[str, Any]) -> list[str]:
    for tool in body.get("tools") or []:
        props = tool.get("input_schema", {}).get("properties", {})
        return [str(name) for name in props]
    return []


def derived_scores(body: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Deterministic scores from the request: same request, same scores."""
    digest = hashlib.sha256(json.dumps(body.get("messages"), sort_keys=True).encode()).hexdigest()
    out: dict[str, dict[str, Any]] = {}
    for dim in _tool_dimensions(body):
        h = hashlib.sha256(f"{digest}:{dim}".encode()).digest()
        score = round(0.3 + 0.65 * int.from_bytes(h[:4], "big") / 0xFFFFFFFF, 2)
        out[dim] = {"score": score, "justification": f"derived score for {dim}"}
    return out


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 120  # idle keep-alive connections end eventually
    disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed ACK
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Silence per-request logging."""

    def do_POST(self) -> None:
        """Serve ``/v1/messages``; record every request, whatever its fate."""
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        exchange = Exchange(
            self.path,
            {k.lower(): v for k, v in self.headers.items()},
            body if isinstance(body, dict) else None,
        )
        with self.server.lock:
            self.server.exchanges.append(exchange)
        if self.path.split("?")[0] != "/v1/messages":
            self._fail(exchange, 404, "not_found_error", f"no route {self.path}")
        elif not self._authenticated():
            self._fail(exchange, 401, "authentication_error", "invalid x-api-key")
        elif not self.headers.get("anthropic-version"):
            self._fail(
                exchange, 400, "invalid_request_error", "anthropic-version: header is required"
            )
        elif not (exchange.body and exchange.body.get("model") and exchange.body.get("messages")):
            self._fail(exchange, 400, "invalid_request_error", "malformed request body")
        else:
            self._answer(exchange, exchange.body)

    def _authenticated(self) -> bool:
        """``x-api-key``, or ``Authorization: Bearer`` (what SDK 2.x sends for an API key)."""
        key = self.server.api_key
        return (
            self.headers.get("x-api-key") == key
            or self.headers.get("authorization") == f"Bearer {key}"
        )

    def _fail(
        self,
        exchange: Exchange,
        status: int,
        error_type: str,
        message: str,
        headers: Mapping[str, str] | None = None,
        code: str | None = None,
    ) -> None:
        exchange.status = status
        self._send(status, _error_body(error_type, message, code), headers)

    def _answer(self, exchange: Exchange, body: dict[str, Any]) -> None:
        srv = self.server
        with srv.lock:
            reply = srv.script.popleft() if srv.script else Reply.ok()
        delay = srv.latency_s if reply.latency_s is None else reply.latency_s
        if srv.stopping.wait(delay) or reply.kind is ReplyKind.HANG:
            self.close_connection = True
            return
        if reply.kind is ReplyKind.ERROR:
            self._fail(
                exchange,
                reply.status,
                reply.error_type,
                f"scripted {reply.error_type}",
                reply.headers,
                reply.error_code,
            )
            return
        if reply.kind is ReplyKind.RAW:
            exchange.status = reply.status
            self._send_bytes(reply.status, reply.body, reply.content_type)
            return
        message = self._message(body, reply)
        exchange.status, exchange.usage = 200, message["usage"]
        self._send(200, message)

    def _message(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        if reply.kind is ReplyKind.NO_TOOL:
            content: list[dict[str, Any]] = [{"type": "text", "text": "Looks fine to me."}]
            stop_reason = "end_turn"
        else:
            if reply.tool_input is not None:
                tool_input = dict(reply.tool_input)
            elif reply.kind is ReplyKind.MALFORMED:
                tool_input = {dim: {"score": 1.7} for dim in _tool_dimensions(body)}
            else:
                tool_input = derived_scores(body)
            tool_name = (body.get("tool_choice") or {}).get("name", "record_scores")
            content = [
                {
                    "type": "tool_use",
                    "id": f"toolu_{uuid.uuid4().hex[:20]}",
                    "name": tool_name,
                    "input": tool_input,
                }
            ]
            stop_reason = "tool_use"
        return {
            "id": f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": self._usage(body, content),
        }

    def _usage(self, body: dict[str, Any], content: list[dict[str, Any]]) -> dict[str, int]:
        """Token counts (4 characters a token); a cached system prompt is written once."""
        system = body.get("system")
        system_text = json.dumps(system) if system else ""
        cached = isinstance(system, list) and any("cache_control" in b for b in system)
        creation = read = 0
        if cached:
            with self.server.lock:
                first = system_text not in self.server.seen_systems
                self.server.seen_systems.add(system_text)
            creation, read = (len(system_text) // 4, 0) if first else (0, len(system_text) // 4)
        uncached = json.dumps(body.get("messages")) + ("" if cached else system_text)
        return {
            "input_tokens": max(1, len(uncached) // 4),
            "output_tokens": max(1, len(json.dumps(content)) // 4),
            "cache_creation_input_tokens": creation,
            "cache_read_input_tokens": read,
        }

    def _send(
        self, status: int, payload: dict[str, Any], headers: Mapping[str, str] | None = None
    ) -> None:
        self._send_bytes(status, json.dumps(payload).encode(), "application/json", headers)

    def _send_bytes(
        self,
        status: int,
        data: bytes,
        content_type: str,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        try:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            self.send_header("request-id", f"req_{uuid.uuid4().hex[:24]}")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (timeout): nothing to do


class ServerHandle:
    """A running server: where it is, what to answer next, what it received."""

    def __init__(self, server: _Server) -> None:
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
    def calls(self) -> int:
        """How many HTTP requests arrived."""
        return len(self.requests)

    def reset(self) -> None:
        """Forget the script and the recorded requests."""
        with self._server.lock:
            self._server.script.clear()
            self._server.exchanges.clear()


@contextmanager
def running_server(
    api_key: str = DEFAULT_API_KEY, latency_s: float = 0.0, host: str = "127.0.0.1", port: int = 0
) -> Iterator[ServerHandle]:
    """Serve in a background thread; on exit wake hung handlers and join every thread."""
    server = _Server((host, port), api_key, latency_s)
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
    """Run the server in the foreground until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--api-key", default=DEFAULT_API_KEY)
    args = parser.parse_args(argv)
    with running_server(args.api_key, args.latency_ms / 1000, args.host, args.port) as handle:
        print(f"listening on {handle.base_url}", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()


__all__ = ["DEFAULT_API_KEY", "Exchange", "Reply", "ReplyKind", "ServerHandle", "running_server"]
