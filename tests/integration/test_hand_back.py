"""A live consumer whose Redis restarts hands back what it held as soon as Redis answers.

kombu's consumer hands its deliveries back as its channel closes; with Redis down that
failed, and the records waited in ``unacked`` for the visibility timeout (900 s here, as
in production). ``workers/fleet/recovery.py`` keeps them and hands them back when Redis
answers, marked as replays; the old channel's late acks no longer touch Redis.
"""

from __future__ import annotations

import json
import pickle
import uuid
from collections.abc import Iterator
from typing import Any, cast

import pytest
import redis
from billiard.einfo import ExceptionInfo
from celery.exceptions import Reject
from kombu import connection as kombu_connection
from kombu import entity as kombu_entity

from tests.infrastructure import require_redis_server, wait_until
from workers.fleet import recovery, tasks
from workers.fleet.app import celery_config, create_app
from workers.fleet.outage import Interrupted, InterruptibleRequest
from workers.fleet.queues import TaskName
from workers.fleet.replay import REPLAY_HEADER, ReplayOf
from workers.fleet.transport.redis_transport import Transport
from workers.local.redis_server import PrivateRedis
from workers.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.slow]

#: kombu is untyped: its connection, queue and message, as such.
Connection: Any = kombu_connection.Connection
KombuQueue: Any = kombu_entity.Queue
Message = Any

QUEUE = "stage1"
HELD = 3
#: Far below the visibility timeout: what the hand-back is waited for.
WAIT_S = 60.0


@pytest.fixture
def server() -> Iterator[PrivateRedis]:
    require_redis_server()
    started = PrivateRedis(appendonly=True).start()
    try:
        yield started
    finally:
        started.close()


def _settings(server: PrivateRedis) -> Settings:
    return Settings(
        redis_url=server.url, key_prefix=f"hb-{uuid.uuid4().hex[:6]}", visibility_timeout_s=900
    )


def _connection(settings: Settings) -> Any:
    # The fleet's options (prefix, reserved sets, visibility), plain kombu messages.
    fleet = celery_config(settings)["broker_transport_options"]
    options = {**fleet, "accepted_tasks": [], "task_queues": []}
    return Connection(settings.redis_url, transport=Transport, transport_options=options)


def _publish(settings: Settings, count: int) -> None:
    with _connection(settings) as connection:
        producer = connection.Producer()
        for i in range(count):
            producer.publish({"n": i}, routing_key=QUEUE, declare=[KombuQueue(QUEUE)])


def _take(connection: Any, count: int) -> list[Message]:
    """``count`` deliveries from ``QUEUE``, held (not acked)."""
    held: list[Message] = []
    consumer = connection.Consumer([KombuQueue(QUEUE)], callbacks=[lambda _, m: held.append(m)])
    consumer.qos(prefetch_count=count)
    with consumer:
        while len(held) < count:
            connection.drain_events(timeout=10)
    return held


def _queued(db: redis.Redis, settings: Settings) -> list[dict[str, Any]]:
    raw = cast(list[bytes], db.lrange(settings.keys.queue(QUEUE), 0, -1))
    return [json.loads(item) for item in raw]


def test_what_a_consumer_held_when_redis_died_is_handed_back_when_it_answers(
    server: PrivateRedis,
) -> None:
    settings = _settings(server)
    keys = settings.keys
    _publish(settings, HELD + 1)
    connection = _connection(settings)
    held = _take(connection, HELD)
    # And a take whose reply the kill cut off: recorded in unacked, held by nobody.
    with _connection(settings) as cut_off:
        [[recorded, _, _]] = cut_off.default_channel._take(QUEUE, 1)
        assert recorded == 1
    db = redis.Redis.from_url(server.url)
    try:
        assert db.hlen(keys.unacked) == HELD + 1
        assert db.zcard(keys.reserved(QUEUE)) == HELD + 1

        server.stop(kill=True)
        connection.release()  # the consumer's channel closes with Redis away
        assert recovery.RESTORER.count() >= HELD
        server.start()  # same port, same AOF: the records are still there

        back = wait_until(lambda: len(_queued(db, settings)) == HELD + 1, WAIT_S, 0.1)
        assert back, f"{db.hlen(keys.unacked)} still in unacked, 900 s before the timeout"
        assert db.hlen(keys.unacked) == 0
        assert db.zcard(keys.reserved(QUEUE)) == 0, "KEDA would count them in flight"
        replays = [m["headers"].get(REPLAY_HEADER) for m in _queued(db, settings)]
        assert replays == [f"{ReplayOf.FIRST}:0"] * (HELD + 1)

        # Taken again (the same delivery tags), the old deliveries' late acks are dropped:
        # they would delete the records of the new ones.
        again = _connection(settings)
        try:
            renewed = _take(again, HELD + 1)
            assert db.hlen(keys.unacked) == HELD + 1
            for message in held:
                message.ack()
            assert db.hlen(keys.unacked) == HELD + 1
            for message in renewed:
                message.ack()
            assert db.hlen(keys.unacked) == 0
            assert db.zcard(keys.reserved(QUEUE)) == 0
        finally:
            again.release()
    finally:
        db.close()


def test_a_hand_back_while_redis_answers_is_immediate_and_a_replay(
    server: PrivateRedis,
) -> None:
    settings = _settings(server)
    _publish(settings, 1)
    connection = _connection(settings)
    [message] = _take(connection, 1)
    db = redis.Redis.from_url(server.url)
    try:
        connection.release()  # a warm shutdown: Redis answers

        [queued] = _queued(db, settings)
        assert queued["headers"][REPLAY_HEADER] == f"{ReplayOf.FIRST}:0"
        assert queued["properties"]["delivery_tag"] == message.delivery_tag
        assert db.hlen(settings.keys.unacked) == 0
    finally:
        db.close()


@pytest.mark.parametrize(
    ("raised", "replay"),
    [
        (Interrupted(redis.ConnectionError("Redis went away")), f"{ReplayOf.FIRST}:0"),
        (Reject("a requeue of the task's own", requeue=True), None),
    ],
)
def test_a_try_an_outage_interrupted_goes_back_as_a_replay_of_itself(
    server: PrivateRedis, raised: Reject, replay: str | None
) -> None:
    """Where the worker's connection lived on (a state outage, a task quicker than the
    consumer): the task's requeue marks the replay (``workers/fleet/outage.py``)."""
    settings = _settings(server)
    app = create_app(settings)
    app.send_task(TaskName.STAGE1.value, args=["{}"])
    connection = _connection(settings)
    db = redis.Redis.from_url(server.url)
    try:
        [message] = _take(connection, 1)
        task = app.tasks[tasks.stage1.name]
        request = InterruptibleRequest(
            message, app=app, task=task, on_reject=message.reject_log_error
        )
        # As a prefork child hands it to its parent.
        raised = pickle.loads(pickle.dumps(raised))
        try:
            raise raised
        except Reject:
            request.on_failure(ExceptionInfo())

        [queued] = _queued(db, settings)
        assert queued["headers"].get(REPLAY_HEADER) == replay
        assert queued["headers"]["redelivered"] is True
        assert db.hlen(settings.keys.unacked) == 0
        assert db.zcard(settings.keys.reserved(QUEUE)) == 0
    finally:
        connection.release()
        db.close()
        app.close()
