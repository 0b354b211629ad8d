"""What one reviewed node costs Redis: round trips, commands and CPU, accept and escalated.

Run: ``python -m bench.redis_cost [--n 1000] [--label current]``.

A private redis-server (AOF everysec, as production runs) serves one local fleet (the
three workers as the launcher starts them, built-in judge) and nothing else, so its
server-wide counters are the fleet's. Around each workload the script reads ``INFO all``:

- **round trips**: ``total_reads_processed``, the requests the server read from a client
  and answered; a pipeline, a MULTI/EXEC block sent at once and a script are one each, a
  blocking wait (``BLMOVE``) one. ``total_writes_processed`` (the replies) is kept beside it.
- **commands**: ``total_commands_processed``, every command executed, those a Lua script
  calls included (the per-command table is ``INFO commandstats``).
- **Redis CPU**: ``used_cpu_user + used_cpu_sys`` of the server process, parsing, Lua,
  AOF feed and networking included; ``lua`` is the ``EVAL``/``EVALSHA`` share of
  ``commandstats`` usec (a script's commands included).

- **bytes**: ``total_net_input_bytes`` / ``total_net_output_bytes`` and the growth of
  ``aof_current_size``, per node: every copy of a message costs CPU in proportion.
- **the floor**: the CPU of one ``PING`` round trip on this server, measured in the same
  run; a node's round trips times it is what no cut of scripts or commands goes below.

The script's own probes (one ``INFO`` pair, the polls for completion) are taken out, and
so is what the idle fleet does in the same time (consumers' blocking waits timing out,
restore sweeps), measured for ``--idle-s`` first. A workload ends when its last result
is on the stream and every queue and ``unacked`` are empty (the last acks are in). The
submission (``ReviewClient.submit_many``) is part of a node's cost and is also measured
alone, on a prefix no worker consumes. Worker CPU per node and the Redis connections each
worker holds are read from ``/proc`` (the capacity model, ``bench.capacity``, uses them).

Workloads: ``accept`` (an expert skill, cheap downstream: accepted by Stage 1 and the
router, never escalated) and ``escalated`` (a final deliverable: the router's hard rule
sends it to Stage 2); and, after each accept round, ``floor``: the same accepted node
moved by the least design we know (``bench.redis_floor``), on the same server at the
same pace, what the fleet's figure is compared with; then ``items``: what each thing the
least design leaves out (leases, reserved sets, inspection) costs in the fleet's own
delivery of a message, measured alone (``bench.redis_items``). ``checks`` holds issue
39's goals against the run. Results go to
``bench/results/redis_cost.json`` under ``--label``; other labels already there
(``before``: the code before the cuts) are kept.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import redis

from bench import common, redis_items
from bench.redis_floor import Floor, Samples
from bench.redis_items import Items
from workers.client import ReviewClient
from workers.fleet.queues import Queue
from workers.keys import Keys

RESULTS = common.RESULTS_DIR / "redis_cost.json"
WARMUP = 100
#: What the cuts aim at, per accepted node (issue 22, item 6).
GOAL_ROUND_TRIPS = 6.0
GOAL_CPU_MS = 0.2
#: Issue 39: an escalated node's round trips; an accepted node's Redis CPU over the least
#: design's in the same run (or, item by item, what the least design leaves out).
GOAL_ESCALATED_ROUND_TRIPS = 8.0
GOAL_LEAST_DESIGN_RATIO = 1.25
WORKLOADS = ("accept", "escalated")
#: The least design's accepted node, on the same server (``bench.redis_floor``).
FLOOR = "floor"


class Meter:
    """Reads the server's counters; counts its own requests so they can be taken out."""

    def __init__(self, url: str) -> None:
        self.client = redis.Redis.from_url(url)
        self.own: Counter[str] = Counter()  # command name -> calls; "~rt": round trips

    def snapshot(self) -> dict[str, Any]:
        """``INFO all`` as a dict (one round trip of ours, counted)."""
        info: dict[str, Any] = self.client.info("all")
        self.own.update({"info": 1, "~rt": 1})
        return info

    def quiet(self, keys: Keys) -> bool:
        """Whether every queue and ``unacked`` are empty (one pipelined round trip)."""
        pipe = self.client.pipeline(transaction=False)
        for queue in Queue:
            pipe.llen(keys.queue(queue.value))
        pipe.hlen(keys.unacked)
        counts = pipe.execute()
        self.own.update({"llen": len(Queue), "hlen": 1, "~rt": 1})
        return not any(counts)

    def length(self, stream: str) -> int:
        """``XLEN`` of ``stream`` (counted)."""
        self.own.update({"xlen": 1, "~rt": 1})
        return int(self.client.xlen(stream))

    def close(self) -> None:
        """Close the connection."""
        self.client.close()


