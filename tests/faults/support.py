"""Helpers the fault tests share: fleets under test, a faulty Messages API, counting, figures."""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

from bench import common
from schemas.result import ReviewError, ReviewResult
from tests.infrastructure import require_redis_server, wait_until
from workers.client import ReviewClient
from workers.fleet.queues import Queue
from workers.local.launcher import LocalFleet
from workers.local.redis_server import PrivateRedis
from workers.results.stream import read_all
from workers.settings import Settings
from workers.testing.messages_api import server as ms

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "workers" / "samples"
FIGURES = ROOT / "bench" / "results" / "faults.json"
_FIGURES_LOCK = threading.Lock()

#: Text that makes ``FaultServer`` call its poison hook and hold the request unanswered
#: (the worker that sent it is then killed, as an OOM or a segfault would kill it).
POISON_MARKER = "POISON-PILL-7f3a"

#: Short limits so that faults recover in seconds; they still nest (Settings checks).
BASE_ENV = {
    "WINDAGS_STAGE1_SOFT_LIMIT_S": "10",
    "WINDAGS_STAGE1_HARD_LIMIT_S": "12",
    "WINDAGS_STAGE2_SOFT_LIMIT_S": "22",
    "WINDAGS_STAGE2_HARD_LIMIT_S": "24",
    "WINDAGS_JUDGE_TIMEOUT_S": "2",
    "WINDAGS_JUDGE_MAX_ATTEMPTS": "3",
    "WINDAGS_JUDGE_RETRY_BUDGET_S": "2",
    "WINDAGS_VISIBILITY_TIMEOUT_S": "25",
}


def fleet_env(
    tag: str, server: FaultServer | None = None, extra: dict[str, str] | None = None
) -> dict[str, str]:
    """A fleet environment with its own key prefix.

    With a ``server`` the judge is the real Anthropic SDK calling it; without one, the
    built-in judge.
    """
    env = {
        **BASE_ENV,
        "WINDAGS_KEY_PREFIX": f"faults-{tag}-{uuid.uuid4().hex[:6]}",
        "WINDAGS_JUDGE_BACKEND": "builtin" if server is None else "anthropic",
    }
    if server is not None:
        env["WINDAGS_ANTHROPIC_API_KEY"] = server.api_key
        env["WINDAGS_ANTHROPIC_BASE_URL"] = server.base_url
    env.update(extra or {})
    return env


@contextmanager
def private_redis(*, appendonly: bool = False) -> Iterator[PrivateRedis]:
    """A redis-server of the block's own; skips without the binary (fails under CI).

    Fleets with different key prefixes share a database safely (test_shared_redis.py); the
    fault tests still give each fleet its own server, whose kills and restarts touch no
    other test.
    """
    require_redis_server()
    with common.private_redis(appendonly=appendonly) as server:
        yield server


@dataclass(frozen=True)
class FleetUnderTest:
    """A running fleet and what a test drives it with.

    Attributes:
        fleet: The worker processes (kill, stop and restart them through it).
        settings: What the workers read from their environment (validated: limits nest).
        db: A client of the fleet's Redis, to read streams, queues and counters.
        client: A DAG runtime's client that submits reviews to the fleet.
    """

    fleet: LocalFleet
    settings: Settings
    db: redis.Redis
    client: ReviewClient


@contextmanager
def running_fleet(
    redis_url: str,
    tag: str,
    *,
    server: FaultServer | None = None,
    extra: dict[str, str] | None = None,
    concurrency: dict[Queue, int] | None = None,
    pool: str | None = None,
) -> Iterator[FleetUnderTest]:
    """One worker per queue on ``redis_url``, ready; stopped and its clients closed after.

    Args:
        redis_url: The fleet's broker and result store.
        tag: Names the fleet's key prefix (unique per call).
        server: The Messages API its Anthropic judge calls; None for the built-in judge.
        extra: Environment beyond ``BASE_ENV`` (tighter limits, say).
        concurrency: Threads (or greenlets) per worker; the launcher's default when None.
        pool: Every worker's pool; None: the launcher's (gevent for the stages that call
            a model judge).
    """
    env = fleet_env(tag, server, extra)
    settings = common.settings_for(redis_url, env)
    db = redis.Redis.from_url(redis_url)
    client = ReviewClient(settings)
    try:
        with common.running_fleet(redis_url, env, concurrency, pool) as fleet:
            yield FleetUnderTest(fleet, settings, db, client)
    finally:
        client.close()
        db.close()


