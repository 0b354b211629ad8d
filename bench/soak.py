"""A soak: a local fleet under steady load for minutes, watched for anything that grows.

Run: ``python -m bench.soak --minutes M --rate R``. It starts a private Redis and the
three workers (the built-in judge), then submits the fixed mix of ``bench.soak_mix`` at
R reviews/s (default: 60% of the fleet's rate in ``bench/results/overhead.json``), whole
DAGs at a time, with a person who accepts each review escalated to them a few seconds
later. Each minute it records the end-to-end p50 and p99 of what was published in it,
each worker's RSS, Redis ``used_memory``, the queues, ``unacked`` and the reserved sets,
the quarantine, dead letters and the pending human reviews, and the machine's load (the
fleet's cores and the neighbours'). After the load it drains, counts every review,
verdict and raw message by identity (lost, duplicated), and writes
``bench/results/soak.json`` and ``soak.png``; ``python -m bench.capacity`` puts the
figures in ``docs/capacity.md``.

Retention windows are shortened (``SOAK_ENV``: minutes, not days) so that everything
the fleet keeps by age reaches its steady size within the warm-up; a run of minutes then
shows what a run of weeks would grow.
"""

from __future__ import annotations

import heapq
import json
import threading
import time
from pathlib import Path
from typing import Any

import redis

from bench import common
from bench.soak_mix import DAG_NODES, MALFORMED_EVERY, dag_reviews, malformed
from bench.soak_probe import CpuMeter, cpu_s, redis_figures, rss_mb, session_pids
from bench.soak_report import minute_row, plot, summary
from bench.soak_watch import LINGER_S, Watch
from schemas.human import VerdictAction, VerdictInput
from workers.client import ReviewClient
from workers.human.verdicts import RecordStatus, VerdictRefusedError
from workers.local.launcher import LocalFleet
from workers.settings import Settings
from workers.testing.limits import SHORT_LIMITS

#: Every window the fleet keeps things for, cut from days to minutes: streams, dedup
#: keys, caches, outcomes, and the try counters (four visibility timeouts), with the time
#: limits that nest under that visibility timeout (the built-in judge needs seconds); and
#: the outcomes kept per skill and evaluator, cut from 10,000 (a list of each reaches it).
SOAK_ENV = {
    "WINDAGS_OUTCOMES_KEPT": "500",
    "WINDAGS_STREAM_RETENTION_S": "120",
    "WINDAGS_DEDUP_TTL_S": "150",
    "WINDAGS_JUDGE_CACHE_TTL_S": "120",
    "WINDAGS_OUTCOME_RETENTION_S": "120",
    "WINDAGS_CALIBRATION_REFIT_S": "120",
    **SHORT_LIMITS,
}
#: Fraction of ``bench.overhead``'s fleet rate the soak runs at by default.
SHARE_OF_OVERHEAD = 0.6
PERSON_DELAY_S = 3.0
PERSON_TRIES = 20
DRAIN_S = 180.0


class Person:
    """Accepts each review escalated to a person ``PERSON_DELAY_S`` after it asked."""

    def __init__(self, client: ReviewClient) -> None:
        self.client = client
        self.recorded = 0
        self.refused: list[str] = []
        self._due: list[tuple[float, int, str]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="soak-person", daemon=True)

    def ask(self, key: str, tries: int = 0) -> None:
        """Decide ``key`` later (called by the watch when its result asks for a person)."""
        with self._lock:
            heapq.heappush(self._due, (time.monotonic() + PERSON_DELAY_S, tries, key))

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            with self._lock:
                due = []
                while self._due and self._due[0][0] <= time.monotonic():
                    due.append(heapq.heappop(self._due))
            for _, tries, key in due:
                self._decide(key, tries)

    def _decide(self, key: str, tries: int) -> None:
        dag, node, attempt = key.rsplit(":", 2)
        verdict = VerdictInput(action=VerdictAction.ACCEPT, comment="soak")
        try:
            self.client.record_verdict(dag, node, int(attempt), verdict, reviewer="soak")
            self.recorded += 1
        except VerdictRefusedError as exc:
            # Queued for a person just after its entry: not waiting yet, ask again.
            if exc.recorded.status is RecordStatus.MISSING and tries < PERSON_TRIES:
                self.ask(key, tries + 1)
            else:
                self.refused.append(str(exc))