def delta(before: dict[str, Any], after: dict[str, Any], own: Counter[str]) -> dict[str, Any]:
    """What the server did between two snapshots, less ``own`` requests.

    The ``INFO`` that took ``before`` had its read counted before it and its reply after;
    the one that took ``after``, the reverse: the pair adds one read, one write and one
    ``info`` call, all in ``own``.
    """
    commands: dict[str, dict[str, float]] = {}
    for key, stats in after.items():
        if not key.startswith("cmdstat_"):
            continue
        name = key.removeprefix("cmdstat_")
        was = before.get(key, {"calls": 0, "usec": 0})
        calls = stats["calls"] - was["calls"] - own.get(name, 0)
        if calls > 0:
            commands[name] = {"calls": calls, "usec": stats["usec"] - was["usec"]}
    own_calls = sum(n for name, n in own.items() if not name.startswith("~"))
    cpu = (after["used_cpu_user"] + after["used_cpu_sys"]) - (
        before["used_cpu_user"] + before["used_cpu_sys"]
    )
    lua_usec = sum(commands.get(name, {}).get("usec", 0) for name in ("eval", "evalsha", "fcall"))
    return {
        "net_in_bytes": after["total_net_input_bytes"] - before["total_net_input_bytes"],
        "net_out_bytes": after["total_net_output_bytes"] - before["total_net_output_bytes"],
        "aof_bytes": after.get("aof_current_size", 0) - before.get("aof_current_size", 0),
        "round_trips": after["total_reads_processed"]
        - before["total_reads_processed"]
        - own["~rt"],
        "replies": after["total_writes_processed"] - before["total_writes_processed"] - own["~rt"],
        "commands": after["total_commands_processed"]
        - before["total_commands_processed"]
        - own_calls,
        "cpu_ms": 1000 * cpu,
        "lua_ms": lua_usec / 1000,
        "by_command": commands,
    }


def measured(meter: Meter, work: Any, *, idle: dict[str, float] | None = None) -> dict[str, Any]:
    """Run ``work()`` between two snapshots; less the idle rates for the time it took."""
    meter.own.clear()
    before = meter.snapshot()
    started = time.monotonic()
    work()
    seconds = time.monotonic() - started
    after = meter.snapshot()
    meter.own["info"] -= 1  # the pair adds one call (``delta``)
    meter.own["~rt"] -= 1
    figures = delta(before, after, meter.own)
    figures["seconds"] = seconds
    for name, rate in (idle or {}).items():
        figures[name] -= rate * seconds
    return figures


def round_trip_floor(meter: Meter, idle: dict[str, float], n: int = 2000) -> dict[str, float]:
    """Redis CPU of the cheapest round trip (``PING``) on this machine, in microseconds.

    What no cut of commands or scripts can go below: a node's round trips times this.
    """

    def pings() -> None:
        for _ in range(n):
            meter.client.ping()
        meter.own.update({"ping": n, "~rt": n})

    figures = measured(meter, pings, idle=idle)
    return {"cpu_us": round(1000 * figures["cpu_ms"] / n, 1)}


def idle_rates(meter: Meter, seconds: float) -> dict[str, float]:
    """Round trips, replies, commands and CPU per second of the idle fleet."""
    figures = measured(meter, lambda: time.sleep(seconds))
    return {k: figures[k] / figures["seconds"] for k in ("round_trips", "replies", "commands")} | {
        "cpu_ms": figures["cpu_ms"] / figures["seconds"],
        "lua_ms": figures["lua_ms"] / figures["seconds"],
    }


def requests(workload: str, dag: str, n: int) -> list[dict[str, Any]]:
    """``n`` requests of one workload, one DAG."""
    escalated = workload == "escalated"
    return [common.review_obj(dag, f"n{i}", final_deliverable=escalated) for i in range(n)]


def run_workload(
    meter: Meter, client: ReviewClient, keys: Keys, workload: str, n: int, timeout_s: float
) -> str:
    """Submit ``n`` reviews; return their DAG when all are published and acked."""
    dag = common.unique(f"cost-{workload}")
    objs = requests(workload, dag, n)
    client.submit_many(objs)
    deadline = time.monotonic() + timeout_s
    while meter.length(keys.results(dag)) < n or not meter.quiet(keys):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{workload}: {n} reviews not done in {timeout_s:.0f}s")
        time.sleep(0.05)
    return dag


