"""What awaiting a verdict costs beyond the fleet's own latency: asyncio client vs sync.

Run: ``python -m bench.client_async [--awaits 1000] [--concurrency 50]``;
``python -m bench.client_async --figures [--check]`` rewrites docs/runtime.md's block.

One fleet on a private Redis, one run, the two ways a runtime waits side by side:

- ``await AsyncReviewClient.review(...)`` from one event loop, in waves of
  ``--concurrency`` awaited together;
- the sync client's ``submit_many`` of the same waves, plus a consumer-group
  ``subscribe`` on a thread.

Each review's *extra wait* is when its caller holds the verdict minus when the fleet
published it (the stream entry's id: the Redis clock, in ms, on the same machine): what
the waiting itself adds to the fleet's end-to-end latency (submit to publish), which is
reported beside it. Ids have millisecond resolution, so each extra wait is good to 1 ms.

Both are measured twice, each time on a fleet of its own. First with the caller, Redis
and the fleet sharing every CPU: a waiting process that wakes on a busy machine waits for
a CPU, and on two cores that wait is most of the tail. Then, on a machine with two CPUs or
more, with the caller alone on one CPU and the fleet and Redis on the others, as a
runtime and its fleet run on hosts of their own: what is left is the client's own work.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Any

import redis

from bench import common
from bench.generated import write_or_check
from workers.client import AsyncReviewClient, ReviewClient
from workers.settings import Settings

NAME = "client_async"
DOC = Path(__file__).resolve().parents[1] / "docs" / "runtime.md"
START = "<!-- client_async figures: written by python -m bench.client_async --figures -->"
END = "<!-- end of client_async figures -->"


def _summary(extra_ms: list[float], e2e_ms: list[float]) -> dict[str, Any]:
    return {
        "reviews": len(extra_ms),
        "extra_wait_ms": {
            "p50": round(common.percentile(extra_ms, 50), 2),
            "p99": round(common.percentile(extra_ms, 99), 2),
            "max": round(max(extra_ms), 2),
        },
        "fleet_end_to_end_ms": {
            "p50": round(common.percentile(e2e_ms, 50), 1),
            "p99": round(common.percentile(e2e_ms, 99), 1),
        },
    }


async def _awaits(settings: Settings, total: int, concurrency: int) -> dict[str, Any]:
    dag = common.unique("await")
    sent: dict[str, float] = {}
    held: dict[str, float] = {}

    async with AsyncReviewClient(settings) as client:

        async def one(i: int) -> None:
            key = f"{dag}:n{i}:1"
            sent[key] = time.time() * 1000
            await client.review(common.review_obj(dag, f"n{i}"), timeout=300)
            held[key] = time.time() * 1000

        for start in range(0, total, concurrency):  # waves, as the sync side sends them
            await asyncio.gather(*(one(i) for i in range(start, min(total, start + concurrency))))
    published = _published_ms(settings, dag)
    return _summary([held[k] - published[k] for k in held], [published[k] - sent[k] for k in held])


def _published_ms(settings: Settings, dag: str) -> dict[str, int]:
    """When the fleet published each review of ``dag``: its stream entry's id."""
    client = redis.Redis.from_url(settings.state_url)
    try:
        found = common.entries(client, settings.keys.results(dag))
    finally:
        client.close()
    return {fields["review_key"]: common.entry_ms(entry_id) for entry_id, fields in found}


def _subscribed(settings: Settings, total: int, concurrency: int) -> dict[str, Any]:
    dag = common.unique("subscribe")
    client = ReviewClient(settings)
    sent: dict[str, float] = {}
    extra: list[float] = []
    e2e: list[float] = []
    done = threading.Event()

    def consume() -> None:
        for delivery in client.subscribe(dag, "bench", "bench-1"):
            held_ms = time.time() * 1000
            published = common.entry_ms(delivery.entry_id)
            delivery.ack()
            extra.append(held_ms - published)
            e2e.append(published - sent[delivery.review_key])
            if len(extra) == total:
                done.set()
                return

    reader = threading.Thread(target=consume, daemon=True)
    reader.start()
    try:
        for start in range(0, total, concurrency):  # the same waves as the awaits
            wave = [common.review_obj(dag, f"n{i}") for i in range(start, start + concurrency)]
            for obj in wave:
                sent[f"{dag}:{obj['node_id']}:1"] = time.time() * 1000
            client.submit_many(wave)
            while len(extra) < min(total, start + concurrency) and not done.wait(0.001):
                pass
        if not done.wait(300):
            raise RuntimeError(f"{len(extra)} of {total} results reached the subscriber")
    finally:
        client.close()
    return _summary(extra, e2e)


class Placement(StrEnum):
    """Where the caller runs beside the fleet."""

    SHARED = "shared"
    """Caller, fleet and Redis on every CPU."""
    OWN_CPU = "own_cpu"
    """The caller alone on one CPU; the fleet and Redis on the rest."""


