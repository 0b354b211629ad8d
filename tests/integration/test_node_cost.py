"""What an accepted node costs Redis, and the guarantees the cuts keep (issue 22, item 6).

A first delivery of Stage 1 or the router writes no try count; every later one counts
one more than the counter says, so a review that fails on every delivery is still
dead-lettered after ``max_task_tries``. The router publishes an accepted node, its
attempt record and its bookkeeping mark in one script: one round trip.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest
import redis
from kombu.connection import Connection
from kombu.entity import Queue as KombuQueue
from redis.connection import Connection as RedisConnection

from schemas.result import ErrorCode, ReviewError, ReviewResult
from tests.infrastructure import drop_prefix
from tests.integration.support import sample
from workers.fleet.deps import Deps, build_deps
from workers.fleet.guard import Delivery
from workers.fleet.handlers import handle_router, handle_stage1, handle_stage2
from workers.fleet.next_hop import Hop, RetryLater
from workers.fleet.transport.redis_transport import Transport
from workers.results.ledger import CostLedger
from workers.results.stream import read_all
from workers.settings import Settings

pytestmark = pytest.mark.integration


@pytest.fixture
def deps(redis_url: str) -> Iterator[Deps]:
    prefix = f"cost-{uuid.uuid4().hex[:8]}"
    built = build_deps(Settings(redis_url=redis_url, key_prefix=prefix, max_task_tries=3))
    yield built
    drop_prefix(built.redis, prefix)
    built.close()


class RoundTrips:
    """Counts what redis-py sends: one per command, pipeline or script call."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        send: Callable[..., None] = RedisConnection.send_packed_command

        def counted(connection: RedisConnection, *args: Any, **kwargs: Any) -> None:
            self.count += 1
            send(connection, *args, **kwargs)

        monkeypatch.setattr(RedisConnection, "send_packed_command", counted)


def stage1(deps: Deps, dag: str, node: str, delivery: Delivery) -> Hop:
    body = json.dumps(sample("good_python.json", dag_id=dag, node_id=node))
    hop = handle_stage1(body, deps, delivery=delivery)
    assert isinstance(hop, Hop)
    return hop


def route(hop: Hop, deps: Deps, delivery: Delivery) -> object:
    identity_json, request_json, report_json = hop.args
    return handle_router(identity_json, request_json, report_json, deps, delivery=delivery)


def test_an_accepted_first_delivery_costs_stage1_nothing_and_the_router_one_round_trip(
    deps: Deps, monkeypatch: pytest.MonkeyPatch
) -> None:
    warm = stage1(deps, "c0", "warm", Delivery.FIRST)  # per-process caches filled
    assert route(warm, deps, Delivery.FIRST) is None
    trips = RoundTrips(monkeypatch)

    hop = stage1(deps, "c1", "n1", Delivery.FIRST)
    at_stage1 = trips.count
    assert route(hop, deps, Delivery.FIRST) is None

    assert (at_stage1, trips.count - at_stage1) == (0, 1)
    [entry] = read_all(deps.redis, deps.keys.results("c1"))
    assert isinstance(entry.payload, ReviewResult)
    key = "c1:n1:1"
    assert deps.records.attempts.get("c1", "n1", 1) is not None, "the record came with the entry"
    assert deps.records.marks.is_done(key), "and the bookkeeping mark"
    assert not deps.redis.exists(deps.keys.tries("router", key))


def test_a_redelivered_router_finds_its_entry_and_adds_nothing(deps: Deps) -> None:
    hop = stage1(deps, "c2", "n1", Delivery.FIRST)
    assert route(hop, deps, Delivery.FIRST) is None
    assert route(hop, deps, Delivery.AGAIN) is None
    again = json.dumps(sample("good_python.json", dag_id="c2", node_id="n1"))
    assert handle_stage1(again, deps, delivery=Delivery.AGAIN) is None  # sees it published
    assert len(read_all(deps.redis, deps.keys.results("c2"))) == 1


def escalated(deps: Deps, dag: str) -> tuple[str, str, str]:
    """An escalated review's Stage 2 hop, as the router sends it."""
    body = json.dumps(sample("final_deliverable.json", dag_id=dag))
    hop = handle_stage1(body, deps, delivery=Delivery.FIRST)
    assert isinstance(hop, Hop)
    routed = route(hop, deps, Delivery.FIRST)
    assert isinstance(routed, Hop) and len(routed.args) == 3
    identity, request, report = routed.args
    return identity, request, report