def process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants (Linux /proc)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo += parents.get(current, [])
    return found


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and its live descendants."""
    total = 0.0
    for one in process_tree(pid):
        try:
            fields = Path(f"/proc/{one}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def connections_to(pid: int, port: int, *, descendants: bool = True) -> int:
    """TCP connections ``pid`` (and its descendants, unless told not) hold to ``port`` here."""
    inodes: set[str] = set()
    for one in process_tree(pid) if descendants else [pid]:
        try:
            for fd in Path(f"/proc/{one}/fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[9] in inodes and int(fields[2].rsplit(":", 1)[1], 16) == port:
                count += 1
    return count


@contextmanager
def fleet_processes(url: str, env: dict[str, str]) -> Iterator[dict[str, subprocess.Popen[bytes]]]:
    """A running local fleet; its worker processes by queue name."""
    with common.running_fleet(url, env) as fleet:
        yield {queue.value: proc for queue, proc in fleet.workers.items()}


def per_node(figures: dict[str, Any], n: int) -> dict[str, Any]:
    """``figures`` divided by ``n``, rounded, with the busiest commands."""
    top = sorted(figures["by_command"].items(), key=lambda kv: -kv[1]["calls"])
    return {
        "round_trips": round(figures["round_trips"] / n, 2),
        "replies": round(figures["replies"] / n, 2),
        "commands": round(figures["commands"] / n, 2),
        "redis_cpu_ms": round(figures["cpu_ms"] / n, 4),
        "lua_ms": round(figures["lua_ms"] / n, 4),
        # Bytes the server read, wrote back and appended to its AOF (our probes' few
        # hundred bytes per round included): what each copy of a message costs.
        "kb": {
            name: round(figures[f"{name}_bytes"] / n / 1024, 2)
            for name in ("net_in", "net_out", "aof")
            if figures[f"{name}_bytes"] >= 0  # an AOF rewrite meanwhile shrinks the file
        },
        "commands_by_name": {name: round(s["calls"] / n, 2) for name, s in top},
        # Microseconds inside each command (a script's own commands counted under it and
        # under their names): where the CPU that is not I/O goes.
        "usec_by_name": {
            name: round(s["usec"] / n, 2)
            for name, s in sorted(figures["by_command"].items(), key=lambda kv: -kv[1]["usec"])
        },
    }


def measure(
    n: int, *, rounds: int, idle_s: float, timeout_s: float, aof: bool = True
) -> dict[str, Any]:
    """Every figure of one run (see the module docstring), each workload ``rounds`` times."""
    figures: dict[str, Any] = {"n": n, "rounds": rounds, "aof": aof}
    with common.private_redis(appendonly=aof) as server:
        env = common.fleet_env(common.unique("cost"))
        settings = common.settings_for(server.url, env)
        keys = settings.keys
        meter = Meter(server.url)
        client = ReviewClient(settings)
        try:
            with fleet_processes(server.url, env) as workers:
                dags = {
                    w: run_workload(meter, client, keys, w, WARMUP, timeout_s) for w in WORKLOADS
                }
                samples = fleet_samples(meter.client, client, keys, dags["accept"])
                floor = Floor(server.url, keys, samples)
                floor.run(WARMUP, timeout_s)
                idle = idle_rates(meter, idle_s)
                figures["idle_per_s"] = {k: round(v, 3) for k, v in idle.items()}
                figures["ping"] = round_trip_floor(meter, idle)
                items = Items(server.url, Keys(common.unique("cost-items")), samples.message)
                runs: dict[str, list[dict[str, Any]]] = {w: [] for w in (*WORKLOADS, FLOOR)}
                item_rounds = []
                for i in range(rounds):
                    for workload in WORKLOADS:
                        runs[workload].append(
                            one_round(meter, client, keys, workload, n, workers, idle, timeout_s)
                        )
                    pace_s = runs["accept"][-1]["seconds"] / n
                    runs[FLOOR].append(floor_round(meter, floor, n, idle, timeout_s, pace_s))
                    item_rounds.append(
                        items.round(lambda w: measured(meter, w, idle=idle), first=i)
                    )
                figures |= {workload: summary(rounds) for workload, rounds in runs.items()}
                figures["items"] = redis_items.per_node(item_rounds)
                figures["connections"] = {
                    name: connections_to(p.pid, server.port) for name, p in workers.items()
                }
            figures["submit"] = per_node(measured(meter, lambda: submit_alone(client, n)), n)
        finally:
            client.close()
            meter.close()
    return figures


def one_round(
    meter: Meter,
    client: ReviewClient,
    keys: Keys,
    workload: str,
    n: int,
    workers: dict[str, subprocess.Popen[bytes]],
    idle: dict[str, float],
    timeout_s: float,
) -> dict[str, Any]:
    """One workload of ``n`` reviews: Redis figures per node, and each worker's CPU."""
    cpu_before = {name: cpu_s(p.pid) for name, p in workers.items()}
    done = measured(
        meter, lambda: run_workload(meter, client, keys, workload, n, timeout_s), idle=idle
    )
    worker_cpu = {
        name: round(1000 * (cpu_s(p.pid) - cpu_before[name]) / n, 3) for name, p in workers.items()
    }
    return {**per_node(done, n), "seconds": round(done["seconds"], 2), "worker_cpu_ms": worker_cpu}


