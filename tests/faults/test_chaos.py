"""Chaos, as a stranger would run it: raw bytes straight onto every queue list, good reviews
in between, workers killed with SIGKILL and Redis killed and restarted in the same run.

Counted at the end, from Redis alone: every good review on its stream exactly once,
every malformed message in the quarantine exactly once with a reason, every bad request
answered by one error entry, nothing silently dropped, and every worker alive (restarted
by the local fleet's supervisor when it died, and counted). A second test restarts
Redis three times under load.

Figures go to ``bench/results/chaos.json`` only when ``WINDAGS_WRITE_FIGURES=1``.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import redis

from schemas.result import ReviewError, ReviewResult
from tests.faults.support import record, unfiled, wait_quiet
from tests.infrastructure import FAST_RECOVERY_LIMITS, require_redis_server, wait_until
from workers.client import ReviewClient
from workers.errors import BrokerUnavailableError
from workers.fleet.queues import Queue, TaskName
from workers.fleet.transport.quarantine import QuarantineStream
from workers.local.launcher import LocalFleet
from workers.local.redis_server import PrivateRedis
from workers.local.supervisor import Restart
from workers.results.stream import read_all
from workers.settings import Settings
from workers.testing.raw_messages import REPAIRED_HEADERS, encode, envelope, malformed, repaired

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "workers" / "samples"
FIGURES = ROOT / "bench" / "results" / "chaos.json"
#: Accept, Floor failure, Stage 2 escalation: every queue carries work.
MIX = ("good_python", "floor_failure_python", "final_deliverable")
#: Limits that nest and recover in seconds: a killed worker's messages return after 13 s.
ENV = {
    "WINDAGS_JUDGE_BACKEND": "builtin",
    **FAST_RECOVERY_LIMITS,
    "WINDAGS_MAX_REQUEST_BYTES": "100000",
    "WINDAGS_REDIS_SOCKET_TIMEOUT_S": "3",
    "WINDAGS_REDIS_CONNECT_TIMEOUT_S": "2",
}
HUGE_BYTES = 1_000_000  # above the message limit: 8 x 100,000 + 64 KiB
GOOD_REVIEWS = 120
BURST = 24


def _sample(name: str, dag: str, node: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((SAMPLES / f"{name}.json").read_text())
    return {**body, "dag_id": dag, "node_id": node}


@dataclass
class Chaos:
    """A fleet on its own AOF Redis, and what the run did to it."""

    server: PrivateRedis
    fleet: LocalFleet
    settings: Settings
    restarts: list[Restart] = field(default_factory=list)
    kills: list[str] = field(default_factory=list)
    #: Messages held unacked (by any worker) as each kill landed.
    held_at_kill: list[int] = field(default_factory=list)
    redis_restarts: int = 0
    #: Set while Redis is down on purpose: producers wait instead of guessing.
    redis_down: threading.Event = field(default_factory=threading.Event)

    def db(self) -> redis.Redis:
        return redis.Redis.from_url(self.server.url, socket_timeout=5, socket_connect_timeout=2)

    def kill9(self, queue: Queue) -> None:
        """SIGKILL a worker behind the fleet's back: the supervisor must notice."""
        self.held_at_kill.append(int(self.db().hlen(self.settings.keys.unacked)))
        process = self.fleet.workers[queue]
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
        self.kills.append(queue.value)

    def restart_redis(self, down_s: float = 2.0) -> None:
        self.redis_down.set()
        try:
            self.server.restart(kill=True, down_s=down_s)
        finally:
            self.redis_down.clear()
        self.redis_restarts += 1

    def results(self, dag: str) -> tuple[Counter[str], dict[str, ReviewError]]:
        reviews: Counter[str] = Counter()
        errors: dict[str, ReviewError] = {}
        for entry in read_all(self.db(), self.settings.keys.results(dag)):
            payload = entry.payload
            if isinstance(payload, ReviewResult):
                reviews[entry.fields["review_key"]] += 1
            elif isinstance(payload, ReviewError):
                errors[f"{entry.entry_id}"] = payload
        return reviews, errors


@contextmanager
def _chaos(tag: str) -> Iterator[Chaos]:
    require_redis_server()
    env = {**ENV, "WINDAGS_KEY_PREFIX": f"chaos-{tag}-{uuid.uuid4().hex[:6]}"}
    server = PrivateRedis(appendonly=True).start()
    fleet = LocalFleet(server.url, extra_env=env, start_private_redis=False)
    run = Chaos(server, fleet, Settings.from_environment(env, redis_url=server.url))
    fleet.on_restart = run.restarts.append
    try:
        with fleet:
            fleet.wait_ready(timeout_s=90)
            yield run
    finally:
        server.close()


def _all_alive(run: Chaos) -> bool:
    return all(p.poll() is None for p in run.fleet.workers.values())


