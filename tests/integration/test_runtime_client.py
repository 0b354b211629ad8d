"""The runtime's side against a real fleet: awaiting verdicts, and a LangGraph DAG gated by it.

One fleet for the module. The LangGraph test runs ``examples/langgraph_gate.py`` as the
runtime, in its own process, kills it while it waits and resumes it from its SQLite
checkpoints; a person's verdict goes in through ``windags-eval verdict``.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import redis

from bench.common import review_obj, stop_process
from bench.redis_cost import connections_to
from schemas.request import review_key
from schemas.result import ReviewResult
from tests.infrastructure import wait_until
from tests.integration.support import fresh_dag
from workers.client import AsyncReviewClient, ReviewClient
from workers.errors import ReviewTimeoutError
from workers.fleet.queues import Queue
from workers.local.launcher import LocalFleet
from workers.results.stream import read_all_kinds
from workers.settings import Settings

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
CONCURRENT = 300


class PeakConnections:
    """The most TCP connections this process held to Redis, sampled while it runs."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.01):
            self.peak = max(self.peak, self.now())

    def now(self) -> int:
        return connections_to(os.getpid(), self.port, descendants=False)

    def __enter__(self) -> PeakConnections:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self.peak = max(self.peak, self.now())


async def burst(settings: Settings, stage1_queue: str, db: redis.Redis) -> dict[str, Any]:
    """300 awaits from one loop; then a tiny deadline on a review queued behind them."""
    dags = [fresh_dag() for _ in range(10)]
    asked = [(dags[i % len(dags)], f"node-{i}") for i in range(CONCURRENT)]
    async with AsyncReviewClient(settings) as client:
        reviews = asyncio.gather(
            *(client.review(review_obj(dag, node), timeout=120) for dag, node in asked)
        )
        # Behind a queue of those, the tiny deadline passes before any verdict can come.
        while db.llen(stage1_queue) < 50 and not reviews.done():
            await asyncio.sleep(0.01)
        late = review_obj(dags[0], "late")
        with pytest.raises(ReviewTimeoutError) as timed_out:
            await client.review(late, timeout=0.001)
        results = await reviews
        # Once the late review is published, awaiting it again answers from the stream and
        # sends nothing (one still unpublished is sent again: a lost message is recovered).
        published = settings.keys.published(review_key(dags[0], "late", 1), dags[0])
        for _ in range(1200):  # a minute, to outlast a loaded machine
            if db.exists(published):
                break
            await asyncio.sleep(0.05)
        again = await client.review(late, timeout=120)
        return {
            "asked": asked,
            "results": results,
            "timed_out": timed_out.value,
            "again": again,
            "sent": client.sent,
        }


def test_300_concurrent_awaits_each_get_their_own_verdict_on_few_connections(
    fleet: LocalFleet, settings: Settings, redis_db: redis.Redis, redis_url: str
) -> None:
    port = urlsplit(redis_url).port or 6379
    stage1 = settings.keys.queue(Queue.STAGE1.value)
    with PeakConnections(port) as connections:
        before = connections.now()
        out = asyncio.run(burst(settings, stage1, redis_db))
    got = [(r.dag_id, r.node_id, r.attempt) for r in out["results"]]
    assert got == [(dag, node, 1) for dag, node in out["asked"]]
    assert all(isinstance(r, ReviewResult) for r in out["results"])
    assert connections.peak - before < 40, (before, connections.peak)
    assert out["timed_out"].review_keys == (f"{out['asked'][0][0]}:late:1",)
    assert out["again"].node_id == "late" and out["sent"] == CONCURRENT + 1
    # One entry per review on the streams: nothing answered twice, nothing lost.
    dags = {dag for dag, _ in out["asked"]}
    keys = Counter(
        e.fields["review_key"]
        for dag in dags
        for e in read_all_kinds(redis_db, settings.keys.results(dag))
    )
    assert len(keys) == CONCURRENT + 1 and set(keys.values()) == {1}


