"""Whatever bytes sit in a queue list, a worker never dies of them: each malformed message
is quarantined once, raw, with its queue and a reason; valid reviews around them, and
valid reviews with a broken schedule, are reviewed. Real Redis, real worker processes."""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from bench import common
from tests.infrastructure import SHORT_LIMITS, require_redis_server, wait_until
from workers.fleet.queues import Queue, TaskName
from workers.fleet.transport.quarantine import QuarantineStream
from workers.local.launcher import LocalFleet
from workers.local.redis_server import PrivateRedis
from workers.results.stream import read_all
from workers.settings import Settings
from workers.testing.raw_messages import REPAIRED_HEADERS, encode, envelope, malformed, repaired

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
GOOD: dict[str, Any] = json.loads((ROOT / "workers" / "samples" / "good_python.json").read_text())
MAX_REQUEST_BYTES = 100_000
HUGE = 1_000_000  # above the workers' message limit (8 x max_request_bytes + 64 KiB)


class Run:
    def __init__(self, server: PrivateRedis, fleet: LocalFleet, settings: Settings) -> None:
        self.server, self.fleet, self.settings = server, fleet, settings
        self.db = redis.Redis.from_url(server.url)
        self.quarantine = QuarantineStream(settings.keys.quarantine, settings.stream_retention_s)

    def request(self, dag: str, node: str) -> str:
        return json.dumps({**GOOD, "dag_id": dag, "node_id": node})

    def results(self, dag: str) -> Counter[str]:
        entries = read_all(self.db, self.settings.keys.results(dag))
        return Counter(e.fields["review_key"] for e in entries if e.fields["kind"] == "result")


@pytest.fixture(scope="module")
def run() -> Iterator[Run]:
    require_redis_server()
    env = {
        **SHORT_LIMITS,
        "WINDAGS_KEY_PREFIX": f"q-{uuid.uuid4().hex[:6]}",
        "WINDAGS_JUDGE_BACKEND": "builtin",
        "WINDAGS_MAX_REQUEST_BYTES": str(MAX_REQUEST_BYTES),
    }
    with common.private_redis() as server, common.running_fleet(server.url, env) as fleet:
        yield Run(server, fleet, common.settings_for(server.url, env))


def _digest(raw: bytes) -> str:
    return hashlib.sha1(raw).hexdigest()


@pytest.mark.timeout(120)
def test_every_malformed_message_on_every_queue_is_quarantined_once_and_no_worker_dies(
    run: Run, tmp_path: Path
) -> None:
    dag = f"quarantine-{uuid.uuid4().hex[:6]}"
    marker = tmp_path / "unpickled"
    bad = {
        queue: malformed(TaskName.STAGE1.value, queue.value, marker=marker, huge_bytes=HUGE)
        for queue in Queue
    }
    good = [
        repaired(kind, TaskName.STAGE1.value, run.request(dag, kind), kind)
        for kind in REPAIRED_HEADERS
    ]
    plain = encode(envelope(TaskName.STAGE1.value, [run.request(dag, "plain")]))
    before = len(run.quarantine.read(run.db))
    # Good and bad interleaved, straight onto the lists, as another producer would.
    for queue, messages in bad.items():
        for message in messages:
            run.db.lpush(run.settings.keys.queue(queue.value), message.data)
            if queue is Queue.STAGE1 and good:
                run.db.lpush(run.settings.keys.queue(queue.value), good.pop().data)
    for message in good:
        run.db.lpush(run.settings.keys.queue(Queue.STAGE1.value), message.data)
    run.db.lpush(run.settings.keys.queue(Queue.STAGE1.value), plain)
    # By queue and digest: the empty message is the same bytes on every queue.
    sent = {(q.value, _digest(m.data)): m.kind for q, ms in bad.items() for m in ms}
    expected_reviews = {f"{dag}:{kind}:1" for kind in [*REPAIRED_HEADERS, "plain"]}

    def done() -> bool:
        """Every message filed and every review in, by identity (not by counting)."""
        filed = {(e.queue, e.sha1) for e in run.quarantine.read(run.db)[before:]}
        return set(sent) <= filed and expected_reviews <= set(run.results(dag))

    finished = wait_until(done, timeout_s=60, every_s=0.5)
    entries = run.quarantine.read(run.db)[before:]
    per_message = Counter((e.queue, e.sha1) for e in entries)
    missing = sorted(
        f"{q}:{kind}" for (q, digest), kind in sent.items() if not per_message[q, digest]
    )
    stray = [e.reason for e in entries if (e.queue, e.sha1) not in sent]
    results = run.results(dag)
    print(
        f"\n[quarantine] sent {len(sent)} malformed on {len(Queue)} queues: quarantined "
        f"{len(entries)}, missing {len(missing)}, "
        f"twice {sum(n > 1 for n in per_message.values())}; "
        f"reviews {sum(results.values())}/{len(expected_reviews)}"
    )
    assert finished, f"missing {missing[:5]}; reviews {sorted(results)}"
    assert missing == [] and stray == []
    assert all(n == 1 for n in per_message.values())
    for entry in entries:
        assert entry.reason, sent[entry.queue, entry.sha1]
        assert entry.truncated == (entry.size > len(entry.raw))
        assert entry.raw == entry.raw[: entry.size]
    assert {k: n for k, n in results.items() if k in expected_reviews} == dict.fromkeys(
        expected_reviews, 1
    )
    assert not marker.exists(), "a pickle was deserialized"
    assert all(p.poll() is None for p in run.fleet.workers.values())
    assert run.fleet.supervisor is not None and sum(run.fleet.supervisor.restarts.values()) == 0
    assert run.db.hlen(run.settings.keys.unacked) == 0
    run.fleet.wait_ready(timeout_s=20)