# --- requests -------------------------------------------------------------------------


def sample(name: str, **changes: Any) -> dict[str, Any]:
    """A sample request with top-level fields replaced."""
    body: dict[str, Any] = json.loads((SAMPLES / f"{name}.json").read_text())
    body.update(changes)
    return body


#: The three kinds of review the load tests mix: accept, Floor failure, Stage 2 escalation.
MIX = ("good_python", "floor_failure_python", "final_deliverable")


#: Workers of the fleets whose workers the tests kill or stop: enough threads that each
#: fault finds reviews running and reserved.
CHURN_CONCURRENCY = {Queue.STAGE1: 6, Queue.ROUTER: 2, Queue.STAGE2: 6}


def mixed(dag_id: str, nodes: list[str]) -> list[dict[str, Any]]:
    """One marked request per node, cycling through ``MIX``."""
    return [marked(MIX[i % len(MIX)], dag_id, node) for i, node in enumerate(nodes)]


def marker(node_id: str) -> str:
    """A string unique to one review, embedded in its output to attribute model calls."""
    return f"<<review {node_id} end>>"


def marked(name: str, dag_id: str, node_id: str) -> dict[str, Any]:
    """A sample whose output carries the review's marker (a comment or a last line)."""
    body = sample(name, dag_id=dag_id, node_id=node_id)
    output = dict(body["output"])
    prefix = "# " if output["kind"] == "python" else ""
    output["content"] = f"{output['content']}\n{prefix}{marker(node_id)}\n"
    body["output"] = output
    return body


def fresh_dag(tag: str = "dag") -> str:
    """A DAG id nobody used before."""
    return f"{tag}-{uuid.uuid4().hex[:10]}"


# --- streams --------------------------------------------------------------------------


@dataclass(frozen=True)
class StreamCount:
    """Entries of one DAG's stream, counted by (dag_id, node_id, attempt)."""

    per_key: Counter[str]
    results: dict[str, ReviewResult]
    errors: dict[str, ReviewError]

    def lost(self, expected: list[str]) -> list[str]:
        """Expected keys with no entry."""
        return [k for k in expected if self.per_key[k] == 0]

    def duplicated(self) -> dict[str, int]:
        """Keys with more than one entry."""
        return {k: n for k, n in self.per_key.items() if n > 1}

    @property
    def total(self) -> int:
        """Entries on the stream."""
        return sum(self.per_key.values())


def count_stream(db: redis.Redis, settings: Settings, dag_id: str) -> StreamCount:
    """Read the whole stream (XRANGE) and count entries per review key."""
    per_key: Counter[str] = Counter()
    results: dict[str, ReviewResult] = {}
    errors: dict[str, ReviewError] = {}
    for entry in read_all(db, settings.keys.results(dag_id)):
        payload = entry.payload
        key = f"{payload.dag_id}:{payload.node_id}:{payload.attempt}"
        per_key[key] += 1
        if isinstance(payload, ReviewResult):
            results[key] = payload
        else:
            errors[key] = payload
    return StreamCount(per_key, results, errors)


def in_flight(db: redis.Redis, settings: Settings) -> dict[str, int]:
    """Messages still queued, delivered and unacked, or counted in flight (reserved)."""
    keys = settings.keys
    return {
        "queued": sum(int(db.llen(keys.queue(q.value))) for q in Queue),
        "unacked": int(db.hlen(keys.unacked)),
        "reserved": sum(int(db.zcard(keys.reserved(q.value))) for q in Queue),
    }


def wait_quiet(db: redis.Redis, settings: Settings, timeout_s: float = 60.0) -> bool:
    """Wait until nothing is in flight: no entry can land after that.

    What a fault test counts after its reviews are in: a redelivery, a retry waiting for
    its countdown, a killed worker's messages waiting for their restore are all queued or
    unacked until they have run, and a task is acked only with (or after) what it
    publishes. Waiting for that, rather than sleeping a few seconds, sees every late
    duplicate, however late; and returns as soon as there can be none.
    """
    return wait_until(lambda: not any(in_flight(db, settings).values()), timeout_s, 0.2)


def unfiled(sent: Counter[Any], filed: Counter[Any]) -> list[Any]:
    """What was sent more often than it was filed, by identity (a digest, a review key).

    Counts alone settle too early: one message filed twice, or one stray, makes up for
    one still on its way.
    """
    return sorted(item for item, n in sent.items() if filed[item] < n)


