"""A Stage 1 worker on the gevent pool holds many model calls open at once.

The real worker command (``--pool gevent``, so Celery monkey-patches at start) and the
real SDK over httpx against the local Messages API, which counts the requests waiting
for their answer at the same moment: were the SDK's sockets not cooperative, one call
would block the process and that count would stay at 1.
"""

from __future__ import annotations

from typing import cast

import pytest
import redis

from bench import common
from bench.stage1_io import judged_by_stage1, review_objs
from tests.infrastructure import require_redis_server, wait_until
from workers.client import ReviewClient
from workers.fleet.queues import Queue
from workers.results.stream import read_all
from workers.testing.messages_api.server import running_server

pytestmark = pytest.mark.integration

CALLS = 16


def test_a_gevent_stage1_worker_keeps_its_model_calls_in_flight_together() -> None:
    require_redis_server()
    with (
        running_server(latency_s=0.5) as server,
        common.private_redis() as redis_server,
    ):
        env = common.fleet_env(
            common.unique("green"),
            WINDAGS_JUDGE_BACKEND="anthropic",
            WINDAGS_ANTHROPIC_API_KEY=server.api_key,
            WINDAGS_ANTHROPIC_BASE_URL=server.base_url,
            WINDAGS_JUDGE_TIMEOUT_S="10",
        )
        settings = common.settings_for(redis_server.url, env)
        with common.running_fleet(redis_server.url, env, {Queue.STAGE1: CALLS}) as fleet:
            command = cast(list[str], fleet.workers[Queue.STAGE1].args)
            assert command[command.index("--pool") + 1] == "gevent"
            client, db = ReviewClient(settings), redis.Redis.from_url(redis_server.url)
            try:
                dag = common.unique("green")
                client.submit_many(review_objs(dag, CALLS))
                stream = settings.keys.results(dag)
                assert wait_until(lambda: db.xlen(stream) >= CALLS, timeout_s=60)
                results = [entry.payload for entry in read_all(db, stream)]
            finally:
                client.close()
                db.close()
    assert all(judged_by_stage1(r) for r in results)
    assert server.max_in_flight >= CALLS // 2, server.max_in_flight