class Load:
    """Submits whole DAGs of the mix at a steady rate, and a raw message now and then."""

    def __init__(self, client: ReviewClient, db: redis.Redis, watch: Watch, rate: float) -> None:
        self.client, self.db, self.watch, self.rate = client, db, watch, rate
        self.sent = 0
        self.dags = 0
        self.behind_s = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="soak-load", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=60)

    def _run(self) -> None:
        started = time.monotonic()
        while not self._stop.is_set():
            due_s = started + (self.dags + 1) * DAG_NODES / self.rate
            wait_s = due_s - time.monotonic()
            if wait_s > 0 and self._stop.wait(wait_s):
                return
            self.behind_s = max(self.behind_s, -wait_s)
            self._send_dag()

    def _send_dag(self) -> None:
        dag_id = common.unique("soak")
        reviews = dag_reviews(dag_id)
        at = time.time()
        self.client.submit_many([r.body for r in reviews])
        self.watch.submitted(dag_id, reviews, at)
        self.sent += len(reviews)
        if self.dags % MALFORMED_EVERY == 0:
            queue, data = malformed(self.dags // MALFORMED_EVERY)
            self.watch.pushed_raw(queue.value, data)
            self.db.lpush(self.client.settings.keys.queue(queue.value), data)
        self.dags += 1


def _sample(
    fleet: LocalFleet, db: redis.Redis, settings: Settings, meter: CpuMeter, redis_pid: int
) -> dict[str, Any]:
    """The state of the fleet, Redis and the machine, now."""
    sessions = {q.value: session_pids(p.pid) for q, p in fleet.workers.items()}
    ours = [pid for pids in sessions.values() for pid in pids] + [redis_pid]
    return {
        "worker_rss_mb": {q: round(rss_mb(pids), 1) for q, pids in sessions.items()},
        **redis_figures(db, settings.keys),
        **meter.read(cpu_s(ours)),
    }


def run(
    minutes: int,
    rate: float,
    *,
    warmup: int,
    window: int,
    out_dir: Path | None = None,
    extra_env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Soak a fleet for ``minutes`` at ``rate``; write and return the figures.

    ``extra_env``: more environment for the workers (a setting tried against the default).
    """
    with common.private_redis() as server:
        assert server.process is not None
        env = common.fleet_env(common.unique("soak"), **SOAK_ENV, **(extra_env or {}))
        settings = common.settings_for(server.url, env)
        db = redis.Redis.from_url(server.url)
        client = ReviewClient(settings)
        person = Person(client)
        watch = Watch(db, settings.keys, person.ask)
        load = Load(client, db, watch, rate)
        states: list[dict[str, Any]] = []
        with common.running_fleet(server.url, env) as fleet:
            meter = CpuMeter()
            meter.read(0.0)
            start = time.time()
            person.start()
            load.start()
            sent_before = 0
            for minute in range(minutes):
                _watch_until(watch, start + 60 * (minute + 1))
                state = _sample(fleet, db, settings, meter, server.process.pid)
                states.append({"submitted": load.sent - sent_before, **state})
                sent_before = load.sent
                print(json.dumps({"minute": minute + 1, **states[-1]}), flush=True)
            load.stop()
            drained = _drain(watch)
            person.stop()
        client.close()
        db.close()
    series = [
        minute_row(m, _published_in(watch, start, m), s.pop("submitted"), s)
        for m, s in enumerate(states)
    ]
    figures = {
        "minutes": minutes,
        "rate_per_s": rate,
        "achieved_per_s": round(load.sent / (60 * minutes), 1),
        "submitted": load.sent,
        "dags": load.dags,
        "raw_messages": len(watch.raw_sent),
        "human_verdicts": person.recorded,
        "verdicts_refused": len(person.refused),
        "lost": len(watch.lost()),
        "duplicated": len(watch.duplicated()),
        "stray": len(watch.stray()),
        "drained_s": drained,
        "load_behind_s_max": round(load.behind_s, 2),
        "decisions": dict(watch.decisions),
        "settings": SOAK_ENV,
        "extra_env": extra_env or {},
        **summary(series, watch.latencies, start, warmup=warmup, size=window),
        "series": series,
    }
    out = common.publish("soak", figures, out_dir)
    plot(figures, (out_dir or common.RESULTS_DIR) / "soak.png")
    return out


def _watch_until(watch: Watch, until_s: float) -> None:
    while time.time() < until_s:
        watch.poll()
        time.sleep(min(0.5, max(0.0, until_s - time.time())))


def _drain(watch: Watch) -> float | None:
    """Read until every DAG is finished and lingered; seconds taken, None at the bound."""
    started = time.monotonic()
    while watch.open_dags and time.monotonic() - started < DRAIN_S + LINGER_S:
        watch.poll()
        time.sleep(0.5)
    return None if watch.open_dags else round(time.monotonic() - started, 1)


def _published_in(watch: Watch, start_s: float, minute: int) -> list[float]:
    low, high = start_s + 60 * minute, start_s + 60 * (minute + 1)
    return [ms for at, ms in watch.latencies if low <= at < high]


def default_rate() -> float:
    """``SHARE_OF_OVERHEAD`` of the fleet's reviews/s in ``bench/results/overhead.json``."""
    figures = json.loads((common.RESULTS_DIR / "overhead.json").read_text())
    return round(SHARE_OF_OVERHEAD * float(figures["fleet"]["per_s"]))


def main(argv: list[str] | None = None) -> None:
    parser = common.command_line(__doc__)
    parser.add_argument("--minutes", type=int, default=20)
    parser.add_argument("--rate", type=float, default=None, help="reviews/s (default: 60%%)")
    parser.add_argument("--warmup", type=int, default=4, help="minutes left out of growth")
    parser.add_argument("--window", type=int, default=3, help="minutes per compared window")
    parser.add_argument("--out", type=Path, default=None, help="folder for soak.json/png")
    parser.add_argument(
        "--env", action="append", default=[], metavar="NAME=VALUE", help="for the workers"
    )
    args = parser.parse_args(argv)
    run(
        args.minutes,
        args.rate or default_rate(),
        warmup=args.warmup,
        window=args.window,
        out_dir=args.out,
        extra_env=dict(item.split("=", 1) for item in args.env),
    )


if __name__ == "__main__":
    main()
