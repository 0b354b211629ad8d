"""Reviews/s one Stage 1 worker process sustains against a 200 ms Messages API.

With ``WINDAGS_JUDGE_BACKEND=anthropic`` Stage 1 calls the cheap model for the judged
part of the Wall (``handle_stage1`` -> ``run_stage1(request, wall_judge=...)``, wall
tier = ``stage1_model``), once per review whose output passes the Floor. This measures
that worker: one Stage 1 worker process with the pool and concurrency under test, plus
the fleet's ordinary router worker, so every review still goes stage1 -> router ->
publication on the results stream. No request escalates (an expert skill, cheap
downstream, no hard flags), so Stage 1 is the only caller of the model and no Stage 2
worker runs.

The judge is the real ``AnthropicJudge`` (official SDK, behind the fleet's verdict cache
and its Redis round trips) against ``workers.testing.messages_api.server`` in its own process
(so it shares no GIL with the worker) with 200 ms latency. Every output is unique, so
the content-hash verdict cache (``CachedJudge``) never answers for the model; a result
counts as judged only if it shows the model's tokens and no judge error. The bound is
concurrency / latency: what the pool could do if everything but the model were free.
Rate = N / (last publish - first enqueue), after a warm-up round per configuration.

Pools: threads 16/32/64 and prefork 2 (what the Procfile could run), gevent 100/200 (what
the launcher runs with a model judge), and the gevent rows again against a 1 s model,
whose bound is below what the worker's CPU allows. Each row also gives the CPU each
process used while it ran (% of one core: the Stage 1 worker, the router, the model
server, Redis) and the worker's CPU per review: 1000 / that figure is the most reviews/s
one core can give, whatever the pool. The model server is first measured alone
(``bench.messages_burst``: 100 and 200 raw keep-alive connections at once, its rate
against the same bound), to show it is not what limits the worker.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis

from bench import common, messages_burst
from bench.judge_throughput import LATENCY_S
from schemas.result import ReviewResult
from workers.client import ReviewClient
from workers.fleet.app import create_app
from workers.fleet.queues import Queue
from workers.local.launcher import DEFAULT_CONCURRENCY, worker_command
from workers.results.stream import parse_entry
from workers.settings import Settings

CONFIGS: tuple[tuple[str, int], ...] = (
    ("threads", 16),
    ("threads", 32),
    ("threads", 64),
    ("prefork", 2),
    ("gevent", 100),
    ("gevent", 200),
)
#: The same gevent rows against a slower model (a second a call, as real Wall calls
#: take): their bound is below what the worker's CPU allows, so they show the pool alone.
SLOW_LATENCY_S = 1.0
SLOW_CONFIGS: tuple[tuple[str, int], ...] = (("gevent", 100), ("gevent", 200))
#: Connections of the model-server-alone check (``bench.messages_burst``).
BURSTS = (100, 200)
ROUNDS = 8
TASK = "Summarise how the nightly export bounds its memory use."
JUDGE_ERROR = "JudgeIndeterminate"


def review_objs(dag: str, count: int) -> list[dict[str, Any]]:
    """``count`` non-escalating reviews, each with its own output text."""
    objs = []
    for i in range(count):
        obj = common.review_obj(dag, f"n{i}", task=TASK)
        obj["output"]["content"] = f"{common.SAMPLE_TEXT} Run {dag}, batch report {i}."
        objs.append(obj)
    return objs


def start_worker(
    url: str, env: dict[str, str], queue: Queue, pool: str, concurrency: int
) -> tuple[subprocess.Popen[bytes], str]:
    """One worker process for ``queue`` with ``pool`` and ``concurrency``."""
    name = f"{common.unique(queue.value)}@bench"
    command = worker_command(queue, concurrency=concurrency, name=name, pool=pool)
    proc = subprocess.Popen(
        command,
        env={**os.environ, **env, "WINDAGS_REDIS_URL": url},
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return proc, name


def _wait_ping(settings: Settings, workers: dict[str, subprocess.Popen[bytes]]) -> None:
    probe = create_app(settings)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            for name, proc in workers.items():
                if proc.poll() is not None:
                    raise RuntimeError(f"worker {name} exited with {proc.returncode}")
            replies = probe.control.ping(destination=sorted(workers), timeout=1.0)
            if set(workers) <= {n for reply in replies for n in reply}:
                return
        raise RuntimeError("workers did not answer ping")
    finally:
        probe.close()


def _batch(client: ReviewClient, redis_client: redis.Redis, count: int) -> tuple[float, list[Any]]:
    dag = common.unique("io")
    objs = review_objs(dag, count)
    started = time.time()
    client.submit_many(objs)
    stream = client.settings.keys.results(dag)
    got = common.wait_for_entries(redis_client, stream, count, timeout_s=180)
    if got < count:
        raise RuntimeError(f"only {got} of {count} results arrived")
    raw = common.entries(redis_client, stream)
    last = max(common.entry_ms(i) for i, _ in raw)
    return last / 1000 - started, [parse_entry(f) for _, f in raw]


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of a process and its children so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def judged_by_stage1(result: object) -> bool:
    """A result Stage 1's model judged (its tokens, no judge error) and nothing escalated."""
    return (
        isinstance(result, ReviewResult)
        and result.stage2 is None
        and not result.escalation.escalate
        and result.envelope.tokens.input_tokens > 0
        and not any(i.code == JUDGE_ERROR for i in result.stage1.wall.issues)
    )