def fleet_samples(server: redis.Redis, client: ReviewClient, keys: Keys, dag: str) -> Samples:
    """A submitted message, a result entry and an attempt record, as the fleet wrote them."""
    settings = client.settings.model_copy(update={"key_prefix": common.unique("cost-sample")})
    alone = ReviewClient(settings)
    try:
        alone.submit_many(requests("accept", "sample", 1))
    finally:
        alone.close()
    queue = settings.keys.queue(Queue.STAGE1.value)
    message = server.lindex(queue, 0)
    server.delete(queue)
    [(_, entry)] = cast(
        "list[tuple[bytes, dict[bytes, bytes]]]", server.xrange(keys.results(dag), count=1)
    )
    record = server.hget(keys.attempts(dag, "n0"), "1")
    if not isinstance(message, bytes) or not isinstance(record, bytes):
        raise RuntimeError("the fleet's message or attempt record is missing")
    return Samples(message=message, entry=entry, attempt_record=record)


def floor_round(
    meter: Meter, floor: Floor, n: int, idle: dict[str, float], timeout_s: float, pace_s: float
) -> dict[str, Any]:
    """One floor workload of ``n`` nodes (``bench.redis_floor``) at the fleet's pace."""
    done = measured(meter, lambda: floor.run(n, timeout_s, pace_s=pace_s), idle=idle)
    return {**per_node(done, n), "seconds": round(done["seconds"], 2), "worker_cpu_ms": {}}


