"""Sentinel failover, run again and again: the figures the deployment guides quote.

Run: ``python -m bench.failover --runs N`` (each run is
``tests/faults/test_sentinel_failover.py``: a primary SIGKILLed under 1,000 reviews; 35 to 50
s on a 2-core machine), or ``python -m bench.failover [--check]`` to write (or check) the
pages' blocks from the runs already recorded.

Each run's figures (what ``record`` writes to ``faults.json``) are appended to
``bench/results/failover.json``; ``docs/how-to/sentinel-and-cluster.md`` quotes their ranges,
and ``docs/how-to/kubernetes.md`` how soon the reserved sets were empty, between markers, so
no failover figure there is typed by hand (a test runs the check).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from bench.figure_text import paragraph
from bench.generated import write_or_check
from bench.readme_figures import updated

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "failover.json"
FAULTS = ROOT / "bench" / "results" / "faults.json"
TEST = "tests/faults/test_sentinel_failover.py"
COMMAND = "python -m bench.failover"


def _markers(name: str) -> tuple[str, str]:
    return (f"<!-- {name} figures: written by {COMMAND} -->", f"<!-- end of {name} figures -->")


def runs() -> list[dict[str, Any]]:
    """The runs recorded so far, oldest first."""
    if not RESULTS.exists():
        return []
    recorded: list[dict[str, Any]] = json.loads(RESULTS.read_text(encoding="utf-8"))["runs"]
    return recorded


def run_once() -> dict[str, Any]:
    """One run of the failover test, with its figures written; those figures."""
    env = {**os.environ, "WINDAGS_WRITE_FIGURES": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", TEST],
        cwd=ROOT,
        env=env,
        check=False,
    )
    figures: dict[str, Any] = json.loads(FAULTS.read_text(encoding="utf-8"))["sentinel_failover"]
    return {**figures, "passed": done.returncode == 0}


def _span(values: Sequence[float | int | None], unit: str = "") -> str:
    seen = [v for v in values if v is not None]
    if not seen:
        return "not measured"
    low, high = min(seen), max(seen)
    return f"{low}{unit}" if low == high else f"{low} to {high}{unit}"


def reserved_sets(recorded: list[dict[str, Any]]) -> str:
    """The sentence on the reserved sets after a failover."""
    return (
        f"In {len(recorded)} runs (`{COMMAND} --runs N`, `bench/results/failover.json`) they "
        "were empty "
        f"{_span([r['reserved_sets_empty_after_kill_s'] for r in recorded], ' s')} after the "
        "kill."
    )


def measured(recorded: list[dict[str, Any]]) -> str:
    """The paragraph of failover figures."""
    reviews = {r["reviews"] for r in recorded}
    results = [r["results"] for r in recorded]
    every = "every time" if set(results) == reviews else f"({_span(results)} per run)"
    return (
        f"In {len(recorded)} runs ({sum(r['passed'] for r in recorded)} passed) on this 2-core "
        f"machine, {max(reviews)} of {max(reviews)} reviews on their stream {every}; "
        f"{_span([r['lost'] for r in recorded])} lost, "
        f"{_span([r['duplicated'] for r in recorded])} duplicated, "
        f"{_span([r['errors'] for r in recorded])} error entries; the Sentinels named the "
        "replica primary "
        f"{_span([r['new_primary_named_after_s'] for r in recorded], ' s')} after the kill, the "
        f"first result was published {_span([r['first_result_after_kill_s'] for r in recorded])}"
        f" s after it, the last {_span([r['all_done_after_kill_s'] for r in recorded])} s after "
        f"it; {_span([r['batches_refused_and_resubmitted'] for r in recorded])} batch(es) refused "
        "during the failover and submitted again; "
        f"{_span([r['of_those_lost_in_failover'] for r in recorded])} of the entries read from "
        "the stream just before the kill missing afterwards. A run takes "
        f"{_span([r['run_s'] for r in recorded], ' s')}."
    )


#: Each block's page, and the sentence it holds.
PAGES: dict[str, tuple[Path, Callable[[list[dict[str, Any]]], str]]] = {
    "failover-reserved": (ROOT / "docs" / "how-to" / "kubernetes.md", reserved_sets),
    "failover": (ROOT / "docs" / "how-to" / "sentinel-and-cluster.md", measured),
}


def render(name: str, page: str) -> str:
    """``page`` with block ``name`` written from the recorded runs."""
    recorded = runs()
    sentence = PAGES[name][1]
    start, end = _markers(name)
    body = sentence(recorded) if recorded else f"Not measured yet: run `{COMMAND} --runs 5`."
    return updated(page, f"{start}\n{paragraph(body)}\n{end}", start, end)


def main(argv: Sequence[str] | None = None) -> int:
    """Record ``--runs`` runs, then write (or ``--check``) the pages' blocks."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=0, help="runs of the failover test to add")
    parser.add_argument("--check", action="store_true", help="exit 1 if a page is stale")
    args = parser.parse_args(argv)
    recorded = runs()
    for index in range(args.runs):
        recorded.append(run_once())
        RESULTS.write_text(json.dumps({"runs": recorded}, indent=1) + "\n", encoding="utf-8")
        print(f"run {index + 1} of {args.runs}: {recorded[-1]}")
    check = ["--check"] if args.check else []
    failed = 0
    for name, (page, _) in PAGES.items():
        failed |= write_or_check(page, partial(render, name), COMMAND, check)
    return failed


if __name__ == "__main__":
    raise SystemExit(main())
