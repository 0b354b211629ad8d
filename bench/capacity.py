"""What a fleet reviewing 10,000 nodes/s needs, derived from the measured figures.

Run: ``python -m bench.capacity [--check]``; it writes ``docs/capacity.md``.

Inputs, all measured on this repository's benchmarks (``bench/results``):

- ``redis_cost.json`` (``python -m bench.redis_cost``): per accepted and per escalated
  node, round trips, commands, Redis CPU; the built-in judge's worker CPU per review of
  each worker kind; the Redis connections each worker process holds.
- ``stage1_io.json`` (``python -m bench.stage1_io``): one Stage 1 process with a model
  judge (200 ms per call), its reviews/s and CPU per review, best pool.
- ``judge_throughput.json`` (``python -m bench.judge_throughput``): Stage 2 judge calls/s
  per process against the same latency.
- ``soak.json`` (``python -m bench.soak``): a fleet under steady load for 20+ minutes,
  its memory and latency first and last (``bench/soak_page.py`` writes that section).

Assumptions, stated in the page: the share of nodes escalated, the utilisation a process
or a Redis core is run at, Redis's default ``maxclients``. ``--check`` exits 1 when the
page differs from what the figures give (a test runs it).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import soak_page
from bench.generated import write_or_check
from bench.redis_items import LEFT_OUT

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
DOC = ROOT / "docs" / "capacity.md"

RATE_PER_S = 10_000
#: Share of nodes the router sends to Stage 2: an assumption, as the hard rules and the
#: formula decide it per DAG (what the public evaluation escalates, source by source, is its
#: ``good_escalated`` and ``caught_or_escalated`` in ``public_eval.json``: not copied here).
ESCALATED = 0.10
#: The most of one core a worker process or a Redis primary is planned at.
UTILISATION = 0.7
MAXCLIENTS = 10_000
#: The run of ``redis_cost.json`` the page is derived from, and the ones it is compared with:
#: the code before issue 22's cuts, and the code before the last cut measured back to back
#: with ``RUN`` (CPU time moves with the machine's load; counts barely do).
RUN, BASELINES = "issue-39", ("before", "head-395e547")
#: Commands that only the broker runs: kombu's queue lists, ``unacked``, its index and
#: the reserved sets, taking (``BLMOVE``, the take script's pops) and acking (``MULTI``).
BROKER_COMMANDS = frozenset(
    {"blmove", "brpop", "rpop", "lpush", "rpush", "zadd", "zrem", "hexists", "hset", "hdel"}
    | {"multi", "exec", "zremrangebyscore", "zrange", "zrangebyscore", "publish", "llen"}
)


def broker_share(figures: dict[str, Any]) -> float:
    """The broker's share of a node's commands; each publish script counted as state."""
    calls: dict[str, float] = figures["commands_by_name"]
    total = sum(calls.values())
    broker = sum(n for name, n in calls.items() if name in BROKER_COMMANDS)
    broker += calls.get("evalsha", 0.0) - 1.0  # one publish per node; the rest are takes
    # The take records a delivery with HSETNX; the publish script writes one attempt record.
    broker += max(0.0, calls.get("hsetnx", 0.0) - 1.0)
    return broker / total


def load(name: str) -> dict[str, Any]:
    """One results file."""
    loaded: dict[str, Any] = json.loads((RESULTS / name).read_text(encoding="utf-8"))
    return loaded


def mix(accept: float, escalated: float) -> float:
    """A per-node figure over the planned mix of accepted and escalated nodes."""
    return (1 - ESCALATED) * accept + ESCALATED * escalated


def processes(rate_per_s: float, cpu_ms: float) -> int:
    """Processes of one core each (Python's GIL) for ``rate_per_s`` at ``cpu_ms`` each."""
    return math.ceil(rate_per_s * cpu_ms / 1000 / UTILISATION)


def model(cost: dict[str, Any], stage1_io: dict[str, Any], judge: dict[str, Any]) -> dict[str, Any]:
    """The capacity figures for ``RATE_PER_S`` nodes/s."""
    run = cost["runs"][RUN]
    accept, escalated = run["accept"], run["escalated"]
    to_stage2 = RATE_PER_S * ESCALATED
    redis_ms = mix(accept["redis_cpu_ms"], escalated["redis_cpu_ms"])
    redis_ms_median = mix(accept["redis_cpu_ms_median"], escalated["redis_cpu_ms_median"])
    trips = mix(accept["round_trips"], escalated["round_trips"])
    best_stage1 = max(
        (r for r in stage1_io["rows"] if r["pool"] != "prefork"), key=lambda r: r["reviews_per_s"]
    )
    best_judge = max(judge["rows"], key=lambda r: r["calls_per_s"])
    accept_router = accept["worker_cpu_ms"]["router"]
    builtin = {
        "stage1": processes(RATE_PER_S, accept["worker_cpu_ms"]["stage1"]),
        "router": processes(RATE_PER_S, mix(accept_router, escalated["worker_cpu_ms"]["router"])),
        "stage2": processes(to_stage2, escalated["worker_cpu_ms"]["stage2"]),
    }
    with_model = {
        "stage1": math.ceil(RATE_PER_S / best_stage1["reviews_per_s"]),
        "router": builtin["router"],
        "stage2": math.ceil(to_stage2 / best_judge["calls_per_s"]),
    }
    connections = run["connections"]
    clients = {
        name: sum(count[q] * connections[q] for q in connections)
        for name, count in (("built-in", builtin), ("model", with_model))
    }
    share = mix(broker_share(accept), broker_share(escalated))
    cores = RATE_PER_S * redis_ms / 1000
    return {
        "broker_share": share,
        "broker_primaries": math.ceil(cores * share / UTILISATION),
        "state_primaries": math.ceil(cores * (1 - share) / UTILISATION),
        "redis_ms": redis_ms,
        "redis_ms_median": redis_ms_median,
        "round_trips": trips,
        "redis_cores": cores,
        "primaries": math.ceil(RATE_PER_S * redis_ms / 1000 / UTILISATION),
        "primaries_median": math.ceil(RATE_PER_S * redis_ms_median / 1000 / UTILISATION),
        "round_trips_per_s": RATE_PER_S * trips,
        "builtin": builtin,
        "with_model": with_model,
        "best_stage1": best_stage1,
        "best_judge": best_judge,
        "clients": clients,
    }


def render(cost: dict[str, Any], stage1_io: dict[str, Any], judge: dict[str, Any]) -> str:
    """The page."""
    m = model(cost, stage1_io, judge)
    run = cost["runs"][RUN]
    accept, escalated = run["accept"], run["escalated"]
    per_trip_us = 1000 * (accept["redis_cpu_ms"] - accept["lua_ms"]) / accept["round_trips"]
    lines = [
        "# Capacity: what 10,000 nodes/s needs",
        "",
        "<!-- written by python -m bench.capacity from bench/results; do not edit by hand -->",
        "",
        f"Derived from `bench/results/redis_cost.json` (run `{RUN}`: {run.get('note', '')}), "
        "`stage1_io.json` and `judge_throughput.json`, measured on a "
        f"{run['cpus']}-core {run['machine']} shared with other work (Python "
        f"{run['python']}). Assumed: {ESCALATED:.0%} of nodes escalated to Stage 2, processes "
        f"and Redis cores planned at {UTILISATION:.0%} of a core, Redis `maxclients` "
        f"{MAXCLIENTS:,} (its default).",
        "",
        "## Redis per reviewed node",
        "",
        "| path | round trips | commands | Redis CPU ms (least of rounds) | median |",
        "|---|---|---|---|---|",
    ]
    for label, figures in (("accepted", accept), ("escalated", escalated)):
        lines.append(_cost_row(label, figures))
    if "floor" in run:
        lines.append(_cost_row("accepted, least design (same run)", run["floor"]))
    for name in BASELINES:
        before = cost["runs"].get(name)
        if before is None:
            continue
        for label, figures in (("accepted", before["accept"]), ("escalated", before["escalated"])):
            lines.append(_cost_row(f"{label}, {name}: {_short(before.get('note', ''))}", figures))
    lines += [
        "",
        "A round trip is a request the server read and answered (`total_reads_processed`);",
        "a node's count includes its submission. CPU is the server process's user + system",
        "time (`INFO cpu`), less what the idle fleet used meanwhile.",
        "",
        f"Of an accepted node's {accept['redis_cpu_ms']:.3f} ms, Lua scripts (the takes and "
        f"the publish script) ran {accept['lua_ms']:.3f} ms. The rest, {per_trip_us:.0f} µs "
        "per round trip, is the commands outside scripts and, mostly, the round trip itself: "
        "reading, replying, the AOF write of each event-loop pass, at the light load of this "
        "measurement, where nearly every pass serves one request.",
        "",
        *_floor(run, accept),
        *_least_design(run, accept),
        *_left_out(run, accept),
        "## Redis primaries",
        "",
        f"At the planned mix a node costs {m['round_trips']:.1f} round trips and "
        f"{m['redis_ms']:.3f} ms of Redis CPU ({m['redis_ms_median']:.3f} ms at the median "
        f"round): {m['round_trips_per_s']:,.0f} round trips/s and {m['redis_cores']:.1f} "
        f"Redis cores at {RATE_PER_S:,} nodes/s. Redis runs commands on one core, so that "
        f"is **{m['primaries']} primaries** ({m['primaries_median']} at the median figure), "
        "broker and state together. Split by the commands each runs (the broker runs "
        f"{m['broker_share']:.0%} of them: the queue lists, `unacked`, each hop's take and "
        f"ack), the broker needs **{m['broker_primaries']}** and state "
        f"**{m['state_primaries']}**.",
        "",
        "The broker (all but one of an accepted node's round trips) cannot be split "
        "across primaries by kombu, which has "
        "no cluster transport: past one primary, queues are sharded by DAG over several "
        "broker primaries ([Sentinel and Cluster](how-to/sentinel-and-cluster.md)). State "
        "(the results stream, its dedup key, the "
        "attempt record, the ledger) is one script per published node on keys of one DAG, "
        "and runs on Redis Cluster.",
        "",
        "## Worker processes",
        "",
        "| worker | built-in judge (CPU ms/review measured) | processes | model judge "
        "(measured reviews/s per process) | processes |",
        "|---|---|---|---|---|",
        f"| Stage 1 | {accept['worker_cpu_ms']['stage1']:.2f} | {m['builtin']['stage1']} | "
        f"{m['best_stage1']['reviews_per_s']:.1f} ({m['best_stage1']['pool']}, "
        f"{m['best_stage1']['concurrency']}) | {m['with_model']['stage1']} |",
        f"| router | {accept['worker_cpu_ms']['router']:.2f} | {m['builtin']['router']} | "
        f"(no model call) | {m['with_model']['router']} |",
        f"| Stage 2 ({ESCALATED:.0%}: {RATE_PER_S * ESCALATED:,.0f}/s) | "
        f"{escalated['worker_cpu_ms']['stage2']:.2f} | {m['builtin']['stage2']} | "
        f"{m['best_judge']['calls_per_s']:.1f} ({m['best_judge']['threads']} threads) | "
        f"{m['with_model']['stage2']} |",
        "",
        "Built-in judge: one core per process, at the utilisation above. Model judge: Stage 1 "
        "and Stage 2 wait on the model (200 ms per call in the measurement), so a process "
        "serves what `stage1_io` and `judge_throughput` measured, not what its CPU allows.",
        "",
        "## Connections",
        "",
        "Each worker process held "
        + ", ".join(f"{n} ({name})" for name, n in run["connections"].items())
        + " connections to Redis in the measurement (broker channels, the state pool, "
        "remote control). The fleets above hold "
        + " and ".join(
            f"{n:,} ({name} judge, {n / MAXCLIENTS:.0%} of `maxclients`)"
            for name, n in m["clients"].items()
        )
        + ": with broker and state on separate primaries each sees its share; past "
        "`maxclients` raise it (and the primary's file limit) or shard the broker.",
        "",
    ]
    return "\n".join(lines)


def _short(note: str) -> str:
    """A run's note up to its first parenthesis or comma (a table cell)."""
    return note.split("(")[0].split(",")[0].strip()


def _floor(run: dict[str, Any], accept: dict[str, Any]) -> list[str]:
    """What the node's round trips cost at the least, and the bytes it moved (newer runs)."""
    if "ping" not in run or "kb" not in accept:
        return []
    ping_us, kb = run["ping"]["cpu_us"], accept["kb"]
    floor_ms = accept["round_trips"] * ping_us / 1000
    logged = f", appended {kb['aof']:.1f} KiB to the AOF" if "aof" in kb else ""
    return [
        f"A `PING` cost this server {ping_us:.1f} µs of CPU in the same run: the node's "
        f"round trips alone cost {floor_ms:.3f} ms, whatever they carry. The node's bytes "
        f"cost the rest: Redis read {kb['net_in']:.1f} KiB, wrote back {kb['net_out']:.1f} "
        f"KiB{logged}, every message copied into `unacked`, logged and handed to its worker.",
        "",
    ]


def _least_design(run: dict[str, Any], accept: dict[str, Any]) -> list[str]:
    """The fleet beside the least design measured in the same run (newer runs)."""
    if "floor" not in run:
        return []
    least = run["floor"]
    ratio = accept["redis_cpu_ms"] / least["redis_cpu_ms"]
    median_ratio = accept["redis_cpu_ms_median"] / least["redis_cpu_ms_median"]
    return [
        "The least design we know for the same node and guarantees (`bench/redis_floor.py`: "
        "Redis Streams consumer groups, whose pending list records a delivery as it is "
        "read, so no take script copies the message into a hash and a blocking read hands "
        "it over in the round trip that waited; the same publish script) ran in the same "
        f"run on the same server: {least['round_trips']:.2f} round trips, "
        f"{least['commands']:.1f} commands and {least['redis_cpu_ms']:.3f} ms "
        f"({least['redis_cpu_ms_median']:.3f} ms at the median round). The fleet's accepted "
        f"node costs {ratio:.2f}x it ({median_ratio:.2f}x at the median). Its figure leaves "
        "out what the fleet also pays for: delivery owners' leases, the in-flight count per "
        "queue for KEDA, the quarantine's inspection. It moves the fleet's own bytes.",
        "",
    ]


def _left_out(run: dict[str, Any], accept: dict[str, Any]) -> list[str]:
    """What each item the least design leaves out costs, measured alone (newer runs)."""
    if "items" not in run:
        return []
    cpu, inside = run["items"]["per_node_us"]["cpu"], run["items"]["per_node_us"]["command"]
    spread, checks = run["items"]["spread"]["cpu"], run["checks"]

    def cost(name: str) -> str:
        low, high = spread[name]
        return (
            f"{inside[name]:.1f} µs inside commands ({cpu[name]:.1f} µs of the server's CPU, "
            f"{low:.1f} to {high:.1f} over the rounds)"
        )

    added_ms = run["floor"]["redis_cpu_ms"] + sum(cpu[n] for n in LEFT_OUT) / 1000
    unresolved = [n.replace("_", " ") for n in LEFT_OUT if spread[n][0] < 0 < spread[n][1]]
    noise = (
        f" The server's CPU does not tell the {', the '.join(unresolved)} from nothing: "
        "the spread of the rounds crosses zero."
        if unresolved
        else ""
    )
    by_round = ", ".join(f"{ratio:.2f}x" for ratio in checks["least_design_ratio_by_round"])
    return [
        "Round by round (each of the fleet's rounds beside the least design's right after it, "
        f"at the same pace) the accepted node cost {by_round} the least design: the other "
        "work on this machine moves the ratio by more than a quarter between rounds and runs.",
        "",
        "Each item the least design leaves out was measured alone, in the fleet's own "
        "delivery of a message (the take script, then the ack that goes with the hop) on the "
        "same server in the same run (`bench/redis_items.py`; an accepted node has two "
        "deliveries; an item's cost is the median over the rounds of what the delivery cost "
        "with it less without it). Per accepted node: the reserved sets cost "
        f"{cost('reserved_sets')}, "
        f"the leases (the owner each record names) {cost('leases')}, the inspection (the "
        f"take's search for the delivery tag) {cost('inspection')}.{noise} With them added the "
        f"least design would cost {added_ms:.3f} ms, and the fleet's node "
        f"{checks['least_design_with_items_ratio']:.2f}x that. The rest is the delivery "
        "itself: the take script pops each message and copies it into `unacked`, and the ack "
        "takes it out again, where a stream's pending list records an id as it is read: "
        f"{cost('delivery_over_least_design')} per node over the least design's delivery, "
        "the three items included, of the "
        f"{1000 * (accept['redis_cpu_ms'] - run['floor']['redis_cpu_ms']):.0f} µs between "
        "the two nodes' least figures.",
        "",
    ]


def _cost_row(label: str, figures: dict[str, Any]) -> str:
    median = figures.get("redis_cpu_ms_median", figures["redis_cpu_ms"])
    return (
        f"| {label} | {figures['round_trips']:.2f} | {figures['commands']:.1f} | "
        f"{figures['redis_cpu_ms']:.3f} | {median:.3f} |"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Write the page, or with ``--check`` report whether it is current."""
    return write_or_check(
        DOC,
        lambda _: (
            render(load("redis_cost.json"), load("stage1_io.json"), load("judge_throughput.json"))
            + soak_page.render(load("soak.json"), load("overhead.json"))
        ),
        "python -m bench.capacity",
        argv,
    )


if __name__ == "__main__":
    raise SystemExit(main())
