"""What the fleet costs: against a hand-rolled pipeline of the same shape, and bare Celery.

All three run in one invocation, on the same private Redis, with the same worker
processes (one per fleet queue, the fleet's pools and concurrency and command-line
flags). A round trip is enqueue to stream entry in each:

- one-hop bare Celery: a task that only XADDs its key to a stream (``bench.bare_app``,
  the fleet's Celery configuration);
- hand-rolled: what a user would write by hand, stage1 task -> router task -> XADD with
  the same engine, late acks, kombu's stock transport (``bench.handrolled_app``);
- fleet: Stage 1, the router (and Stage 2 when escalated: these requests do not
  escalate) and the publication, with every guarantee the fleet keeps;
- the fleet again with every worker on gevent: the built-in judge is CPU-bound, and the
  launcher keeps it on threads where that measures better.

The elapsed time runs from the first enqueue to the last entry's publish time (the
stream entry id is the Redis clock in ms).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import redis
from celery import Celery

from bench import common
from bench import handrolled_app as handrolled
from bench.bare_app import TASK, bare_command, client_app
from bench.handrolled_app import handrolled_command
from workers.client import ReviewClient
from workers.fleet.queues import Queue
from workers.local.launcher import DEFAULT_CONCURRENCY
from workers.local.worker_commands import IO_POOL, concurrency_for, model_judge_in, pool_for
from workers.settings import Settings

WARMUP = 50
GOAL_OVER_HANDROLLED = 1.10


@contextmanager
def _workers(
    url: str, env: dict[str, str], commands: dict[str, list[str]], probe: Celery
) -> Iterator[None]:
    """Worker processes (node name -> command line) that answer ping; stopped after."""
    full_env = {**os.environ, **env, "WINDAGS_REDIS_URL": url}
    procs = [
        subprocess.Popen(
            command,
            env=full_env,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for command in commands.values()
    ]
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            replies = probe.control.ping(destination=list(commands), timeout=1.0)
            if set(commands) <= {name for reply in replies for name in reply}:
                break
        else:
            raise RuntimeError(f"workers {sorted(commands)} did not answer ping")
        yield
    finally:
        probe.close()
        for proc in procs:
            proc.terminate()
        for proc in procs:
            common.stop_process(proc, grace_s=40)


def bare_workers(url: str, env: dict[str, str]) -> AbstractContextManager[None]:
    """One bare worker per fleet queue kind, same pool and concurrency, all on one queue."""
    tag = common.unique("bare")
    commands = {
        f"{q.value}-{tag}@bench": bare_command(
            q, concurrency=DEFAULT_CONCURRENCY[q], name=f"{q.value}-{tag}@bench"
        )
        for q in Queue
    }
    return _workers(url, env, commands, client_app(common.settings_for(url, env)))


def handrolled_workers(url: str, env: dict[str, str]) -> AbstractContextManager[None]:
    """The hand-rolled pipeline's workers: one per fleet queue, the fleet's pools."""
    tag = common.unique("hr")
    model_judge = model_judge_in(env)
    commands = {}
    for q in Queue:
        name = f"{q.value}-{tag}@bench"
        pool = pool_for(q, model_judge=model_judge)
        commands[name] = handrolled_command(
            q, concurrency=concurrency_for(q, pool), pool=pool, name=name
        )
    return _workers(url, env, commands, handrolled.client_app(common.settings_for(url, env)))


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


def run_handrolled(url: str, settings: Settings, n: int, *, timeout_s: float) -> dict[str, float]:
    """N reviews through the hand-rolled stage1 -> router -> XADD pipeline (after a warm-up)."""
    app = handrolled.client_app(settings)
    client = redis.Redis.from_url(url)

    def submit_to(dag: str, count: int) -> Callable[[], None]:
        raws = [json.dumps(common.review_obj(dag, f"n{i}")) for i in range(count)]

        def go() -> None:
            with app.producer_or_acquire() as producer:
                for raw in raws:
                    app.send_task(handrolled.STAGE1, args=[raw], producer=producer)

        return go

    try:
        warm = common.unique("hr-warm")
        _timed(client, settings.keys.results(warm), WARMUP, submit_to(warm, WARMUP), timeout_s)
        dag = common.unique("handrolled")
        return _timed(client, settings.keys.results(dag), n, submit_to(dag, n), timeout_s)
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
    """Measure all three, print the table, write ``overhead.json``."""
    with common.private_redis() as server:
        env = common.fleet_env(common.unique("ovh"))
        settings = common.settings_for(server.url, env)
        with bare_workers(server.url, env):
            bare = run_bare(server.url, settings, n, timeout_s=timeout_s)
        with handrolled_workers(server.url, env):
            hand = run_handrolled(server.url, settings, n, timeout_s=timeout_s)
        with common.running_fleet(server.url, env):
            fleet = run_fleet(server.url, settings, n, timeout_s=timeout_s)
        # The pool a model judge gets, with the built-in judge's CPU-bound work: whether
        # threads are the better pool for it (the launcher keeps them there).
        green = {Queue.STAGE1: DEFAULT_CONCURRENCY[Queue.STAGE1], Queue.STAGE2: 4}
        with common.running_fleet(server.url, env, green, IO_POOL):
            fleet_gevent = run_fleet(server.url, settings, n, timeout_s=timeout_s)
    over_hand = round(fleet["seconds"] / hand["seconds"], 2)
    gevent_over_threads = round(fleet_gevent["seconds"] / fleet["seconds"], 2)
    over_bare = round(fleet["seconds"] / bare["seconds"], 2)
    figures: dict[str, Any] = {
        "n": n,
        "workers": {q.value: DEFAULT_CONCURRENCY[q] for q in Queue},
        "pools": {q.value: pool_for(q, model_judge=model_judge_in(env)) for q in Queue},
        "bare": bare,
        "handrolled": hand,
        "fleet": fleet,
        "ratio_fleet_over_handrolled": over_hand,
        "goal_ratio_over_handrolled": GOAL_OVER_HANDROLLED,
        "ratio_fleet_over_bare": over_bare,
        "fleet_on_gevent": fleet_gevent,
        "ratio_gevent_over_threads_builtin_judge": gevent_over_threads,
    }
    rows = [
        [name, r["n"], r["seconds"], r["enqueue_seconds"], r["per_s"], r["ms_per_item"]]
        for name, r in (
            ("bare celery (one hop)", bare),
            ("hand-rolled pipeline", hand),
            ("fleet", fleet),
            ("fleet, all on gevent", fleet_gevent),
        )
    ]
    print(common.table(["run", "n", "seconds", "enqueue_s", "per_s", "ms/item"], rows))
    print(f"fleet/hand-rolled = {over_hand:.2f}x (goal <= {GOAL_OVER_HANDROLLED:.2f}x)")
    print(f"fleet/one-hop bare Celery = {over_bare:.2f}x")
    print(
        f"built-in judge, fleet on gevent / fleet on threads = {gevent_over_threads:.2f}x "
        "(above 1: threads are the better pool for it)"
    )
    return common.publish("overhead", figures, out_dir)


def main(argv: list[str] | None = None) -> None:
    parser = common.command_line(__doc__)
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args(argv)
    run(args.n)


if __name__ == "__main__":
    main()
