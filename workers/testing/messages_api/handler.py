"""The request handler of the local Messages API server: one exchange per request."""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

from workers.testing.messages_api.script import Exchange, Reply, ReplyKind

if TYPE_CHECKING:
    from workers.testing.messages_api.server import MessagesServer


def _error_body(error_type: str, message: str, code: str | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"type": error_type, "message": message}
    if code is not None:
        error["details"] = {"error_code": code}
    return {"type": "error", "error": error}


_DIMENSION_LINE = re.compile(r"^- ([a-z_]+): ", re.MULTILINE)


#: Tool properties beside the dimensions: the optional per-claim grounding list.
NOT_DIMENSIONS = frozenset({"claims"})


def _tool_dimensions(body: Mapping[str, Any]) -> list[str]:
    """The dimensions asked for: the tool's properties, else the prompt's list of them."""
    for tool in body.get("tools") or []:
        props = tool.get("input_schema", {}).get("properties", {})
        return [str(name) for name in props if name not in NOT_DIMENSIONS]
    return _prompt_dimensions(body)


def _prompt_dimensions(body: Mapping[str, Any]) -> list[str]:
    """The ``Dimensions to score:`` list of the first user turn (a request without tools)."""
    messages = body.get("messages") or []
    content = messages[0].get("content") if messages and isinstance(messages[0], dict) else ""
    if isinstance(content, list):
        content = "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    if not isinstance(content, str) or "Dimensions to score:" not in content:
        return []
    listed = content.split("Dimensions to score:", 1)[1].split("\n\n", 1)[0]
    return _DIMENSION_LINE.findall(listed)


def derived_scores(body: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Deterministic scores from the request: same request, same scores."""
    digest = hashlib.sha256(json.dumps(body.get("messages"), sort_keys=True).encode()).hexdigest()
    out: dict[str, dict[str, Any]] = {}
    for dim in _tool_dimensions(body):
        h = hashlib.sha256(f"{digest}:{dim}".encode()).digest()
        score = round(0.3 + 0.65 * int.from_bytes(h[:4], "big") / 0xFFFFFFFF, 2)
        out[dim] = {"score": score, "justification": f"derived score for {dim}"}
    return out


class MessagesHandler(BaseHTTPRequestHandler):
    """Answers ``POST /v1/messages`` from the server's script, or with derived scores."""

    protocol_version = "HTTP/1.1"
    timeout = 120  # idle keep-alive connections end eventually
    disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed ACK
    server: MessagesServer

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
        with srv.lock:
            srv.in_flight += 1
            srv.max_in_flight = max(srv.max_in_flight, srv.in_flight)
        try:
            stopping = srv.stopping.wait(delay)
        finally:
            with srv.lock:
                srv.in_flight -= 1
        if stopping or reply.kind is ReplyKind.HANG:
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
        answer_in_text = reply.kind is ReplyKind.OK and (
            not self.server.tool_use or not body.get("tools")
        )
        if reply.kind is ReplyKind.NO_TOOL:
            content: list[dict[str, Any]] = [{"type": "text", "text": "Looks fine to me."}]
            stop_reason = "end_turn"
        elif reply.kind is ReplyKind.TEXT:
            content = [{"type": "text", "text": reply.text}]
            stop_reason = reply.stop_reason
        elif answer_in_text:  # no tool use here, or none asked for: the verdict as JSON text
            scores = dict(reply.tool_input) if reply.tool_input is not None else None
            text = json.dumps(scores if scores is not None else derived_scores(body))
            content = [{"type": "text", "text": text}]
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
