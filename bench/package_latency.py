"""In-process review time of outputs that cite nothing: this tree beside a base commit.

Run: ``python -m bench.package_latency [--base main] [--budget 80] [--rounds 4]``.

The issue's bar: an output that names no package and no URL takes today's path and costs
today's time (p95 within +5%). The outputs are public ones that cite nothing (no URL, no
import beyond the standard library, no install line): HumanEval solutions, CPython's
``Lib/*.py``, HaluEval answers, JSON-Schema-Test-Suite documents and sqlglot queries, the
tunable items only (``--budget`` per source). The base commit is exported with
``git archive`` into a temporary folder; both trees review the same requests with the
built-in judge, in processes of this virtual environment, alternating base and branch
round after round (ABBA), each process reviewing every request once to warm up and once
timed. Between the two, what the warm-up left alive is frozen (``gc.freeze``, as a fleet
worker does at boot): a full collection walks every object a process holds, 170-190 ms
for the 380-400 thousand these hold, and where in the timed pass the collector happened
to run one would otherwise decide the p95, not the review's code.
Figures go to ``bench/results/package_latency.json``.
"""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench import common
from bench.public.sources import load
from schemas.request import ReviewRequest
from workers.evaluate.wall.packages.references import references

ROOT = Path(__file__).resolve().parent.parent
SOURCES = (
    "humaneval",
    "cpython-stdlib",
    "halueval-qa",
    "halueval-summarization",
    "halueval-dialogue",
    "json-schema-test-suite",
    "sqlglot-fixtures",
)
_URL = re.compile(r"https?://|doi:|www\.", re.I)
#: Reviews every request once to warm up, then once timed; prints (wall, CPU) ms of each.
WORKER = """
import gc, json, sys, time
import workers
assert workers.__file__.startswith(sys.argv[2]), workers.__file__
from schemas.request import ReviewRequest
from workers.judges.builtin import BuiltinJudge
from workers.review import review
from workers.settings import DEFAULT_PRICING
price, judge = DEFAULT_PRICING["claude-sonnet-4-5"], BuiltinJudge()
requests = [ReviewRequest.model_validate_json(l) for l in open(sys.argv[1])]
for r in requests:
    review(r, judge, stage2_price=price)
gc.collect()
gc.freeze()
times = []
for r in requests:
    started, cpu = time.perf_counter(), time.thread_time()
    review(r, judge, stage2_price=price)
    times.append(((time.perf_counter() - started) * 1000, (time.thread_time() - cpu) * 1000))
print(json.dumps(times))
"""


def citing_nothing(budget: int) -> list[str]:
    """Request lines of good public outputs with no URL and no package use."""
    lines: list[str] = []
    for name in SOURCES:
        for item in load(name, budget).cases:
            if item.label != "good":
                continue
            request = ReviewRequest.model_validate_json(json.dumps(item.request))
            if _URL.search(request.output.content) or references(request.output):
                continue
            lines.append(request.model_dump_json(by_alias=True, exclude_unset=True))
    return lines


def _timed(tree: Path, requests: Path) -> list[tuple[float, float]]:
    done = subprocess.run(
        [sys.executable, "-c", WORKER, str(requests), str(tree)],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=3600,
        check=True,
    )
    return [(float(wall), float(cpu)) for wall, cpu in json.loads(done.stdout)]


def _summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "p50_ms": round(statistics.median(ordered), 3),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 3),
        "mean_ms": round(statistics.fmean(ordered), 3),
    }


def run(base: str, budget: int, rounds: int) -> dict[str, Any]:
    """Time both trees on the same requests, alternating; the ratios of their p95 and p50.

    Wall time is what a caller waits; CPU time (the review thread's) is what the code
    costs, and the fairer of the two on a machine other work shares.
    """
    lines = citing_nothing(budget)
    samples: dict[str, list[tuple[float, float]]] = {"base": [], "branch": []}
    with tempfile.TemporaryDirectory(prefix="package-latency-") as scratch:
        folder = Path(scratch)
        commit = common.export_commit(base, folder / "base")
        requests = folder / "requests.jsonl"
        requests.write_text("\n".join(lines) + "\n", encoding="utf-8")
        trees = {"base": folder / "base", "branch": ROOT}
        for r in range(rounds):
            order = ("base", "branch") if r % 2 == 0 else ("branch", "base")
            for side in order:
                samples[side].extend(_timed(trees[side], requests))
    figures: dict[str, Any] = {}
    for clock, at in (("wall", 0), ("cpu", 1)):
        base_s = _summary([s[at] for s in samples["base"]])
        branch_s = _summary([s[at] for s in samples["branch"]])
        figures[clock] = {
            "base": base_s,
            "branch": branch_s,
            "p95_ratio": round(branch_s["p95_ms"] / base_s["p95_ms"], 4),
            "p50_ratio": round(branch_s["p50_ms"] / base_s["p50_ms"], 4),
        }
    return {
        "base": {"ref": base, "commit": commit},
        **figures,
        "requests": len(lines),
        "rounds": rounds,
        "samples_per_side": len(samples["base"]),
    }


def main(argv: list[str] | None = None) -> None:
    parser = common.command_line(__doc__)
    parser.add_argument("--base", default="main", help="the git ref to compare with")
    parser.add_argument("--budget", type=int, default=80, help="items per source")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args(argv)
    figures = run(args.base, args.budget, args.rounds)
    path = common.write_results("package_latency", figures)
    print(json.dumps(figures, indent=1))
    print(f"written to {path}")


if __name__ == "__main__":
    main()