# --- figures --------------------------------------------------------------------------


def record(name: str, figures: dict[str, Any], *, path: Path = FIGURES) -> None:
    """Print one summary line; merge the figures into ``path`` only when asked.

    ``WINDAGS_WRITE_FIGURES=1`` writes them (for the closing note's figures): a plain
    ``make test`` never modifies a tracked file.
    """
    print(f"\n[{path.stem}] {name}: " + ", ".join(f"{k}={v}" for k, v in figures.items()))
    if os.environ.get("WINDAGS_WRITE_FIGURES") != "1":
        return
    with _FIGURES_LOCK:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            data: dict[str, Any] = json.loads(path.read_text())
        except (OSError, ValueError):
            data = {}
        data[name] = {**figures, "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


# --- a Messages API server with one extra fault ---------------------------------------


#: Longest a poisoned request is held unanswered (its worker is killed long before).
POISON_HOLD_S = 60.0


class _FaultHandler(ms.MessagesHandler):
    """The stock handler, plus per-model latency and the poison hook.

    A request to a model in ``poison_models`` that carries ``POISON_MARKER`` is reported
    to ``on_poison`` and then held unanswered, like a call its worker never survives.
    """

    server: _FaultServerImpl

    def _answer(self, exchange: ms.Exchange, body: dict[str, Any]) -> None:
        srv = self.server
        extra = srv.model_latency_s.get(str(body.get("model")), 0.0)
        if extra and srv.stopping.wait(extra):
            self.close_connection = True
            return
        hook = srv.on_poison
        if (
            hook is not None
            and str(body.get("model")) in srv.poison_models
            and POISON_MARKER in json.dumps(body.get("messages"))
        ):
            hook(exchange)
            srv.stopping.wait(POISON_HOLD_S)
            self.close_connection = True
            return
        super()._answer(exchange, body)


class _FaultServerImpl(ms.MessagesServer):
    def __init__(self, addr: tuple[str, int], api_key: str, latency_s: float) -> None:
        super().__init__(addr, api_key, latency_s)
        self.RequestHandlerClass = _FaultHandler
        self.model_latency_s: dict[str, float] = {}
        self.poison_models: frozenset[str] = frozenset()
        self.on_poison: Callable[[ms.Exchange], None] | None = None


class FaultServer(ms.ServerHandle):
    """A running server: the stock script and records, plus latency and the poison fault."""

    def __init__(self, server: _FaultServerImpl) -> None:
        super().__init__(server)
        self._impl = server

    def set_latency(self, seconds: float) -> None:
        """Default delay before every unscripted answer."""
        self._impl.latency_s = seconds

    def set_model_latency(self, model: str, seconds: float) -> None:
        """Extra delay for requests to one model (a slow Stage 2 model, say)."""
        self._impl.model_latency_s[model] = seconds

    def on_poison(self, models: set[str], hook: Callable[[ms.Exchange], None]) -> None:
        """Call ``hook`` (on the server's thread) for each request to one of ``models``
        that carries ``POISON_MARKER``, then hold that request unanswered."""
        self._impl.poison_models = frozenset(models)
        self._impl.on_poison = hook

    def calls_per_marker(self, node_ids: list[str]) -> dict[str, int]:
        """HTTP requests received per review, attributed by the marker in their messages."""
        counts = dict.fromkeys(node_ids, 0)
        markers = {marker(n): n for n in node_ids}
        for exchange in self.requests:
            text = json.dumps((exchange.body or {}).get("messages"))
            for mark, node in markers.items():
                if mark in text:
                    counts[node] += 1
        return counts


@contextmanager
def running_fault_server(
    latency_s: float = 0.0, *, stage2_latency_s: float | None = None
) -> Iterator[FaultServer]:
    """Serve in a background thread, like ``messages_server.running_server``.

    ``stage2_latency_s`` slows the Stage 2 model alone (kills and stops land mid-call).
    """
    server = _FaultServerImpl(("127.0.0.1", 0), ms.DEFAULT_API_KEY, latency_s)
    thread = threading.Thread(
        target=server.serve_forever, args=(0.05,), name="fault-server", daemon=True
    )
    thread.start()
    try:
        handle = FaultServer(server)
        if stage2_latency_s is not None:
            handle.set_model_latency(Settings().stage2_model, stage2_latency_s)
        yield handle
    finally:
        server.stop()
        thread.join()