def measure(
    url: str,
    env: dict[str, str],
    pool: str,
    concurrency: int,
    others: dict[str, int] | None = None,
    latency_s: float = LATENCY_S,
) -> dict[str, Any]:
    """Throughput of one Stage 1 worker with this pool, against its bound.

    Also the CPU each process used while the batch ran (% of one core): the worker, the
    router, and ``others`` (name -> pid: the model server, Redis), to show what bounds it.
    """
    settings = common.settings_for(url, env)
    stage1, stage1_name = start_worker(url, env, Queue.STAGE1, pool, concurrency)
    router, router_name = start_worker(
        url, env, Queue.ROUTER, "threads", DEFAULT_CONCURRENCY[Queue.ROUTER]
    )
    review_client = ReviewClient(settings)
    client = redis.Redis.from_url(url)
    try:
        _wait_ping(settings, {stage1_name: stage1, router_name: router})
        _batch(review_client, client, concurrency)  # warm-up: imports, HTTP connections
        count = max(concurrency * ROUNDS, 30)
        pids = {"stage1": stage1.pid, "router": router.pid, **(others or {}), "bench": os.getpid()}
        cpu_before = {name: cpu_seconds(pid) for name, pid in pids.items()}
        seconds, results = _batch(review_client, client, count)
        cpu = {name: cpu_seconds(pid) - cpu_before[name] for name, pid in pids.items()}
    finally:
        client.close()
        review_client.close()
        for proc in (stage1, router):
            proc.send_signal(signal.SIGTERM)
        for proc in (stage1, router):
            common.stop_process(proc, grace_s=60)
    rate, bound = count / seconds, concurrency / latency_s
    return {
        "pool": pool,
        "concurrency": concurrency,
        "reviews": count,
        "judged": sum(1 for r in results if judged_by_stage1(r)),
        "escalated": sum(1 for r in results if isinstance(r, ReviewResult) and r.stage2),
        "seconds": round(seconds, 3),
        "reviews_per_s": round(rate, 1),
        "bound_per_s": round(bound, 1),
        "pct_of_bound": round(100 * rate / bound, 1),
        "worker_cpu_ms_per_review": round(1000 * cpu["stage1"] / count, 2),
        "cpu_pct": {name: round(100 * used / seconds, 1) for name, used in cpu.items()},
    }


def recommend(rows: list[dict[str, Any]]) -> str:
    """The pool to run Stage 1 workers with: the most reviews/s per process."""
    best = max(rows, key=lambda r: r["reviews_per_s"])
    prefork = [r for r in rows if r["pool"] == "prefork"]
    versus = (
        f"; prefork c={prefork[0]['concurrency']} gives {prefork[0]['reviews_per_s']}/s"
        if prefork and prefork[0] is not best
        else ""
    )
    goal = "meets" if best["pct_of_bound"] >= 80 else "misses"
    return (
        f"Stage 1 workers: {best['pool']} pool, concurrency {best['concurrency']}: "
        f"{best['reviews_per_s']} reviews/s per process, {best['pct_of_bound']}% of its "
        f"bound ({goal} the 80% goal){versus}"
    )


def _field(*path: str) -> Callable[[dict[str, Any]], object]:
    def get(row: dict[str, Any]) -> object:
        value: Any = row
        for name in path:
            value = value[name]
        return value

    return get


