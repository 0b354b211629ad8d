"""How many concurrent judge calls one process sustains against a 200 ms Messages API.

Starts ``workers.testing.messages_api.server`` in a subprocess (so the server does not share
this process's GIL), then runs AnthropicJudge calls from N threads for N in 8/32/64.
The bound is N / latency: what a pool of N threads could do if the judge cost nothing.
"""

from __future__ import annotations

import json
import platform
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pydantic import SecretStr

from bench import common
from schemas.judging import JudgeTask, JudgeTier
from schemas.quality import CEILING_DIMENSIONS
from schemas.request import NodeOutput, OutputKind
from workers.judges.anthropic_judge import AnthropicJudge
from workers.settings import Settings

LATENCY_S = 0.2
THREADS = (8, 32, 64)
ROUNDS = 12
RESULTS = Path(__file__).parent / "results" / "judge_throughput.json"


def task(i: int) -> JudgeTask:
    return JudgeTask(
        tier=JudgeTier.CEILING,
        dimensions=CEILING_DIMENSIONS,
        output=NodeOutput(kind=OutputKind.TEXT, content=f"output number {i}"),
    )


def measure(judge: AnthropicJudge, threads: int) -> dict[str, float]:
    calls = threads * ROUNDS
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda i: judge.evaluate(task(-i - 1)), range(threads)))  # warm up
        started = time.perf_counter()
        verdicts = list(pool.map(lambda i: judge.evaluate(task(i)), range(calls)))
        seconds = time.perf_counter() - started
    assert all(v.calls == 1 for v in verdicts)
    rate, bound = calls / seconds, threads / LATENCY_S
    return {
        "threads": threads,
        "calls": calls,
        "seconds": round(seconds, 3),
        "calls_per_s": round(rate, 1),
        "bound_per_s": bound,
        "pct_of_bound": round(100 * rate / bound, 1),
    }


def main() -> None:
    with common.messages_api_process(LATENCY_S) as (_, base_url):
        settings = Settings(
            anthropic_api_key=SecretStr("test-key"), anthropic_base_url=base_url, judge_timeout_s=10
        )
        with AnthropicJudge(settings, max_connections=max(THREADS)) as judge:
            rows = [measure(judge, n) for n in THREADS]
    print(f"{'threads':>7} {'calls':>6} {'seconds':>8} {'calls/s':>8} {'bound':>6} {'%bound':>7}")
    for r in rows:
        print(
            f"{r['threads']:>7} {r['calls']:>6} {r['seconds']:>8.2f} {r['calls_per_s']:>8.1f} "
            f"{r['bound_per_s']:>6.0f} {r['pct_of_bound']:>6.1f}%"
        )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "latency_s": LATENCY_S,
                "rounds": ROUNDS,
                "python": platform.python_version(),
                "machine": platform.machine(),
                "rows": rows,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
