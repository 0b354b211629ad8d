"""Enqueue-to-stream latency of reviews at steady offered loads (built-in judge).

A paced producer submits one review every 1/rate seconds for ``--seconds``; the submit
time of each review is kept by node id, and the stream entry id gives its publish time
(the Redis clock, in ms, on the same machine). Latency = publish - submit.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import redis

from bench import common
from workers.client import ReviewClient
from workers.fleet.queues import Queue
from workers.local.launcher import DEFAULT_CONCURRENCY
from workers.settings import Settings

RATES = (50, 100)


def measure(url: str, settings: Settings, rate: int, seconds: float) -> dict[str, Any]:
    """Offer ``rate`` reviews/s for ``seconds``; latency percentiles in ms."""
    dag = common.unique(f"lat{rate}")
    total = max(1, int(rate * seconds))
    objs = [common.review_obj(dag, f"n{i}") for i in range(total)]
    submitted: dict[str, float] = {}
    review_client = ReviewClient(settings)
    client = redis.Redis.from_url(url)
    behind = 0
    try:
        started = time.time()
        for i, obj in enumerate(objs):
            target = started + i / rate
            pause = target - time.time()
            if pause > 0:
                time.sleep(pause)
            elif pause < -0.05:
                behind += 1
            submitted[obj["node_id"]] = time.time() * 1000
            review_client.submit(obj)
        offered_s = time.time() - started
        stream = settings.keys.results(dag)
        got = common.wait_for_entries(client, stream, total, timeout_s=120 + seconds)
        latencies = []
        for entry_id, fields in common.entries(client, stream):
            node = fields["review_key"].split(":")[1]
            latencies.append(common.entry_ms(entry_id) - submitted[node])
    finally:
        client.close()
        review_client.close()
    return {
        "offered_per_s": rate,
        "achieved_offer_per_s": round(total / offered_s, 1),
        "seconds": seconds,
        "submitted": total,
        "received": got,
        "late_submits": behind,
        "p50_ms": round(common.percentile(latencies, 50), 1),
        "p95_ms": round(common.percentile(latencies, 95), 1),
        "p99_ms": round(common.percentile(latencies, 99), 1),
        "max_ms": round(max(latencies, default=0.0), 1),
    }


def run(
    seconds: float = 20.0, rates: tuple[int, ...] = RATES, *, out_dir: Path | None = None
) -> dict[str, Any]:
    """Each offered load in turn on one fleet; print the table, write ``latency.json``."""
    with common.private_redis() as server:
        env = common.fleet_env(common.unique("lat"))
        settings = common.settings_for(server.url, env)
        with common.running_fleet(server.url, env):
            measure(server.url, settings, 20, 1.0)  # warm-up
            rows = [measure(server.url, settings, r, seconds) for r in rates]
    print(
        common.table(
            ["offered/s", "achieved/s", "n", "recv", "p50_ms", "p95_ms", "p99_ms", "max_ms"],
            [
                [
                    r["offered_per_s"],
                    r["achieved_offer_per_s"],
                    r["submitted"],
                    r["received"],
                    r["p50_ms"],
                    r["p95_ms"],
                    r["p99_ms"],
                    r["max_ms"],
                ]
                for r in rows
            ],
        )
    )
    figures = {
        "workers": {q.value: DEFAULT_CONCURRENCY[q] for q in Queue},
        "pool": "threads",
        "rows": rows,
    }
    return common.publish("latency", figures, out_dir)


def main(argv: list[str] | None = None) -> None:
    parser = common.command_line(__doc__)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--rates", type=int, nargs="+", default=list(RATES))
    args = parser.parse_args(argv)
    run(args.seconds, tuple(args.rates))


if __name__ == "__main__":
    main()
