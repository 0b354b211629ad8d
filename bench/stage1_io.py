"""Reviews/s one judge-calling worker process sustains against a 200 ms Messages API.

Which worker calls the model: in this code base Stage 1 (``handle_stage1`` ->
``run_stage1(request)``) runs the deterministic Floor and Wall and calls no judge, even
with ``WINDAGS_JUDGE_BACKEND=anthropic``; only Stage 2 (the Ceiling) does. So, as the
issue asks in that case, this measures the **Stage 2 worker**: every request is flagged
``final_deliverable`` (a hard escalation rule), Stage 1 and the router's decision are
computed here, and the Stage 2 tasks are enqueued straight onto its queue, so that one
Stage 2 worker process is the only thing being measured.

The judge is the real ``AnthropicJudge`` (official SDK) against
``workers.judges.messages_server`` in its own process with 200 ms latency. The bound
is concurrency / latency: what the pool could do if everything but the model were free.
Rate = N / (last publish - first enqueue), after a warm-up round per configuration;
every output is unique, so the judge's content-hash cache never answers for the model.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import redis

from bench import common
from bench.judge_throughput import LATENCY_S, start_server
from schemas.hops import RoutedReview
from schemas.result import CeilingStatus, ReviewResult
from workers.app import create_app
from workers.evaluate import decide_escalation, run_stage1
from workers.fleet import worker_command
from workers.intake import encode_request
from workers.queues import Queue, TaskName
from workers.settings import Settings
from workers.stream import parse_entry

CONFIGS: tuple[tuple[str, int], ...] = (
    ("threads", 16),
    ("threads", 32),
    ("threads", 64),
    ("prefork", 2),
)
ROUNDS = 8
TASK = "Review the rollout plan for the billing service and name its risks."


def stage2_args(settings: Settings, dag: str, count: int) -> list[list[str]]:
    """Stage 2 task arguments for ``count`` final-deliverable reviews."""
    price = settings.price_of(settings.stage2_model)
    out = []
    for i in range(count):
        obj = common.review_obj(dag, f"n{i}", task=TASK, final_deliverable=True)
        obj["output"]["content"] = f"{common.SAMPLE_TEXT} Review {dag} number {i}."
        request = common.build_request(obj)
        report = run_stage1(request)
        escalation = decide_escalation(request, stage2_price=price, stage1=report.stage1)
        assert escalation.escalate, "a final deliverable must escalate"
        routed = RoutedReview(report=report, escalation=escalation)
        out.append([encode_request(request), routed.model_dump_json()])
    return out


def start_worker(
    url: str, env: dict[str, str], pool: str, concurrency: int
) -> tuple[subprocess.Popen[bytes], str]:
    """One Stage 2 worker process with ``pool`` and ``concurrency``."""
    name = f"{common.unique('s2')}@bench"
    command = worker_command(Queue.STAGE2, concurrency=concurrency, name=name)
    command[command.index("--pool") + 1] = pool
    proc = subprocess.Popen(
        command,
        env={**os.environ, **env, "WINDAGS_REDIS_URL": url},
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return proc, name


def _wait_ping(settings: Settings, name: str, proc: subprocess.Popen[bytes]) -> None:
    probe = create_app(settings)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"stage2 worker exited with {proc.returncode}")
            replies = probe.control.ping(destination=[name], timeout=1.0)
            if any(name in reply for reply in replies):
                return
        raise RuntimeError("stage2 worker did not answer ping")
    finally:
        probe.close()


def _batch(settings: Settings, client: redis.Redis, count: int) -> tuple[float, list[Any]]:
    dag = common.unique("io")
    args = stage2_args(settings, dag, count)
    app = create_app(settings)
    started = time.time()
    with app.producer_or_acquire() as producer:
        for a in args:
            app.send_task(TaskName.STAGE2.value, args=a, producer=producer)
    app.close()
    stream = settings.stream_key(dag)
    got = common.wait_for_entries(client, stream, count, timeout_s=120)
    if got < count:
        raise RuntimeError(f"only {got} of {count} Stage 2 results arrived")
    raw = common.entries(client, stream)
    last = max(common.entry_ms(i) for i, _ in raw)
    return last / 1000 - started, [parse_entry(f) for _, f in raw]


def measure(url: str, env: dict[str, str], pool: str, concurrency: int) -> dict[str, Any]:
    """Throughput of one Stage 2 worker with this pool, against its bound."""
    settings = common.settings_for(url, env)
    proc, name = start_worker(url, env, pool, concurrency)
    client = redis.Redis.from_url(url)
    try:
        _wait_ping(settings, name, proc)
        _batch(settings, client, concurrency)  # warm-up: imports, HTTP connections
        count = max(concurrency * ROUNDS, 30)
        seconds, results = _batch(settings, client, count)
    finally:
        client.close()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    scored = [
        r
        for r in results
        if isinstance(r, ReviewResult)
        and r.stage2 is not None
        and r.stage2.status is CeilingStatus.SCORED
        and r.stage2.calls >= 1
    ]
    rate, bound = count / seconds, concurrency / LATENCY_S
    return {
        "pool": pool,
        "concurrency": concurrency,
        "reviews": count,
        "judged": len(scored),
        "seconds": round(seconds, 3),
        "reviews_per_s": round(rate, 1),
        "bound_per_s": round(bound, 1),
        "pct_of_bound": round(100 * rate / bound, 1),
    }


def recommend(rows: list[dict[str, Any]]) -> str:
    """The pool to run judge-calling workers with: the most reviews/s per process."""
    best = max(rows, key=lambda r: r["reviews_per_s"])
    prefork = [r for r in rows if r["pool"] == "prefork"]
    versus = (
        f"; prefork c={prefork[0]['concurrency']} gives {prefork[0]['reviews_per_s']}/s"
        if prefork and prefork[0] is not best
        else ""
    )
    goal = "meets" if best["pct_of_bound"] >= 80 else "misses"
    return (
        f"{best['pool']} pool, concurrency {best['concurrency']}: "
        f"{best['reviews_per_s']} reviews/s per process, {best['pct_of_bound']}% of its "
        f"bound ({goal} the 80% goal){versus}"
    )


def run(
    configs: tuple[tuple[str, int], ...] = CONFIGS, *, out_dir: Path | None = None
) -> dict[str, Any]:
    """Every pool configuration; print the table, write ``stage1_io.json``."""
    server, base_url = start_server()
    try:
        with common.private_redis() as redis_server:
            env = common.fleet_env(
                common.unique("io"),
                WINDAGS_JUDGE_BACKEND="anthropic",
                WINDAGS_ANTHROPIC_API_KEY="test-key",
                WINDAGS_ANTHROPIC_BASE_URL=base_url,
                WINDAGS_JUDGE_TIMEOUT_S="10",
            )
            rows = [measure(redis_server.url, env, pool, c) for pool, c in configs]
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=10)
        if server.stdout is not None:
            server.stdout.close()
    print(
        common.table(
            ["pool", "conc", "reviews", "judged", "seconds", "reviews/s", "bound", "%bound"],
            [
                [
                    r["pool"],
                    r["concurrency"],
                    r["reviews"],
                    r["judged"],
                    r["seconds"],
                    r["reviews_per_s"],
                    r["bound_per_s"],
                    r["pct_of_bound"],
                ]
                for r in rows
            ],
        )
    )
    advice = recommend(rows)
    print(f"recommendation: {advice}")
    figures = {
        "measured_worker": "stage2",
        "why": "Stage 1 calls no judge in this code (run_stage1 is deterministic); the "
        "Stage 2 worker is measured with every request flagged final_deliverable",
        "latency_s": LATENCY_S,
        "rounds": ROUNDS,
        "goal_pct_of_bound": 80,
        "rows": rows,
        "recommendation": advice,
    }
    path = common.write_results("stage1_io", figures, out_dir)
    print(f"wrote {path}")
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--config",
        action="append",
        metavar="POOL:CONCURRENCY",
        help="e.g. threads:32 (repeatable; default threads 16/32/64 and prefork 2)",
    )
    args = parser.parse_args(argv)
    configs = CONFIGS
    if args.config:
        configs = tuple((p, int(c)) for p, c in (x.split(":") for x in args.config))
    run(configs)


if __name__ == "__main__":
    main()
