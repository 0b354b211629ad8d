"""The soak's section of ``docs/capacity.md``, written from ``bench/results/soak.json``.

``python -m bench.capacity`` appends it to the page it writes (and ``--check`` compares
it); nothing in it is typed by hand but the words around the figures.
"""

from __future__ import annotations

from typing import Any

from bench.soak import SHARE_OF_OVERHEAD
from bench.soak_mix import MALFORMED_EVERY, PER_DAG, Kind


def _mean(soak: dict[str, Any], field: str) -> float:
    return sum(float(r[field]) for r in soak["series"]) / len(soak["series"])


def _share(kind: Kind) -> str:
    return f"{PER_DAG[kind] / sum(PER_DAG.values()):.0%}"


def _row(label: str, first: float, last: float, unit: str) -> str:
    change = f"{last / first - 1:+.1%}" if first else "n/a"
    return f"| {label} | {first:,.1f} {unit} | {last:,.1f} {unit} | {change} |"


def render(soak: dict[str, Any], overhead: dict[str, Any]) -> str:
    """The section, from the soak's figures and ``bench.overhead``'s (the default rate)."""
    first, last = soak["first_window"], soak["last_window"]
    fleet_per_s = float(overhead["fleet"]["per_s"])
    neighbours = _mean(soak, "neighbour_cores")
    settings = ", ".join(f"`{k}={v}`" for k, v in soak["settings"].items())
    rows = [
        _row("end-to-end p99", soak["p99_ms_first_window"], soak["p99_ms_last_window"], "ms"),
        *(
            _row(f"{worker} worker RSS", soak["worker_rss_mb_first_window"][worker], rss, "MiB")
            for worker, rss in sorted(soak["worker_rss_mb_last_window"].items())
        ),
        _row(
            "Redis `used_memory`",
            soak["redis_used_memory_mb_first_window"],
            soak["redis_used_memory_mb_last_window"],
            "MiB",
        ),
        _row(
            "neighbours' CPU (not the fleet's)",
            soak["neighbour_cores_first_window"],
            soak["neighbour_cores_last_window"],
            "cores",
        ),
    ]
    lines = [
        "## Long runs: the soak",
        "",
        f"`python -m bench.soak --minutes {soak['minutes']} --rate {soak['rate_per_s']:g}` ran "
        f"a local fleet (one worker per queue, the built-in judge, a private Redis) for "
        f"{soak['minutes']} minutes at {soak['rate_per_s']:g} reviews/s (achieved "
        f"{soak['achieved_per_s']:g}/s: {soak['submitted']:,} reviews in {soak['dags']:,} "
        f"DAGs). The mix: {_share(Kind.ACCEPTED)} accepted, {_share(Kind.ITERATED)} sent back "
        f"to iterate, {_share(Kind.STAGE2)} escalated to Stage 2, {_share(Kind.HUMAN)} to a "
        f"person (the soak accepts each a few seconds later: {soak['human_verdicts']:,} "
        f"verdicts), and one malformed raw message per {MALFORMED_EVERY * sum(PER_DAG.values())}"
        f" reviews ({soak['raw_messages']:,}). What the fleet keeps for a time was kept for "
        "minutes instead of days, with the time limits nested under a visibility timeout of "
        "seconds, and what it keeps up to a count (the outcomes per skill and evaluator) "
        f"was capped lower ({settings}), so that everything reached its steady size within "
        f"the {soak['warmup_minutes']}-minute warm-up: what the soak shows growing would grow "
        "for weeks.",
        "",
        f"The rate: `bench.overhead` puts the fleet at {fleet_per_s:,.0f} reviews/s on this "
        f"machine (one burst of small accepted reviews with the machine to itself), and "
        f"the soak's default is {SHARE_OF_OVERHEAD:.0%} of that, "
        f"{SHARE_OF_OVERHEAD * fleet_per_s:,.0f}/s. This machine is shared: other work used "
        f"{neighbours:.2f} of its {soak['cpus']} cores on average through the run (the "
        f"fleet and Redis {_mean(soak, 'fleet_cores'):.2f}), so the run held a rate the "
        "fleet could keep up with beside it.",
        "",
        f"**Lost: {soak['lost']}. Duplicated: {soak['duplicated']}** (every review, verdict "
        "and raw message counted by identity: its review key on its DAG's stream, its digest "
        "in the quarantine).",
        "",
        f"| measure | minutes {first[0] + 1}-{first[1]} (first window after the warm-up) | "
        f"minutes {last[0] + 1}-{last[1]} (last window) | change |",
        "|---|---|---|---|",
        *rows,
        "",
        "Worker memory is each worker's whole process tree; the neighbours' CPU is the "
        "machine's busy time less the fleet's and Redis's, sampled each minute beside the "
        "latency (this machine is shared), so that a p99 moved by another tenant can be told "
        "from one moved by the fleet. The per-minute series (queues, `unacked`, the reserved "
        "sets, the quarantine, dead letters, pending human reviews, keys by kind) is in "
        "`bench/results/soak.json`; the plot is `bench/results/soak.png`.",
        "",
        "What earlier runs of the soak found growing, and what became of it:",
        "",
        "- Every DAG's results stream stayed in Redis for good: `MINID` trims a stream only "
        "when an entry is added, and a finished DAG adds none. A stream now expires a "
        "retention window after its newest entry (the publish and verdict scripts).",
        "- The Stage 2 worker's memory rose at every calibration refit: the refit (on the "
        "Stage 2 workers) reads every kept outcome at once, and the outcome lists grow until "
        "each holds `WINDAGS_OUTCOMES_KEPT`. It stops there; a Stage 2 worker's memory is "
        "sized for the refit over all skills' outcomes at that cap.",
        "",
    ]
    return "\n".join(lines)