def _cpus(placement: Placement) -> tuple[set[int], set[int]] | None:
    """The fleet's CPUs and the caller's, or None where the placement cannot be had."""
    every = os.sched_getaffinity(0)
    if placement is Placement.SHARED:
        return every, every
    if len(every) < 2:
        return None
    caller = {max(every)}
    return every - caller, caller


@contextmanager
def _placed(fleet_cpus: set[int]) -> Iterator[None]:
    """Spawn what this block starts on ``fleet_cpus``; every CPU again after it.

    Processes and threads inherit the affinity of the thread that makes them, so once the
    fleet is up and this thread moves to the caller's CPU, Redis and the workers stay
    where they started, and the client's threads, made later, go with the caller.
    """
    every = os.sched_getaffinity(0)
    os.sched_setaffinity(0, fleet_cpus)
    try:
        yield
    finally:
        os.sched_setaffinity(0, every)


def _placement_run(placement: Placement, total: int, concurrency: int) -> dict[str, Any] | None:
    """Both ways of waiting on a fleet of their own, placed as ``placement`` says."""
    cpus = _cpus(placement)
    if cpus is None:
        return None
    fleet_cpus, caller_cpus = cpus
    prefix = common.unique("bench-await")
    with _placed(fleet_cpus), common.private_redis() as server:
        env = common.fleet_env(prefix)
        settings = common.settings_for(server.url, env)
        with common.running_fleet(server.url, env):
            os.sched_setaffinity(0, caller_cpus)
            warm = asyncio.run(_awaits(settings, 50, concurrency))  # connections, imports
            awaited = asyncio.run(_awaits(settings, total, concurrency))
            subscribed = _subscribed(settings, total, concurrency)
    return {
        "cpus": {"fleet_and_redis": sorted(fleet_cpus), "caller": sorted(caller_cpus)},
        "warm_up_reviews": warm["reviews"],
        "await_review": awaited,
        "submit_and_subscribe": subscribed,
    }


def measure(total: int, concurrency: int) -> dict[str, Any]:
    """Both ways of waiting, on a shared machine and with the caller on its own CPU."""
    before = os.getloadavg()[0]
    runs = {p.value: _placement_run(p, total, concurrency) for p in Placement}
    return {
        # Other work on the machine starves a waiting process of CPU: both sides alike.
        "load_average_1m": [round(before, 1), round(os.getloadavg()[0], 1)],
        "awaits": total,
        "concurrency": concurrency,
        "placements": runs,
    }


def render(current: str) -> str:
    """docs/runtime.md with its figures block written from the results file."""
    figures = json.loads((common.RESULTS_DIR / f"{NAME}.json").read_text())
    rows = []
    for placement, where in (
        (Placement.SHARED, "caller, fleet and Redis share the CPUs"),
        (Placement.OWN_CPU, "caller on a CPU of its own"),
    ):
        run = figures["placements"].get(placement.value)
        if run is None:
            rows.append(f"| {where} | not measured: one CPU | | | | | |")
            continue
        for label, key in (
            ("`await review(...)`", "await_review"),
            ("`submit` + `subscribe`", "submit_and_subscribe"),
        ):
            part = run[key]
            wait, e2e = part["extra_wait_ms"], part["fleet_end_to_end_ms"]
            rows.append(
                f"| {where} | {label} | {part['reviews']} | {wait['p50']} | {wait['p99']} | "
                f"{e2e['p50']} | {e2e['p99']} |"
            )
    block = "\n".join(
        [
            START,
            f"{figures['awaits']} reviews each way, in waves of {figures['concurrency']}, "
            f"built-in judge, {figures['cpus']} CPUs at a load average of "
            f"{figures['load_average_1m'][0]} to {figures['load_average_1m'][1]} "
            f"(`bench/results/{NAME}.json`):",
            "",
            "| where | how the runtime waits | reviews | extra wait p50 ms "
            "| extra wait p99 ms | fleet end to end p50 ms | p99 ms |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
            *rows,
            END,
        ]
    )
    if START in current and END in current:
        head, rest = current.split(START, 1)
        return head + block + rest.split(END, 1)[1]
    return current.rstrip("\n") + "\n\n" + block + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if "--figures" in args:
        args.remove("--figures")
        return write_or_check(DOC, render, "python -m bench.client_async --figures", args)
    parser = common.command_line(__doc__)
    parser.add_argument("--awaits", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=50)
    options = parser.parse_args(args)
    figures = common.publish(NAME, measure(options.awaits, options.concurrency))
    for placement, run in figures["placements"].items():
        for key in ("await_review", "submit_and_subscribe"):
            print(placement, key, json.dumps(run and run[key]))
    return write_or_check(DOC, render, "python -m bench.client_async --figures", [])


if __name__ == "__main__":
    sys.exit(main())
