"""What the fleet costs over bare Celery: N reviews against N bare round trips.

Both run in the same invocation, on the same private Redis, with the same worker
processes (one per fleet queue, the fleet's pool and concurrency, the fleet's Celery
configuration). A round trip is enqueue to stream entry in both cases: the bare task
only XADDs its key to a stream (``bench.bare_app``); a review runs Stage 1, the router
(and Stage 2 when escalated: these requests do not escalate) and publishes its result.
The elapsed time runs from the first enqueue to the last entry's publish time (the
stream entry id is the Redis clock in ms).
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import redis

from bench import common
from bench.bare_app import TASK, bare_command, client_app
from workers.client import ReviewClient
from workers.fleet.queues import Queue
from workers.local.launcher import DEFAULT_CONCURRENCY
from workers.settings import Settings

WARMUP = 50


@contextmanager
def bare_workers(url: str, env: dict[str, str]) -> Iterator[list[subprocess.Popen[bytes]]]:
    """One bare worker per fleet queue kind, same pool and concurrency, all on one queue."""
    tag = common.unique("bare")
    names = [f"{q.value}-{tag}@bench" for q in Queue]
    full_env = {**os.environ, **env, "WINDAGS_REDIS_URL": url}
    procs = [
        subprocess.Popen(
            bare_command(q, concurrency=DEFAULT_CONCURRENCY[q], name=n),
            env=full_env,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for q, n in zip(Queue, names, strict=True)
    ]
    try:
        probe = client_app(common.settings_for(url, env))
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            replies = probe.control.ping(destination=names, timeout=1.0)
            if set(names) <= {name for reply in replies for name in reply}:
                break
        else:
            raise RuntimeError("bare workers did not answer ping")
        probe.close()
        yield procs
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=40)


def _timed(
    client: redis.Redis, stream: str, n: int, submit: Callable[[], None], timeout_s: float
) -> dict[str, float]:
    started = time.time()
    submit()
    enqueued = time.time()
    got = common.wait_for_entries(client, stream, n, timeout_s)
    if got < n:
        raise RuntimeError(f"only {got} of {n} entries reached {stream} in {timeout_s:.0f}s")
    last_ms = max(common.entry_ms(i) for i, _ in common.entries(client, stream))
    seconds = last_ms / 1000 - started
    return {
        "n": n,
        "seconds": round(seconds, 3),
        "enqueue_seconds": round(enqueued - started, 3),
        "per_s": round(n / seconds, 1),
        "ms_per_item": round(1000 * seconds / n, 3),
    }


def run_bare(url: str, settings: Settings, n: int, *, timeout_s: float) -> dict[str, float]:
    """N bare round trips (after a warm-up)."""
    app = client_app(settings)
    client = redis.Redis.from_url(url)

    def submit_to(stream: str, count: int) -> Callable[[], None]:
        def go() -> None:
            with app.producer_or_acquire() as producer:
                for i in range(count):
                    app.send_task(TASK, args=[stream, f"k{i}"], producer=producer)

        return go

    try:
        warm = common.unique("bare-warm")
        _timed(client, warm, WARMUP, submit_to(warm, WARMUP), timeout_s)
        stream = common.unique("bare")
        return _timed(client, stream, n, submit_to(stream, n), timeout_s)
    finally:
        client.close()
        app.close()


def run_fleet(url: str, settings: Settings, n: int, *, timeout_s: float) -> dict[str, float]:
    """N reviews through Stage 1 and the router (after a warm-up)."""
    review_client = ReviewClient(settings)
    client = redis.Redis.from_url(url)

    def submit_to(dag: str, count: int) -> Callable[[], None]:
        objs: list[dict[str, Any]] = [common.review_obj(dag, f"n{i}") for i in range(count)]

        def go() -> None:
            review_client.submit_many(objs)

        return go

    try:
        warm = common.unique("warm")
        _timed(client, settings.keys.results(warm), WARMUP, submit_to(warm, WARMUP), timeout_s)
        dag = common.unique("overhead")
        figures = _timed(client, settings.keys.results(dag), n, submit_to(dag, n), timeout_s)
        escalated = sum(
            1
            for _, f in common.entries(client, settings.keys.results(dag))
            if '"stage2":{' in f["payload"]
        )
        return {**figures, "escalated": escalated}
    finally:
        client.close()
        review_client.close()


def run(n: int, *, out_dir: Path | None = None, timeout_s: float = 600) -> dict[str, Any]:
    """Measure both, print the table, write ``overhead.json``."""
    with common.private_redis() as server:
        env = common.fleet_env(common.unique("ovh"))
        settings = common.settings_for(server.url, env)
        with bare_workers(server.url, env):
            bare = run_bare(server.url, settings, n, timeout_s=timeout_s)
        with common.running_fleet(server.url, env):
            fleet = run_fleet(server.url, settings, n, timeout_s=timeout_s)
    ratio = round(fleet["seconds"] / bare["seconds"], 2)
    figures: dict[str, Any] = {
        "n": n,
        "workers": {q.value: DEFAULT_CONCURRENCY[q] for q in Queue},
        "pool": "threads",
        "bare": bare,
        "fleet": fleet,
        "ratio_fleet_over_bare": ratio,
        "goal_ratio": 1.25,
    }
    rows = [
        [name, r["n"], r["seconds"], r["enqueue_seconds"], r["per_s"], r["ms_per_item"]]
        for name, r in (("bare celery", bare), ("fleet", fleet))
    ]
    print(common.table(["run", "n", "seconds", "enqueue_s", "per_s", "ms/item"], rows))
    print(f"fleet/bare = {ratio:.2f}x (goal <= 1.25x)")
    return common.publish("overhead", figures, out_dir)


def main(argv: list[str] | None = None) -> None:
    parser = common.command_line(__doc__)
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args(argv)
    run(args.n)


if __name__ == "__main__":
    main()
