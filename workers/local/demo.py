"""``windags-eval demo``: a local fleet reviews a shipped sample DAG end to end."""

from __future__ import annotations

import json
import time
from importlib import resources
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from schemas.result import ReviewError, ReviewResult
from schemas.topology import DagShape
from workers.client import ReviewClient
from workers.connections import redis_client
from workers.errors import FleetError
from workers.evaluate.verdict.human import needs_human
from workers.local.demo_keys import DEMO_TTL_S, demo_env, demo_settings
from workers.local.demo_report import in_dag_order, print_report
from workers.local.launcher import LocalFleet
from workers.local.review_page import serve, with_demo_token
from workers.results.stream import read_after, reviews_only
from workers.settings import Settings
from workers.topology import dag_from_obj


def sample_dag(dag_id: str) -> list[dict[str, Any]]:
    """The shipped sample DAG with a fresh DAG id, so every run is reviewed anew."""
    text = resources.files("workers.samples").joinpath("dag/migration_dag.json").read_text()
    nodes: list[dict[str, Any]] = json.loads(text)
    return [{**node, "dag_id": dag_id} for node in nodes]


def sample_shape(dag_id: str) -> DagShape:
    """The sample DAG's registered shape (its 14 reviewed nodes and 4 consumers)."""
    text = resources.files("workers.samples").joinpath("dag/migration_dag.shape.json").read_text()
    return dag_from_obj({**json.loads(text), "dag_id": dag_id})


def run_demo(
    settings: Settings,
    console: Console,
    *,
    timeout_s: float = 120.0,
    ui_port: int | None = None,
    private_redis: bool = True,
) -> int:
    """Start the fleet, submit the sample DAG, wait with progress, print the tables.

    ``private_redis``: start a throwaway Redis when none answers (not when the operator
    configured one). With ``ui_port``, the fleet and the review page keep running until
    Ctrl-C. The demo's stream keys expire ``DEMO_TTL_S`` after the run.
    """
    started = time.monotonic()
    dag_id = f"demo-{int(time.time())}"
    nodes = sample_dag(dag_id)
    settings = demo_settings(settings)
    with LocalFleet(
        settings.redis_url, extra_env=demo_env(settings), start_private_redis=private_redis
    ) as fleet:
        if fleet.private is not None:
            console.print(f"[dim]no Redis at {settings.redis_url}; started a private one[/dim]")
        with console.status("starting the stage1, router and stage2 workers..."):
            fleet.wait_ready()
        live = settings.model_copy(update={"redis_url": fleet.redis_url})
        client = ReviewClient(live)
        try:
            client.register_dag(sample_shape(dag_id))
            client.submit_many(nodes)
            entries = _wait_for_results(live, dag_id, len(nodes), console, timeout_s)
        finally:
            client.close()
        entries = in_dag_order(entries, [n["node_id"] for n in nodes])
        title = f"DAG {dag_id}: {len(nodes)} nodes, in DAG order"
        print_report(console, entries, title=title, took_s=time.monotonic() - started)
        waiting = sum(1 for e in entries if isinstance(e, ReviewResult) and needs_human(e))
        if fleet.private is None:  # a private Redis goes away with the fleet
            console.print(
                f"[dim]these results stay in Redis for {DEMO_TTL_S // 60} minutes under the key "
                f"prefix {settings.key_prefix}; to see them again: WINDAGS_KEY_PREFIX="
                f"{settings.key_prefix} windags-eval watch {dag_id} --from-start, or every "
                f"node of the DAG with its totals: windags-eval dag show {dag_id}[/dim]"
            )
        try:
            if ui_port is None:
                _how_to_review(console, settings, entries, private=fleet.private is not None)
            else:
                _serve_page(live, console, dag_id, waiting, ui_port)
        finally:
            expire_run(live, dag_id)
    return 0 if len(entries) == len(nodes) else 1


def expire_run(settings: Settings, dag_id: str) -> None:
    """Let the demo's stream and spend expire instead of staying in the user's Redis.

    The review queue's index is the demo prefix's own, so it expires with them.
    """
    keys = settings.keys
    client = redis_client(settings, max_connections=2)
    try:
        for key in (*keys.of_dag(dag_id), keys.human_pending, keys.human_summaries):
            client.expire(key, DEMO_TTL_S)
    finally:
        client.close()


def _how_to_review(
    console: Console,
    settings: Settings,
    entries: list[ReviewResult | ReviewError],
    *,
    private: bool,
) -> None:
    """The commands that decide the waiting nodes, with the demo's key prefix filled in."""
    waiting = [e for e in entries if isinstance(e, ReviewResult) and needs_human(e)]
    if not waiting:
        return
    lines = [f"{len(waiting)} node(s) wait for a person."]
    browser = (
        "run [bold]windags-eval demo --ui[/bold]: it keeps the fleet and the review page "
        "running, prints the page's address and a sign-in token, and stops on Ctrl-C."
    )
    if private:  # the private Redis went away with the fleet: only --ui can show them
        lines.append(f"The private Redis goes away with the demo; to review them, {browser}")
    else:
        first = waiting[0]
        env = f"WINDAGS_KEY_PREFIX={settings.key_prefix}"
        lines += [
            "Decide one from this shell (--accept, --reject, or --send-back --feedback TEXT):",
            f"  [bold]{env} windags-eval verdict {first.dag_id} {first.node_id} "
            f"{first.attempt} --accept[/bold]",
            "or review them in a browser (a token of 16+ characters of your choosing):",
            f"  [bold]{env} WINDAGS_REVIEW_UI_TOKEN=<token> windags-eval review-ui[/bold]",
            f"or {browser}",
        ]
    for line in lines:
        console.print(line, soft_wrap=True)


def _serve_page(settings: Settings, console: Console, dag_id: str, waiting: int, port: int) -> None:
    page_settings, token = with_demo_token(settings)
    console.print(
        f"{waiting} node(s) wait for a person. Review page: "
        f"[bold]http://127.0.0.1:{port}/?dag={dag_id}[/bold]; the whole DAG: "
        f"[bold]http://127.0.0.1:{port}/dag/{dag_id}[/bold]"
    )
    if token is not None:
        console.print(f"sign in with any name and the token [bold]{token}[/bold]")
    console.print("the fleet and the page keep running; Ctrl-C stops both")
    serve(page_settings, host="127.0.0.1", port=port)
    console.print("stopped")


def wide_console() -> Console:
    """A console wide enough for the results table even when output is piped."""
    width = Console().width
    return Console(width=max(width, 132))


def _wait_for_results(
    settings: Settings, dag_id: str, expected: int, console: Console, timeout_s: float
) -> list[ReviewResult | ReviewError]:
    client = redis_client(settings, max_connections=2)
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
                batch = read_after(client, stream, last, block_ms=500)
                last = batch[-1].entry_id if batch else last
                for entry in reviews_only(batch):
                    entries[f"{entry.payload.node_id}:{entry.payload.attempt}"] = entry.payload
                progress.update(bar, completed=len(entries))
    finally:
        client.close()
    return list(entries.values())