def test_an_escalated_node_costs_stage2_three_round_trips_and_each_guarantee_holds(
    deps: Deps, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The count takes the claim; after the judge, one round trip keeps the report,
    releases the claim and records the labels; the next publishes with record and mark."""
    assert handle_stage2(*escalated(deps, "e0"), deps) is None  # scripts loaded, caches filled
    hop = escalated(deps, "e1")
    trips = RoundTrips(monkeypatch)

    assert handle_stage2(*hop, deps) is None

    assert trips.count == 3
    [entry] = read_all(deps.redis, deps.keys.results("e1"))
    assert isinstance(entry.payload, ReviewResult) and entry.payload.stage2 is not None
    key, keys = "e1:release-notes:1", deps.keys
    assert deps.redis.exists(keys.stage2_report(key)), "the Ceiling is kept"
    assert not deps.redis.exists(keys.stage2_claim(key)), "its claim released"
    assert deps.records.marks.is_done(key) and deps.records.attempts.get("e1", "release-notes", 1)
    assert int(deps.redis.get(keys.tries("stage2", key)) or 0) == 1
    labels = [o for o in deps.records.outcomes.export() if o.dag_id == "e1"]
    assert [o.source.value for o in labels] == ["stage2"]

    # A redelivery finds it published: nothing added, and the claim its count took let go.
    assert handle_stage2(*hop, deps, delivery=Delivery.AGAIN) is None
    assert len(read_all(deps.redis, keys.results("e1"))) == 1
    assert not deps.redis.exists(keys.stage2_claim(key))
    assert len([o for o in deps.records.outcomes.export() if o.dag_id == "e1"]) == 1


class BrokenLedger(CostLedger):
    """A router fault on every delivery."""

    def has_budget(self, dag_id: str, budget_usd: float | None) -> bool:
        raise RuntimeError("the ledger is unreadable")


def test_a_router_that_fails_every_delivery_is_dead_lettered_after_max_tries(deps: Deps) -> None:
    hop = stage1(deps, "c3", "n1", Delivery.FIRST)
    broken = replace(deps, ledger=BrokenLedger(deps.redis, deps.keys))
    outcomes = [
        route(hop, broken, delivery)
        for delivery in (Delivery.FIRST, Delivery.AGAIN, Delivery.AGAIN)
    ]

    assert [type(o) for o in outcomes] == [RetryLater, RetryLater, type(None)]
    [error] = [e.payload for e in read_all(deps.redis, deps.keys.results("c3"))]
    assert isinstance(error, ReviewError)
    assert error.code is ErrorCode.POISON and error.tries == 3
    assert route(hop, broken, Delivery.AGAIN) is None


@pytest.fixture()
def queue_keys(redis_db: redis.Redis) -> Iterator[dict[str, str]]:
    tag = uuid.uuid4().hex[:8]
    names = {
        "queue": f"cost-{tag}",
        "unacked_key": f"cost-{tag}:unacked",
        "unacked_index_key": f"cost-{tag}:unacked_index",
        "unacked_mutex_key": f"cost-{tag}:unacked_mutex",
    }
    yield names
    redis_db.delete(*names.values())


def test_what_the_transport_gives_back_arrives_marked_redelivered(
    redis_url: str, queue_keys: dict[str, str]
) -> None:
    """The flag ``workers.fleet.tasks.delivery_of`` reads, on both ways a message returns."""
    options = {
        "priority_steps": [0],
        "visibility_timeout": 1,
        **{k: v for k, v in queue_keys.items() if k != "queue"},
    }
    seen: list[bool] = []
    # kombu ships no type hints.
    with Connection(  # type: ignore[no-untyped-call]
        redis_url, transport=Transport, transport_options=options
    ) as connection:
        queue = KombuQueue(queue_keys["queue"])  # type: ignore[no-untyped-call]
        connection.Producer().publish({"n": "1"}, routing_key=queue.name, declare=[queue])

        def on_message(_: object, message: Any) -> None:
            seen.append(bool(message.delivery_info.get("redelivered")))
            if len(seen) == 1:
                message.requeue()  # a connection fault under the task: Reject(requeue=True)
            elif len(seen) == 2:
                pass  # held, never acked: a dead worker's message, restored when overdue
            else:
                message.ack()

        with connection.Consumer([queue], callbacks=[on_message]):
            connection.drain_events(timeout=10)
            connection.drain_events(timeout=10)
            time.sleep(1.1)
            connection.default_channel.qos.restore_visible(num=100)
            connection.drain_events(timeout=10)

    assert seen == [False, True, True]
