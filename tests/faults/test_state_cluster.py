"""State on a local 3-primary Redis Cluster, the broker on one private redis-server.

The demo DAG end to end (results, ledger, attempts, registered shape and the human gate's
queue and verdict on the cluster), and the exactly-once fault run: workers SIGKILLed mid-run
while results, dedup keys, claims and try counters live on the cluster; every review on
its stream once, none lost. Nothing of the state lands on the broker's Redis.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.console_script import run
from tests.faults.support import (
    CHURN_CONCURRENCY,
    FaultServer,
    count_stream,
    fresh_dag,
    mixed,
    record,
    running_fleet,
    wait_quiet,
)
from tests.infrastructure import wait_until
from tests.redis_cluster import LocalCluster, local_cluster
from workers.connections import redis_client
from workers.fleet.queues import Queue
from workers.local.redis_server import PrivateRedis
from workers.results.stream import read_all_kinds
from workers.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PREFIX = "windags-demo"
VERDICT = re.compile(
    rf"WINDAGS_KEY_PREFIX={PREFIX} windags-eval verdict (\S+) (\S+) (\d+) --accept"
)
REVIEWS = 150
KILL_ROUNDS = 2
SEED = 20261204


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    """Three primaries, every slot assigned; the three processes reaped after."""
    with local_cluster() as running:
        yield running


def _state_keys(broker_url: str, pattern: str) -> list[bytes]:
    client = redis.Redis.from_url(broker_url)
    try:
        return list(client.scan_iter(match=pattern, count=1000))
    finally:
        client.close()


def test_the_demo_runs_with_its_state_on_a_cluster(
    cluster: LocalCluster, own_redis: PrivateRedis, tmp_path: Path
) -> None:
    env = {
        "WINDAGS_REDIS_URL": own_redis.url,
        "WINDAGS_STATE_REDIS_URL": cluster.url,
        "TMPDIR": str(tmp_path),
    }
    done = run("demo", "--timeout-s", "150", timeout_s=300, **env)
    assert done.returncode == 0, done.stdout + done.stderr
    found = VERDICT.search(done.stdout)
    assert found, done.stdout
    dag, node, attempt = found.groups()
    decided = run(
        "verdict", dag, node, attempt, "--accept", timeout_s=90, WINDAGS_KEY_PREFIX=PREFIX, **env
    )
    assert decided.returncode == 0, decided.stderr
    assert '"decision": "accept"' in decided.stdout
    again = run(
        "verdict", dag, node, attempt, "--reject", timeout_s=90, WINDAGS_KEY_PREFIX=PREFIX, **env
    )
    assert again.returncode == 1 and "already decided" in again.stderr, again.stderr
    settings = Settings(redis_url=own_redis.url, state_redis_url=cluster.url, key_prefix=PREFIX)
    state = redis_client(settings, max_connections=2)
    try:
        keys = settings.keys
        entries = read_all_kinds(state, keys.results(dag))
        assert len(entries) == 14 + 2  # the 14 reviews, then the verdict and its decision
        assert float(state.get(keys.cost(dag)) or 0) >= 0.0
        assert state.exists(keys.dag(dag)) == 1
        assert state.hlen(keys.attempts(dag, node)) == 1
        assert state.exists(keys.human_decided(f"{dag}:{node}:{attempt}")) == 1
        assert f"{dag}:{node}:{attempt}".encode() not in state.zrange(keys.human_pending, 0, -1)
    finally:
        state.close()
    assert _state_keys(own_redis.url, f"{PREFIX}:results:*") == []


@pytest.mark.timeout(300)
def test_sigkilled_workers_lose_and_duplicate_nothing_with_state_on_a_cluster(
    cluster: LocalCluster, slow_server: FaultServer, own_redis: PrivateRedis
) -> None:
    rng = random.Random(SEED)
    dag = fresh_dag("wc")
    nodes = [f"n{i:04d}" for i in range(REVIEWS)]
    extra = {"WINDAGS_STATE_REDIS_URL": cluster.url}
    with running_fleet(
        own_redis.url,
        "wc",
        server=slow_server,
        extra=extra,
        concurrency=CHURN_CONCURRENCY,
        pool="threads",
    ) as run_:
        settings = run_.settings
        assert settings.keys.tagged
        state = redis_client(settings, max_connections=4)
        try:
            keys = run_.client.submit_many(mixed(dag, nodes))
            kills = 0
            for _ in range(KILL_ROUNDS):
                for victim in rng.sample([Queue.STAGE1, Queue.STAGE2], 2):
                    time.sleep(rng.uniform(0.5, 2.0))
                    run_.fleet.kill_worker(victim)
                    kills += 1
                    time.sleep(rng.uniform(0.2, 1.0))
                    run_.fleet.restart_worker(victim)
            run_.fleet.wait_ready(timeout_s=90)
            finished = wait_until(
                lambda: not count_stream(state, settings, dag).lost(keys),
                timeout_s=150,
                every_s=1.0,
            )
            wait_quiet(run_.db, settings)  # redeliveries of finished work land before this
            counted = count_stream(state, settings, dag)
        finally:
            state.close()
        on_broker = _state_keys(own_redis.url, f"{settings.key_prefix}:results:*")
    lost, duplicated = counted.lost(keys), counted.duplicated()
    record(
        "worker_death_state_cluster",
        {
            "seed": SEED,
            "submissions": len(keys),
            "kills": kills,
            "lost": len(lost),
            "duplicated": len(duplicated),
            "errors": len(counted.errors),
        },
    )
    assert finished, f"{len(lost)} reviews never reached their stream"
    assert lost == [] and duplicated == {}, (lost[:5], duplicated)
    assert counted.errors == {}
    assert on_broker == []
