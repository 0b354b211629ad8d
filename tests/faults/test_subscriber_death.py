"""A subscriber killed holding pending entries: the group still handles each entry once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from collections import Counter

import pytest
import redis

from schemas.result import ErrorCode, ReviewError
from tests.faults.support import record
from tests.infrastructure import wait_until
from workers.keys import Keys
from workers.local.tether import tethered
from workers.results.stream import ResultStream
from workers.results.subscriber import Subscription

pytestmark = pytest.mark.integration

ENTRIES = 300
HANDLED_BEFORE_DEATH = 40
CLAIM_IDLE_MS = 500

#: A consumer that handles (records + acks atomically) some entries, then reads a batch
#: and hangs holding it until SIGKILL.
DOOMED = textwrap.dedent(
    """
    import sys, time, redis
    from workers.results.subscriber import Subscription
    url, stream, handled, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    db = redis.Redis.from_url(url)
    sub = Subscription(db, stream, group="runtime", consumer="doomed", batch=n)
    done = 0
    for d in sub.poll():
        pipe = db.pipeline(transaction=True)
        pipe.rpush(handled, d.review_key)
        pipe.xack(stream, "runtime", d.entry_id)
        pipe.execute()
        done += 1
    sub._batch = 60
    held = sub.poll()
    print(done, len(held), flush=True)
    time.sleep(3600)
    """
)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _publish(stream: ResultStream, dag: str, count: int) -> list[str]:
    keys = []
    for i in range(count):
        node = f"n{i:04d}"
        error = ReviewError(
            dag_id=dag, node_id=node, attempt=1, code=ErrorCode.INTERNAL, message="filler"
        )
        stream.publish_error(error, review_key=f"{dag}:{node}:1")
        keys.append(f"{dag}:{node}:1")
    return keys


def _handle_all(
    db: redis.Redis, subs: list[Subscription], handled: str, total: int, timeout_s: float
) -> int:
    """Poll the live consumers round-robin until the group handled ``total`` entries."""
    polls = 0
    deadline = time.monotonic() + timeout_s
    while db.llen(handled) < total and time.monotonic() < deadline:
        for sub in subs:
            polls += 1
            for delivery in sub.poll():
                pipe = db.pipeline(transaction=True)
                pipe.rpush(handled, delivery.review_key)
                pipe.xack(sub.stream, sub.group, delivery.entry_id)
                pipe.execute()
    return polls


@pytest.mark.timeout(60)
def test_a_killed_consumers_pending_entries_are_claimed_and_handled_once(
    faults_redis_url: str, faults_db: redis.Redis
) -> None:
    prefix = f"faults-sub-{uuid.uuid4().hex[:6]}"
    dag = f"dag-{uuid.uuid4().hex[:8]}"
    stream = ResultStream(faults_db, Keys(prefix), retention_s=3600, dedup_ttl_s=3600)
    keys = _publish(stream, dag, ENTRIES)
    stream_key, handled = Keys(prefix).results(dag), f"{prefix}:handled"

    doomed = tethered(  # dies with the test run, if the run is killed before it is
        [
            sys.executable,
            "-c",
            DOOMED,
            faults_redis_url,
            stream_key,
            handled,
            str(HANDLED_BEFORE_DEATH),
        ],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    assert doomed.stdout is not None
    try:
        done, held = (int(x) for x in doomed.stdout.readline().split())
    finally:  # killed once it has read its share, or when the test fails before
        os.killpg(doomed.pid, signal.SIGKILL)
        doomed.wait(timeout=10)
        doomed.stdout.close()
    pending_at_death = int(faults_db.xpending(stream_key, "runtime")["pending"])
    assert (done, held, pending_at_death) == (HANDLED_BEFORE_DEATH, 60, 60)

    started = time.monotonic()
    survivors = [
        Subscription(
            faults_db,
            stream_key,
            group="runtime",
            consumer=f"survivor-{i}",
            claim_idle_ms=CLAIM_IDLE_MS,
            block_ms=100,
        )
        for i in range(2)
    ]
    polls = _handle_all(faults_db, survivors, handled, ENTRIES, timeout_s=30)
    took_s = time.monotonic() - started
    # Give a straggling duplicate delivery the chance to show.
    wait_until(lambda: False, timeout_s=1.0)
    for sub in survivors:
        for delivery in sub.poll():
            faults_db.rpush(handled, delivery.review_key)
            delivery.ack()

    counts = Counter(_text(k) for k in faults_db.lrange(handled, 0, -1))
    lost = [k for k in keys if counts[k] == 0]
    twice = {k: n for k, n in counts.items() if n > 1}
    pending_after = int(faults_db.xpending(stream_key, "runtime")["pending"])
    record(
        "subscriber_death",
        {
            "entries": ENTRIES,
            "handled_before_kill": done,
            "pending_at_kill": pending_at_death,
            "handled_total": sum(counts.values()),
            "lost": len(lost),
            "handled_twice": len(twice),
            "pending_after": pending_after,
            "takeover_s": round(took_s, 2),
            "survivor_polls": polls,
        },
    )
    assert lost == []
    assert twice == {}
    assert pending_after == 0