def summary(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """The rounds of one workload: counts by their median, CPU by its least and median.

    Counts barely move between rounds; CPU time does, with whatever else the machine
    runs: the least is the figure least disturbed by it, the median is kept beside it.
    """
    middle = sorted(rounds, key=lambda r: r["round_trips"])[len(rounds) // 2]
    cpu = [r["redis_cpu_ms"] for r in rounds]
    lua = [r["lua_ms"] for r in rounds]
    workers = {
        name: min(r["worker_cpu_ms"][name] for r in rounds) for name in rounds[0]["worker_cpu_ms"]
    }
    return {
        **middle,
        "redis_cpu_ms": min(cpu),
        "redis_cpu_ms_median": statistics.median(cpu),
        "lua_ms": min(lua),
        "lua_ms_median": statistics.median(lua),
        "worker_cpu_ms": workers,
        "rounds": rounds,
    }


def submit_alone(client: ReviewClient, n: int) -> None:
    """``n`` submissions to a queue no worker consumes (a prefix of its own)."""
    settings = client.settings.model_copy(update={"key_prefix": common.unique("cost-submit")})
    alone = ReviewClient(settings)
    try:
        alone.submit_many(requests("accept", "submit", 1))  # connect first
        alone.submit_many(requests("accept", "submit", n))
    finally:
        alone.close()


def show(label: str, figures: dict[str, Any]) -> str:
    """The run's table."""
    rows = [
        [
            f"{label} {workload}",
            figures[workload]["round_trips"],
            figures[workload]["replies"],
            figures[workload]["commands"],
            figures[workload]["redis_cpu_ms"],
            figures[workload].get("redis_cpu_ms_median", figures[workload]["redis_cpu_ms"]),
            figures[workload]["lua_ms"],
        ]
        for workload in (*WORKLOADS, FLOOR, "submit")
    ]
    head = ["per node", "round trips", "replies", "commands", "cpu ms (least)", "median", "lua ms"]
    return common.table(head, rows)


def checks(figures: dict[str, Any]) -> dict[str, Any]:
    """Issue 39's goals against one run (least of rounds; medians beside).

    ``least_design_ratio_by_round``: each round's accepted node over the least design's
    right after it, at the same pace: the machine's other tenants move both alike within a
    round, and the spread of the rounds shows how far they move the ratio.
    ``least_design_with_items_ratio``: the accepted node over the least design plus what
    the items it leaves out cost the fleet per node (``bench.redis_items``, server CPU).
    """
    accept, least = figures["accept"], figures[FLOOR]
    items = figures["items"]["per_node_us"]["cpu"]
    left_out_ms = sum(items[name] for name in redis_items.LEFT_OUT) / 1000
    paired = [
        round(fleet["redis_cpu_ms"] / floor["redis_cpu_ms"], 3)
        for fleet, floor in zip(accept["rounds"], least["rounds"], strict=True)
    ]
    return {
        "escalated_round_trips": figures["escalated"]["round_trips"],
        "escalated_round_trips_met": figures["escalated"]["round_trips"]
        <= GOAL_ESCALATED_ROUND_TRIPS,
        "least_design_ratio": round(accept["redis_cpu_ms"] / least["redis_cpu_ms"], 3),
        "least_design_ratio_median": round(
            accept["redis_cpu_ms_median"] / least["redis_cpu_ms_median"], 3
        ),
        "least_design_ratio_met": accept["redis_cpu_ms"]
        <= GOAL_LEAST_DESIGN_RATIO * least["redis_cpu_ms"],
        "least_design_ratio_by_round": paired,
        "least_design_with_items_ratio": round(
            accept["redis_cpu_ms"] / (least["redis_cpu_ms"] + left_out_ms), 3
        ),
    }


def explain(figures: dict[str, Any]) -> str:
    """The goals of issue 39 against this run, and what the items cost an accepted node."""
    got = figures["checks"]
    items = figures["items"]["per_node_us"]
    costs = ", ".join(
        f"{name.replace('_', ' ')} {items['cpu'][name]:.1f} us ({items['command'][name]:.1f} "
        "us in commands)"
        for name in (*redis_items.LEFT_OUT, "delivery_over_least_design")
    )
    return (
        f"escalated node: {got['escalated_round_trips']} round trips (goal <= "
        f"{GOAL_ESCALATED_ROUND_TRIPS}); accepted node: {got['least_design_ratio']}x the "
        f"least design's Redis CPU (median {got['least_design_ratio_median']}x, by round "
        f"{got['least_design_ratio_by_round']}; goal <= {GOAL_LEAST_DESIGN_RATIO}x), "
        f"{got['least_design_with_items_ratio']}x with what it leaves out added; per "
        f"accepted node: {costs}"
    )


def main(argv: list[str] | None = None) -> None:
    """Measure, print, and keep the run under its label in ``redis_cost.json``."""
    parser = common.command_line(__doc__)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--label", default="current")
    parser.add_argument("--idle-s", type=float, default=5.0)
    parser.add_argument("--timeout-s", type=float, default=600.0)
    parser.add_argument("--note", default="", help="what code was measured (kept with the run)")
    parser.add_argument("--no-aof", action="store_true", help="Redis without AOF everysec")
    args = parser.parse_args(argv)
    figures = measure(
        args.n,
        rounds=args.rounds,
        idle_s=args.idle_s,
        timeout_s=args.timeout_s,
        aof=not args.no_aof,
    )
    figures["note"] = args.note
    figures["checks"] = checks(figures)
    print(show(args.label, figures))
    kept: dict[str, Any] = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    runs = {**kept.get("runs", {}), args.label: {**figures, **common.machine()}}
    accept = runs[args.label]["accept"]
    print(
        f"accept path: {accept['round_trips']} round trips (goal <= {GOAL_ROUND_TRIPS}), "
        f"{accept['redis_cpu_ms']} ms Redis CPU per node (goal <= {GOAL_CPU_MS}); "
        f"a PING costs this Redis {figures['ping']['cpu_us']} us; per node it read "
        f"{accept['kb']['net_in']} KiB, wrote {accept['kb']['net_out']} KiB and logged "
        f"{accept['kb'].get('aof', '(rewritten meanwhile)')} KiB; the least design cost "
        f"{runs[args.label][FLOOR]['redis_cpu_ms']} ms in the same run"
    )
    print(explain(figures))
    goal = {
        "round_trips": GOAL_ROUND_TRIPS,
        "redis_cpu_ms": GOAL_CPU_MS,
        "escalated_round_trips": GOAL_ESCALATED_ROUND_TRIPS,
        "least_design_ratio": GOAL_LEAST_DESIGN_RATIO,
    }
    out = {"goal": goal, "runs": runs}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
