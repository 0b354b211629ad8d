"""``windags-eval demo``: a local fleet reviews a shipped sample DAG end to end."""

from __future__ import annotations

import json
import time
from importlib import resources
from typing import Any

import redis
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from schemas.result import ReviewError, ReviewResult
from workers.client import ReviewClient
from workers.errors import FleetError
from workers.local.console import results_table
from workers.local.launcher import LocalFleet
from workers.results.stream import read_after
from workers.settings import Settings


def sample_dag(dag_id: str) -> list[dict[str, Any]]:
    """The shipped sample DAG with a fresh DAG id, so every run is reviewed anew."""
    text = resources.files("workers.samples").joinpath("dag/migration_dag.json").read_text()
    nodes: list[dict[str, Any]] = json.loads(text)
    return [{**node, "dag_id": dag_id} for node in nodes]


def run_demo(settings: Settings, console: Console, *, timeout_s: float = 120.0) -> int:
    """Start the fleet, submit the sample DAG, wait with progress, print the table."""
    started = time.monotonic()
    dag_id = f"demo-{int(time.time())}"
    nodes = sample_dag(dag_id)
    with LocalFleet(settings.redis_url) as fleet:
        if fleet.private is not None:
            console.print(
                f"[dim]no Redis at {settings.redis_url}; started a private one at "
                f"{fleet.redis_url}[/dim]"
            )
        with console.status("starting the stage1, router and stage2 workers..."):
            fleet.wait_ready()
        live = settings.model_copy(update={"redis_url": fleet.redis_url})
        client = ReviewClient(live)
        try:
            client.submit_many(nodes)
            entries = _wait_for_results(live, dag_id, len(nodes), console, timeout_s)
        finally:
            client.close()
        console.print(f"[dim]worker logs: {fleet.log_dir}[/dim]")
    results = [e for e in entries if isinstance(e, ReviewResult)]
    console.print(results_table(entries, title=f"DAG {dag_id}: {len(nodes)} nodes"))
    escalated = sum(1 for r in results if r.escalation.escalate)
    console.print(
        f"escalation rate: {escalated}/{len(results)} = {escalated / max(1, len(results)):.0%}"
        f"   review spend: ${sum(r.envelope.review_cost_usd for r in results):.4f}"
        f"   wall time: {time.monotonic() - started:.1f}s"
    )
    return 0 if len(entries) == len(nodes) else 1


def wide_console() -> Console:
    """A console wide enough for the results table even when output is piped."""
    width = Console().width
    return Console(width=max(width, 132))


def _wait_for_results(
    settings: Settings, dag_id: str, expected: int, console: Console, timeout_s: float
) -> list[ReviewResult | ReviewError]:
    client = redis.Redis.from_url(settings.redis_url)
    stream = settings.keys.results(dag_id)
    entries: dict[str, ReviewResult | ReviewError] = {}
    deadline = time.monotonic() + timeout_s
    columns = (TextColumn("reviewing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    try:
        with Progress(*columns, console=console, transient=True) as progress:
            bar = progress.add_task("reviews", total=expected)
            last = "0-0"
            while len(entries) < expected:
                if time.monotonic() > deadline:
                    raise FleetError(
                        f"only {len(entries)} of {expected} results after {timeout_s:.0f}s"
                    )
                for entry in read_after(client, stream, last, block_ms=500):
                    last = entry.entry_id
                    entries[f"{entry.payload.node_id}:{entry.payload.attempt}"] = entry.payload
                progress.update(bar, completed=len(entries))
    finally:
        client.close()
    order = {n: i for i, n in enumerate(e.node_id or "" for e in entries.values())}
    return sorted(entries.values(), key=lambda e: order.get(e.node_id or "", 0))
