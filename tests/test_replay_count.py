"""A replay is counted per message, so that one that breaks its own connection is contained.

A hand-back never counts a try (``workers/fleet/replay.py``); a try that kills its own Redis
connection every time was therefore replayed forever. Here, the pure part: the count each
hand-back writes on the message, and the delivery the worker then reads from it. The
guard's answer on real Redis is ``tests/integration/test_replays.py``; the fault itself,
with real workers, ``tests/faults/test_replay_limit.py``.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from celery.app.task import Context

from workers.fleet.guard import Delivery
from workers.fleet.replay import REPLAY_HEADER, REPLAYS_HEADER, ReplayOf, mark, replay_count
from workers.fleet.tasks import delivery_of
from workers.settings import Settings

LIMIT = 3


def _handed_back(payload: dict[str, Any], times: int) -> dict[str, Any]:
    for _ in range(times):
        mark(payload, replay=True)
    return payload


def _delivered(headers: dict[str, Any], *, max_replays: int = LIMIT) -> Delivery:
    """The delivery a worker reads from a restored message's headers (kombu's and ours)."""
    fields = {"delivery_info": {"redelivered": True}, "retries": 0, **headers}
    task = SimpleNamespace(request=Context(fields))
    return delivery_of(task, max_replays=max_replays)


def test_every_hand_back_counts_one_replay_and_the_first_mark_is_kept() -> None:
    payload = _handed_back({"headers": {"retries": 0}}, 4)
    headers = payload["headers"]
    assert replay_count(headers) == 4
    assert headers[REPLAY_HEADER] == f"{ReplayOf.FIRST}:0"


def test_a_message_without_headers_gets_them_with_its_first_count() -> None:
    payload: dict[str, Any] = {"body": "..."}
    mark(payload, replay=True)
    assert replay_count(payload["headers"]) == 1


def test_a_restore_of_another_kind_clears_the_mark_and_keeps_the_count() -> None:
    """A requeue in between does not start the loop afresh: the count stays."""
    payload = _handed_back({"headers": {}}, 2)
    mark(payload, replay=False)
    assert REPLAY_HEADER not in payload["headers"]
    assert replay_count(payload["headers"]) == 2
    assert replay_count(_handed_back(payload, 1)["headers"]) == 3


def test_a_retry_carries_the_count_on_and_marks_its_own_retries() -> None:
    """Celery copies a task's headers into its retry: the count goes on from there."""
    retry = {"headers": {"retries": 1, REPLAY_HEADER: f"{ReplayOf.FIRST}:0", REPLAYS_HEADER: 2}}
    headers = _handed_back(retry, 1)["headers"]
    assert replay_count(headers) == 3
    assert headers[REPLAY_HEADER] == f"{ReplayOf.FIRST}:1"


@pytest.mark.parametrize("hostile", ["7", 7.0, True, -3, None, [7], {"n": 7}])
def test_a_count_that_is_no_count_reads_as_none(hostile: object) -> None:
    """A producer may send any header: only a non-negative int is a count."""
    assert replay_count({REPLAYS_HEADER: hostile}) == 0
    assert replay_count(_handed_back({"headers": {REPLAYS_HEADER: hostile}}, 1)["headers"]) == 1


def test_replays_up_to_the_limit_count_no_try_and_past_it_every_one_does() -> None:
    payload: dict[str, Any] = {"headers": {"redelivered": False}}
    seen = [_delivered(_handed_back(payload, 1)["headers"]) for _ in range(LIMIT + 2)]
    counted = [Delivery.REPLAY_COUNTED] * 2
    assert seen == [Delivery.FIRST_REPLAY] * LIMIT + counted


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({REPLAY_HEADER: f"{ReplayOf.AGAIN}:0", REPLAYS_HEADER: LIMIT}, Delivery.REPLAY),
        (
            {REPLAY_HEADER: f"{ReplayOf.AGAIN}:0", REPLAYS_HEADER: LIMIT + 1},
            Delivery.REPLAY_COUNTED,
        ),
        # No mark of its own (a retry's copy, or cleared by a requeue): counted anyway.
        ({REPLAYS_HEADER: LIMIT + 5}, Delivery.AGAIN),
        ({"retries": 1, REPLAY_HEADER: f"{ReplayOf.FIRST}:0", REPLAYS_HEADER: 99}, Delivery.AGAIN),
        # A hostile count is none: the replay stays uncounted, as a restart's would.
        ({REPLAY_HEADER: f"{ReplayOf.FIRST}:0", REPLAYS_HEADER: "99"}, Delivery.FIRST_REPLAY),
    ],
)
def test_the_delivery_is_told_from_the_mark_and_the_count(
    headers: dict[str, Any], expected: Delivery
) -> None:
    assert _delivered(headers) is expected


def test_the_count_is_read_from_celerys_headers_too() -> None:
    """Celery keeps a message's custom headers both as attributes and in ``headers``."""
    fields = {"retries": 0, "delivery_info": {}}
    own = {REPLAY_HEADER: f"{ReplayOf.AGAIN}:0", REPLAYS_HEADER: LIMIT + 1}
    task = SimpleNamespace(request=Context({**fields, "headers": own}))
    assert delivery_of(task, max_replays=LIMIT) is Delivery.REPLAY_COUNTED


def test_no_replays_allowed_counts_every_hand_back() -> None:
    payload = _handed_back({"headers": {}}, 1)
    assert _delivered(payload["headers"], max_replays=0) is Delivery.REPLAY_COUNTED


def test_consecutive_redis_restarts_stay_far_below_the_default_limit() -> None:
    """Ten restarts in a row, each catching the same message, still count no try."""
    limit = Settings().max_task_replays
    payload = _handed_back({"headers": {}}, 10)
    assert _delivered(payload["headers"], max_replays=limit) is Delivery.FIRST_REPLAY
    assert limit >= 2 * 10