#: The printed table: header and where its cell comes from in a row.
COLUMNS = [
    ("latency", _field("latency_s")),
    ("pool", _field("pool")),
    ("conc", _field("concurrency")),
    ("reviews", _field("reviews")),
    ("judged", _field("judged")),
    ("seconds", _field("seconds")),
    ("reviews/s", _field("reviews_per_s")),
    ("bound", _field("bound_per_s")),
    ("%bound", _field("pct_of_bound")),
    ("cpu ms/review", _field("worker_cpu_ms_per_review")),
    ("cpu% stage1", _field("cpu_pct", "stage1")),
    ("router", _field("cpu_pct", "router")),
    ("server", _field("cpu_pct", "model_server")),
    ("redis", _field("cpu_pct", "redis")),
]


def _measure_at(
    latency_s: float, configs: tuple[tuple[str, int], ...], bursts: tuple[int, ...]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The model server alone (``bursts``), then each configuration, at ``latency_s``."""
    with (
        common.messages_api_process(latency_s) as (server, base_url),
        common.private_redis() as redis_server,
    ):
        alone = [messages_burst.measure(base_url, "test-key", latency_s, k) for k in bursts]
        assert redis_server.process is not None
        others = {"model_server": server.pid, "redis": redis_server.process.pid}
        env = common.fleet_env(
            common.unique("io"),
            WINDAGS_JUDGE_BACKEND="anthropic",
            WINDAGS_ANTHROPIC_API_KEY="test-key",
            WINDAGS_ANTHROPIC_BASE_URL=base_url,
            WINDAGS_JUDGE_TIMEOUT_S="10",
        )
        rows = [
            {"latency_s": latency_s, **measure(redis_server.url, env, pool, c, others, latency_s)}
            for pool, c in configs
        ]
    return rows, [{"latency_s": latency_s, **b} for b in alone]


def run(
    configs: tuple[tuple[str, int], ...] = CONFIGS,
    *,
    slow_configs: tuple[tuple[str, int], ...] = SLOW_CONFIGS,
    bursts: tuple[int, ...] = BURSTS,
    out_dir: Path | None = None,
) -> dict[str, Any]:
    """Every pool configuration; print the tables, write ``stage1_io.json``."""
    rows, server_alone = _measure_at(LATENCY_S, configs, bursts)
    if slow_configs:
        slow_rows, _ = _measure_at(SLOW_LATENCY_S, slow_configs, ())
        rows += slow_rows
    print(common.table([h for h, _ in COLUMNS], [[get(r) for _, get in COLUMNS] for r in rows]))
    if server_alone:
        print("model server alone (raw keep-alive requests, no worker running):")
        heads = ["latency_s", "connections", "requests", "seconds", "requests_per_s"]
        heads += ["bound_per_s", "pct_of_bound"]
        print(common.table(heads, [[b[h] for h in heads] for b in server_alone]))
    fast = [r for r in rows if r["latency_s"] == LATENCY_S]
    advice = recommend(fast) if fast else f"no rows at {LATENCY_S} s to recommend from"
    print(f"recommendation: {advice}")
    figures = {
        "measured_worker": "stage1",
        "why": "with a model judge Stage 1 calls the cheap model for the Wall; one Stage 1 "
        "worker is measured, the router and publication run, nothing escalates",
        "latency_s": LATENCY_S,
        "rounds": ROUNDS,
        "router_concurrency": DEFAULT_CONCURRENCY[Queue.ROUTER],
        "goal_pct_of_bound": 80,
        "rows": rows,
        "model_server_alone": server_alone,
        "recommendation": advice,
    }
    return common.publish("stage1_io", figures, out_dir)


def main(argv: list[str] | None = None) -> None:
    parser = common.command_line(__doc__)
    parser.add_argument(
        "--config",
        action="append",
        metavar="POOL:CONCURRENCY",
        help="e.g. threads:32 (repeatable; default threads 16/32/64, prefork 2, gevent "
        "100/200, and gevent 100/200 at 1 s; given, only these at 200 ms)",
    )
    args = parser.parse_args(argv)
    if args.config:
        configs = tuple((p, int(c)) for p, c in (x.split(":") for x in args.config))
        run(configs, slow_configs=())
    else:
        run()


if __name__ == "__main__":
    main()
