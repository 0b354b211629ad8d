"""Two fleets with different key prefixes on one Redis database never see each other's work.

Each fleet submits a batch; a review a worker of the other fleet took would land on that
fleet's stream (``<its prefix>:results:<dag>``), with its attempts and outcomes. Every key
either fleet or kombu wrote carries one prefix, and a broadcast (remote control's ping)
reaches only the sender's workers.
"""

from __future__ import annotations

import pytest

from tests.faults.support import (
    FleetUnderTest,
    count_stream,
    fresh_dag,
    mixed,
    private_redis,
    record,
    running_fleet,
    wait_quiet,
)
from tests.infrastructure import wait_until
from workers.fleet.app import create_app
from workers.fleet.queues import Queue

pytestmark = [pytest.mark.integration, pytest.mark.slow]

REVIEWS = 100
TWO_FLEETS = {Queue.STAGE1: 2, Queue.ROUTER: 2, Queue.STAGE2: 2}


def _foreign(names: list[str], prefixes: tuple[str, ...]) -> list[str]:
    return [name for name in names if not name.startswith(tuple(f"{p}:" for p in prefixes))]


def _names(run: FleetUnderTest) -> set[str]:
    return {run.fleet.worker_name(queue) for queue in Queue}


def _pinged_by(run: FleetUnderTest) -> set[str]:
    """The workers that answer a ping broadcast to every worker from ``run``'s app."""
    app = create_app(run.settings)
    try:
        return {name for reply in app.control.ping(timeout=2.0) for name in reply}
    finally:
        app.close()


@pytest.mark.timeout(300)
def test_two_fleets_on_one_database_take_only_their_own_reviews() -> None:
    with private_redis() as server:
        url = server.url
        with (
            running_fleet(url, "sa", concurrency=TWO_FLEETS, pool="threads") as a,
            running_fleet(url, "sb", concurrency=TWO_FLEETS, pool="threads") as b,
        ):
            fleets: tuple[FleetUnderTest, FleetUnderTest] = (a, b)
            prefixes = (a.settings.key_prefix, b.settings.key_prefix)
            # The same DAG id in both: only the prefix tells the fleets apart.
            dag = fresh_dag("shared")
            submitted = {
                run.settings.key_prefix: run.client.submit_many(
                    mixed(dag, [f"{tag}{i:03d}" for i in range(REVIEWS)])
                )
                for run, tag in zip(fleets, "ab", strict=True)
            }
            # A broadcast (remote control's ping) reaches only the sender's own workers.
            answered = [_pinged_by(run) for run in fleets]

            wanted = {key for keys in submitted.values() for key in keys}

            def all_in() -> bool:  # on either stream: a cross-delivery is counted, not awaited
                return wanted <= {
                    k for r in fleets for k in count_stream(r.db, r.settings, dag).per_key
                }

            done = wait_until(all_in, timeout_s=180, every_s=1.0)
            for run in fleets:  # stray redeliveries would land before this
                wait_quiet(run.db, run.settings)
            counts = [count_stream(run.db, run.settings, dag) for run in fleets]
            keys = sorted(k.decode() for k in a.db.scan_iter(count=1000))
    entries = [c.total for c in counts]
    # Entries on a fleet's stream for reviews the other fleet submitted.
    crossed = [
        sum(n for key, n in c.per_key.items() if key not in set(submitted[p]))
        for c, p in zip(counts, prefixes, strict=True)
    ]
    duplicated = [len(c.duplicated()) for c in counts]
    foreign_keys = _foreign(keys, prefixes)
    record(
        "shared_redis",
        {
            "reviews_per_fleet": REVIEWS,
            "entries_per_fleet": entries,
            "cross_deliveries": crossed,
            "duplicated": duplicated,
            "keys_without_a_prefix": len(foreign_keys),
            "ping_answers": [len(names) for names in answered],
        },
    )
    assert done, entries
    assert crossed == [0, 0]
    assert [len(c.lost(submitted[p])) for c, p in zip(counts, prefixes, strict=True)] == [0, 0]
    assert entries == [REVIEWS, REVIEWS]
    assert duplicated == [0, 0]
    assert foreign_keys == [], foreign_keys[:20]
    assert answered == [_names(run) for run in fleets]