def _retrying(run: Chaos, action: Callable[[], object], *, blind: bool = False) -> int:
    """Run ``action`` until it succeeds; the failed tries.

    A raw LPUSH that fails as Redis dies may still have landed: retried, it could count
    twice. So raw pushes wait out the planned outage; reviews (``blind``) do not, as a
    DAG runtime would not: a resubmitted review is published once.
    """
    failures = 0
    while True:
        while run.redis_down.is_set() and not blind:
            time.sleep(0.05)
        try:
            action()
            return failures
        except (BrokerUnavailableError, redis.ConnectionError, redis.TimeoutError):
            failures += 1
            time.sleep(0.2)


def _digest(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


@pytest.mark.timeout(240)
def test_chaos_raw_bytes_on_every_queue_kill_9_and_a_redis_restart(tmp_path: Path) -> None:
    dag = f"chaos-{uuid.uuid4().hex[:8]}"
    marker = tmp_path / "unpickled"
    task = TaskName.STAGE1.value
    bad = [
        (queue, message)
        for queue in Queue
        for message in malformed(task, queue.value, marker=marker, huge_bytes=HUGE_BYTES)
    ]
    good = [_sample(MIX[i % len(MIX)], dag, f"g{i:03d}") for i in range(GOOD_REVIEWS)]
    fixed = [
        repaired(kind, task, json.dumps(_sample("good_python", dag, kind)), kind)
        for kind in REPAIRED_HEADERS
    ]
    invalid = _sample("good_python", dag, "invalid-field")
    invalid["skill"] = {**invalid["skill"], "success_rate": 1.5}
    deep = '{"dag_id": "' + dag + '", "node_id": "deep", "skill": ' + "[" * 3000 + "]" * 3000 + "}"
    refused = [encode(envelope(task, [json.dumps(invalid)])), encode(envelope(task, [deep]))]
    # Most good reviews trickle in with the rest; a burst lands just before each kill, so
    # that the killed worker holds reviews it has not finished (they come back after the
    # visibility timeout).
    bursts = [good[:BURST], good[BURST : 2 * BURST]]
    plan: list[tuple[str, Any]] = (
        [("good", body) for body in good[2 * BURST :]]
        + [("raw", (queue.value, m.data)) for queue, m in bad]
        + [("raw", (Queue.STAGE1.value, m.data)) for m in fixed]
        + [("raw", (Queue.STAGE1.value, data)) for data in refused]
    )
    random.Random(13).shuffle(plan)
    with _chaos("a") as run:
        client = ReviewClient(run.settings)
        db, keys = run.db(), run.settings.keys
        producer_retries = Counter[str]()

        def produce() -> None:
            for what, item in plan:
                if what == "good":
                    tries = _retrying(run, partial(client.submit, item), blind=True)
                else:
                    queue_name, data = item
                    tries = _retrying(run, partial(db.lpush, keys.queue(queue_name), data))
                producer_retries[what] += tries
                time.sleep(0.06)  # ~20 s of load, across the faults below

        producer = threading.Thread(target=produce, name="producer")
        started = time.monotonic()
        producer.start()
        time.sleep(4)
        client.submit_many(bursts[0])
        time.sleep(0.05)
        run.kill9(Queue.STAGE1)
        time.sleep(4)
        run.restart_redis()
        time.sleep(4)
        client.submit_many(bursts[1])
        time.sleep(0.3)  # Stage 1 and the router pass the burst on to Stage 2
        run.kill9(Queue.STAGE2)
        producer.join(timeout=120)
        produced_s = time.monotonic() - started

        expected = {f"{dag}:{body['node_id']}:1" for body in good} | {
            f"{dag}:{m.node_id}:1" for m in fixed
        }
        sent_bad = Counter((queue.value, _digest(m.data)) for queue, m in bad)
        quarantine = QuarantineStream(run.settings.keys.quarantine, run.settings.stream_retention_s)

        early = Counter[str]()  # polls where counting said settled and identity did not

        def settled() -> bool:
            """Every good review on its stream, every raw message filed, by identity."""
            reviews, errors = run.results(dag)
            entries = quarantine.read(db)
            rest = (
                expected <= set(reviews)
                and "invalid-field" in {e.node_id for e in errors.values()}
                and db.xlen(run.settings.keys.unroutable) >= 1
            )
            missing = unfiled(sent_bad, Counter((e.queue, e.sha1) for e in entries))
            early["polls"] += int(rest and len(entries) >= len(bad) and bool(missing))
            return rest and not missing

        finished = wait_until(settled, timeout_s=90, every_s=0.5)
        quiet = wait_quiet(db, run.settings)  # a late duplicate would land before this
        # The supervisor starts each killed worker again, after its backoff.
        wait_until(lambda: len(run.restarts) >= len(run.kills) and _all_alive(run), 60)
        took_s = time.monotonic() - started
        reviews, errors = run.results(dag)
        entries = quarantine.read(db)
        filed = Counter((e.queue, e.sha1) for e in entries)
        alive = {q.value: p.poll() is None for q, p in run.fleet.workers.items()}
        unroutable = read_all(db, run.settings.keys.unroutable)
        client.close()
    per_kind: dict[str, dict[str, int]] = {}
    for queue, message in bad:
        row = per_kind.setdefault(message.kind, {"sent": 0, "quarantined": 0, "twice": 0})
        row["sent"] += 1
        row["quarantined"] += min(1, filed[queue.value, _digest(message.data)])
        row["twice"] += int(filed[queue.value, _digest(message.data)] > 1)
    lost = sorted(k for k in expected if reviews[k] == 0)
    duplicated = {k: n for k, n in reviews.items() if n > 1}
    silent = [f"{q}:{d[:8]}" for q, d in unfiled(sent_bad, filed)]
    stray = [e.reason for e in entries if (e.queue, e.sha1) not in sent_bad]
    error_nodes = Counter(e.node_id for e in errors.values())
    figures = {
        "good_reviews": len(good),
        "repaired_reviews": len(fixed),
        "malformed_sent": len(bad),
        "malformed_kinds": len(per_kind),
        "queues": len(Queue),
        "quarantined": len(entries),
        "quarantined_twice": sum(r["twice"] for r in per_kind.values()),
        "silent_drops": len(silent),
        "reviewed_once": sum(1 for k in expected if reviews[k] == 1),
        "lost": len(lost),
        "duplicated": len(duplicated),
        "bad_requests_sent": len(refused),
        "error_entries": len(errors) + len(unroutable),
        "worker_kills": len(run.kills),
        "unacked_at_each_kill": run.held_at_kill,
        "redis_restarts": run.redis_restarts,
        "worker_exits": len(run.restarts),
        "worker_restarts": dict(Counter(r.queue.value for r in run.restarts)),
        "workers_alive_at_end": sum(alive.values()),
        "producer_retries": dict(producer_retries),
        "produce_s": round(produced_s, 1),
        "total_s": round(took_s, 1),
        "per_kind": per_kind,
        "settled_early_by_count_polls": early["polls"],
        "quiet_at_end": quiet,
    }
    record("chaos", figures, path=FIGURES)
    assert finished, f"lost {lost[:5]}; silent {silent[:5]}"
    assert lost == [] and duplicated == {}
    assert silent == [] and stray == []
    assert all(r["quarantined"] == r["sent"] and r["twice"] == 0 for r in per_kind.values())
    assert all(e.reason for e in entries)
    assert error_nodes == Counter({"invalid-field": 1}), error_nodes
    assert len(unroutable) == 1  # the deep request names no DAG it can read
    assert not marker.exists(), "a pickle was deserialized"
    assert all(alive.values()), alive
    # The two kills were the only exits: Redis restarting under them killed no worker.
    assert sorted(r.queue.value for r in run.restarts) == sorted(run.kills)


@pytest.mark.timeout(240)
def test_a_local_fleet_survives_three_redis_restarts_under_load() -> None:
    dag = f"restarts-{uuid.uuid4().hex[:8]}"
    bodies = [_sample(MIX[i % len(MIX)], dag, f"r{i:03d}") for i in range(150)]
    with _chaos("b") as run:
        client = ReviewClient(run.settings)
        retries = Counter[str]()

        def produce() -> None:
            for body in bodies:
                retries["submit"] += _retrying(run, partial(client.submit, body), blind=True)
                time.sleep(0.08)

        producer = threading.Thread(target=produce, name="producer")
        started = time.monotonic()
        producer.start()
        for _ in range(3):
            time.sleep(3.5)
            run.restart_redis(down_s=1.0)
        producer.join(timeout=120)
        keys = {f"{dag}:{body['node_id']}:1" for body in bodies}
        finished = wait_until(lambda: keys <= set(run.results(dag)[0]), timeout_s=90, every_s=0.5)
        quiet = wait_quiet(run.db(), run.settings)  # a late duplicate would land before this
        reviews, errors = run.results(dag)
        alive = {q.value: p.poll() is None for q, p in run.fleet.workers.items()}
        took_s = time.monotonic() - started
        client.close()
    lost = sorted(k for k in keys if reviews[k] == 0)
    duplicated = {k: n for k, n in reviews.items() if n > 1}
    record(
        "three_redis_restarts",
        {
            "reviews": len(bodies),
            "redis_restarts": run.redis_restarts,
            "reviewed_once": sum(1 for k in keys if reviews[k] == 1),
            "lost": len(lost),
            "duplicated": len(duplicated),
            "error_entries": len(errors),
            "worker_exits": len(run.restarts),
            "workers_alive_at_end": sum(alive.values()),
            "submit_retries": retries["submit"],
            "total_s": round(took_s, 1),
            "quiet_at_end": quiet,
        },
        path=FIGURES,
    )
    assert finished, lost[:5]
    assert lost == [] and duplicated == {} and errors == {}
    assert run.redis_restarts == 3
    assert all(alive.values()), alive
    assert run.restarts == [], [r.describe() for r in run.restarts]