def test_the_sync_client_reviews_once_and_answers_a_repeat_from_the_stream(
    fleet: LocalFleet, settings: Settings, redis_db: redis.Redis
) -> None:
    dag = fresh_dag()
    client = ReviewClient(settings)
    try:
        first = client.review(review_obj(dag, "sync"), timeout=60)
        again = client.review(review_obj(dag, "sync"), timeout=0.001)  # already there
    finally:
        client.close()
    assert first == again and first.node_id == "sync"
    assert len(read_all_kinds(redis_db, settings.keys.results(dag))) == 1


@pytest.fixture
def runtime_env(fleet_env: dict[str, str], redis_url: str) -> dict[str, str]:
    return {**os.environ, **fleet_env, "WINDAGS_REDIS_URL": redis_url, "PYTHONPATH": str(ROOT)}


def example(thread: str, checkpoints: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    command = [
        sys.executable,
        str(ROOT / "examples" / "langgraph_gate.py"),
        *("--thread", thread, "--checkpoints", str(checkpoints), "--person-timeout", "90"),
    ]
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        stop_process(process, grace_s=10)
        if process.stdout is not None:
            process.stdout.close()


def test_a_langgraph_dag_iterates_plateaus_asks_a_person_and_survives_a_kill(
    fleet: LocalFleet,
    settings: Settings,
    redis_db: redis.Redis,
    runtime_env: dict[str, str],
    processes: list[subprocess.Popen[str]],
    tmp_path: Path,
) -> None:
    thread, checkpoints = fresh_dag(), tmp_path / "checkpoints.sqlite"
    stream = settings.keys.results(thread)
    # Stage 1 held: the runtime's first review stays in flight; the runtime dies waiting.
    fleet.stop_worker(Queue.STAGE1)
    try:
        first = example(thread, checkpoints, runtime_env)
        processes.append(first)
        stage1 = settings.keys.queue(Queue.STAGE1.value)
        assert wait_until(lambda: redis_db.llen(stage1) >= 1, timeout_s=90)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    finally:
        fleet.start_worker(Queue.STAGE1)
        fleet.wait_ready(timeout_s=90, queues=(Queue.STAGE1,))
    assert wait_until(lambda: redis_db.xlen(stream) >= 1, timeout_s=60)

    second = example(thread, checkpoints, runtime_env)  # the same thread: from its checkpoint
    processes.append(second)
    assert second.stdout is not None
    lines = [second.stdout.readline() for _ in range(2)]
    assert lines[0].startswith(f"resuming {thread} at plan__review"), lines
    assert lines[1].startswith("publish waits for a person"), lines
    cli = [sys.executable, "-m", "workers.local.cli", "verdict", thread, "publish", "1"]
    verdict = subprocess.run(
        [*cli, "--accept", "--reviewer", "ops-oncall"],
        cwd=ROOT,
        env=runtime_env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert verdict.returncode == 0, verdict.stderr
    rest, _ = second.communicate(timeout=120)
    assert second.returncode == 0, [*lines, rest]
    assert "this run sent 4 review(s); 1 already had a verdict" in rest, rest

    entries = read_all_kinds(redis_db, stream)
    kinds = Counter((e.fields["review_key"], e.fields["kind"]) for e in entries)
    expected_results = [f"{thread}:{n}:{a}" for n, a in _attempts()]
    assert sorted(k for k, kind in kinds if kind == "result") == sorted(expected_results)
    assert set(kinds.values()) == {1}  # no attempt reviewed twice, the killed one included
    person = [kind for key, kind in kinds if key == f"{thread}:publish:1"]
    assert person == ["result", "human_verdict", "decision"]
    decisions = {
        (p.node_id, p.attempt): p.decision.value
        for p in (e.payload for e in entries)
        if isinstance(p, ReviewResult)
    }
    assert decisions == {
        ("plan", 1): "iterate",
        ("plan", 2): "accept",
        ("draft", 1): "iterate",
        ("draft", 2): "accept",
        ("publish", 1): "escalate_human",
    }


def _attempts() -> list[tuple[str, int]]:
    return [("plan", 1), ("plan", 2), ("draft", 1), ("draft", 2), ("publish", 1)]