@pytest.mark.timeout(120)
def test_records_already_in_unacked_at_a_worker_restart_are_restored_or_quarantined(
    run: Run,
) -> None:
    dag = f"unacked-{uuid.uuid4().hex[:6]}"
    run.fleet.kill_worker(Queue.STAGE1)
    valid = envelope(TaskName.STAGE1.value, [run.request(dag, "held")])
    bad_body = envelope(TaskName.STAGE1.value, ["x"])
    bad_body["body"] = "!!!not base64!!"
    records: dict[str, bytes] = {
        "garbage-record": b"garbage in the unacked hash",
        "no-queue": json.dumps([valid, "", ""]).encode(),
        bad_body["properties"]["delivery_tag"]: json.dumps([bad_body, "", "stage1"]).encode(),
        valid["properties"]["delivery_tag"]: json.dumps([valid, "", "stage1"]).encode(),
    }
    overdue = time.time() - run.settings.visibility_timeout_s - 60
    before = len(run.quarantine.read(run.db))
    for tag, record in records.items():
        run.db.hset(run.settings.keys.unacked, tag, record)
        run.db.zadd(run.settings.keys.unacked_index, {tag: overdue})
    run.fleet.restart_worker(Queue.STAGE1)

    def settled() -> bool:
        """The two records filed by tag, the refused one from its queue, and the review."""
        entries = run.quarantine.read(run.db)[before:]
        filed = {e.tag for e in entries if e.queue == "unacked"}
        refused = [e for e in entries if e.queue == "stage1"]
        return (
            {"garbage-record", "no-queue"} <= filed
            and bool(refused)
            and run.results(dag)[f"{dag}:held:1"] == 1
        )

    assert wait_until(settled, timeout_s=60, every_s=0.5)
    entries = run.quarantine.read(run.db)[before:]
    by_tag = {e.tag: e for e in entries}
    assert by_tag["garbage-record"].queue == "unacked"
    assert by_tag["no-queue"].queue == "unacked"
    assert "no queue" in by_tag["no-queue"].reason
    # The restorable bad message went back to its queue and was refused on the next take.
    rejected = [e for e in entries if e.queue == "stage1"]
    assert len(rejected) == 1 and json.loads(rejected[0].raw)["body"] == "!!!not base64!!"
    assert len(entries) == 3
    assert run.db.hlen(run.settings.keys.unacked) == 0
    assert all(p.poll() is None for p in run.fleet.workers.values())


def test_a_message_celery_refuses_after_delivery_is_still_quarantined() -> None:
    """The fallback behind the channel's checks (Celery's task_unknown/task_rejected)."""
    from kombu import connection as kombu_connection

    from workers.fleet.transport.quarantine import quarantine_refused
    from workers.fleet.transport.redis_transport import Transport

    require_redis_server()
    connect: Callable[..., Any] = kombu_connection.Connection  # untyped
    key = f"q-{uuid.uuid4().hex[:6]}:quarantine"
    with (
        common.private_redis() as server,
        connect(
            server.url, transport=Transport, transport_options={"quarantine_key": key}
        ) as connection,
    ):
        channel = connection.channel()
        payload = envelope("windags.review.gone", ["{}"], queue="stage1")
        message = channel.Message(payload, channel=channel)
        quarantine_refused(message, "unknown task name 'windags.review.gone'")
        [entry] = QuarantineStream(key, 3600).read(redis.Redis.from_url(server.url))
        channel.close()
    assert entry.queue == "stage1"
    assert entry.reason == "Celery refused it: unknown task name 'windags.review.gone'"
    assert json.loads(entry.raw)["headers"]["task"] == "windags.review.gone"
