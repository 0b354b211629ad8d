"""How many requests/s the Messages API double answers on its own, K connections at once.

``bench.stage1_io`` measures a Stage 1 worker against this server; this checks that the
server is not what limits it. K keep-alive connections each send the same Wall call the
SDK sends (built by the judge's own prompt code), ``rounds`` times in a row; the client
is one thread multiplexing raw sockets with ``selectors``, so it costs next to nothing
beside the server. The bound is K / latency.
"""

from __future__ import annotations

import json
import selectors
import socket
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from bench import common
from schemas.judging import JudgeTier
from schemas.quality import WALL_DIMENSIONS
from workers.evaluate.judge_task import task_for
from workers.judges import prompt
from workers.settings import Settings


def wall_call_body(text: str) -> dict[str, Any]:
    """The JSON body of one Stage 1 Wall call, as ``AnthropicJudge`` sends it."""
    obj = common.review_obj("burst", "n0", content=text, task="Summarise the export.")
    task = task_for(common.build_request(obj), JudgeTier.WALL, WALL_DIMENSIONS)
    return {
        "model": Settings().stage1_model,
        "max_tokens": 1024,
        "system": prompt.system_blocks(),
        "tools": [prompt.score_tool(task.dimensions, False)],
        "tool_choice": {"type": "tool", "name": prompt.TOOL_NAME},
        "messages": prompt.initial_messages(task),
        "temperature": 0.0,
    }


def raw_request(host: str, port: int, body: dict[str, Any], api_key: str) -> bytes:
    """One keep-alive ``POST /v1/messages`` as bytes."""
    data = json.dumps(body).encode()
    head = (
        f"POST /v1/messages HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"x-api-key: {api_key}\r\nanthropic-version: 2023-06-01\r\n"
        f"content-type: application/json\r\ncontent-length: {len(data)}\r\n\r\n"
    )
    return head.encode() + data


@dataclass
class _Conn:
    sock: socket.socket
    left: int
    buffer: bytearray = field(default_factory=bytearray)

    def complete(self) -> bool:
        """Whether ``buffer`` holds one whole response; drop it from the buffer if so."""
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return False
        head = bytes(self.buffer[:end]).decode("latin-1").lower()
        if not head.startswith("http/1.1 200"):
            raise RuntimeError(f"server answered {head.splitlines()[0]!r}")
        length = next(
            int(line.split(":", 1)[1])
            for line in head.split("\r\n")
            if line.startswith("content-length:")
        )
        if len(self.buffer) < end + 4 + length:
            return False
        del self.buffer[: end + 4 + length]
        return True


def burst(base_url: str, api_key: str, connections: int, rounds: int) -> dict[str, Any]:
    """``connections`` clients at once, ``rounds`` calls each; requests/s against the bound."""
    url = urlsplit(base_url)
    host, port = url.hostname or "127.0.0.1", url.port or 80
    request = raw_request(host, port, wall_call_body(common.SAMPLE_TEXT), api_key)
    selector = selectors.DefaultSelector()
    conns = []
    for _ in range(connections):
        sock = socket.create_connection((host, port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conns.append(_Conn(sock, rounds))
    started = time.perf_counter()
    for conn in conns:
        conn.sock.sendall(request)
        conn.sock.setblocking(False)
        selector.register(conn.sock, selectors.EVENT_READ, conn)
    done, total = 0, connections * rounds
    while done < total:
        for key, _ in selector.select(timeout=30):
            conn = key.data
            chunk = conn.sock.recv(1 << 16)
            if not chunk:
                raise RuntimeError("the server closed a connection")
            conn.buffer += chunk
            while conn.complete():
                done += 1
                conn.left -= 1
                if conn.left:
                    conn.sock.setblocking(True)
                    conn.sock.sendall(request)
                    conn.sock.setblocking(False)
    seconds = time.perf_counter() - started
    for conn in conns:
        selector.unregister(conn.sock)
        conn.sock.close()
    return {"connections": connections, "requests": total, "seconds": round(seconds, 3)}


def measure(
    base_url: str, api_key: str, latency_s: float, connections: int, rounds: int = 5
) -> dict[str, Any]:
    """``burst`` after a warm-up, with its rate and the share of its bound."""
    burst(base_url, api_key, connections, 1)
    figures = burst(base_url, api_key, connections, rounds)
    rate, bound = figures["requests"] / figures["seconds"], connections / latency_s
    return {
        **figures,
        "requests_per_s": round(rate, 1),
        "bound_per_s": round(bound, 1),
        "pct_of_bound": round(100 * rate / bound, 1),
    }


def main(argv: list[str] | None = None) -> None:
    parser = common.command_line(__doc__)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--connections", type=int, action="append")
    args = parser.parse_args(argv)
    latency = args.latency_ms / 1000
    with common.messages_api_process(latency) as (_, base_url):
        for k in args.connections or [100, 200]:
            print(measure(base_url, "test-key", latency, k))


if __name__ == "__main__":
    main()
