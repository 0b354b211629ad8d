"""Fleet throughput of this checkout against another commit's, run after run in one go.

Run: ``python -m bench.overhead_pairs --against REF [--pairs 6] [--n 2000]``.

A change that costs a few per cent of throughput hides in the spread between two runs of
``bench.overhead`` on a shared machine, so the two checkouts run in turns: each run is
``bench.overhead``'s fleet part (``run_fleet``: N reviews after a warm-up, on a private
Redis, with the fleet's own workers), in a process of its own whose ``PYTHONPATH`` is the
checkout it measures. REF is exported (``git archive``) into a temporary folder.
The order alternates (ABBA...), so that a machine getting busier or quieter during the run
weighs on both alike; each pair gives one ratio, and the median ratio is the figure.

Both checkouts run on this interpreter and its installed packages: a REF that needs other
dependencies is not comparable this way.

Writes ``bench/results/overhead_pairs.json``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import common

NAME = "overhead_pairs"
HERE = common.REPO_ROOT
#: One run, in the checkout on ``PYTHONPATH``: the reviews per second it printed last.
_ONE_RUN = """
import json, sys
from bench import common
from bench.overhead import run_fleet
with common.private_redis() as server:
    env = common.fleet_env(common.unique("pairs"))
    with common.running_fleet(server.url, env):
        figures = run_fleet(server.url, common.settings_for(server.url, env), int(sys.argv[1]),
                            timeout_s=600)
print(json.dumps(figures))
"""


def _head() -> str:
    """This checkout's commit, marked when tracked files differ from it."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=HERE, capture_output=True, text=True, check=True, timeout=120
        ).stdout.strip()

    dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    return git("rev-parse", "HEAD") + ("+uncommitted changes" if dirty else "")


def one_run(checkout: Path, n: int) -> float:
    """Reviews per second of the fleet of ``checkout``, in a process of its own."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run(
        [sys.executable, "-c", _ONE_RUN, str(n)],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    if done.returncode != 0:
        raise RuntimeError(f"a run in {checkout} failed:\n{done.stderr[-2000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return float(figures["per_s"])


def measure(against: str, pairs: int, n: int) -> dict[str, Any]:
    """``pairs`` runs of each checkout in ABBA order; the ratio of each pair."""
    runs: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="windags-pairs-") as folder:
        other = Path(folder)
        commit = common.export_commit(against, other)
        for i in range(pairs):
            order = [("current", HERE), ("against", other)]
            pair: dict[str, float] = {}
            for label, checkout in order if i % 2 == 0 else reversed(order):
                pair[label] = one_run(checkout, n)
                print(f"pair {i + 1}/{pairs}: {label} {pair[label]:.1f} reviews/s", flush=True)
            runs.append(pair)
    ratios = [round(p["current"] / p["against"], 3) for p in runs]
    return {
        "n": n,
        "current": _head(),
        "against": commit,
        "reviews_per_s": runs,
        "ratios_current_over_against": ratios,
        "median_ratio": round(statistics.median(ratios), 3),
        "pairs_current_faster": sum(r > 1 for r in ratios),
        "load_average_1m_at_end": round(os.getloadavg()[0], 1),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = common.command_line(__doc__)
    parser.add_argument("--against", required=True, help="the git commit or ref to compare with")
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--n", type=int, default=2000)
    options = parser.parse_args(argv)
    figures = common.publish(NAME, measure(options.against, options.pairs, options.n))
    print(
        f"current/against: median {figures['median_ratio']}, per pair "
        f"{figures['ratios_current_over_against']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
