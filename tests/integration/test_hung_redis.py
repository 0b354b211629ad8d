"""Bounded waits: a Redis that accepts connections but does not answer (SIGSTOPped) makes
``submit`` fail within its bound with ``BrokerUnavailableError`` (the CLI: one line, exit 1),
and after SIGCONT a subscriber and the workers carry on."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench import common
from schemas.result import ReviewResult
from tests.infrastructure import SHORT_LIMITS, require_redis_server, wait_until
from workers.client import AsyncReviewClient, ReviewClient
from workers.errors import BrokerUnavailableError
from workers.local.launcher import LocalFleet
from workers.local.redis_server import PrivateRedis
from workers.local.submit import check_bound_s
from workers.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
GOOD: dict[str, Any] = json.loads((ROOT / "workers" / "samples" / "good_python.json").read_text())
TIMEOUTS = {"WINDAGS_REDIS_SOCKET_TIMEOUT_S": "2", "WINDAGS_REDIS_CONNECT_TIMEOUT_S": "1"}
#: Python, celery and the settings load before the CLI's own bounded wait starts.
#: How many times its bound a submit may take before the test calls it a hang: a deadline
#: for an event on a loaded machine, not a measure of the bound.
GIVES_UP_WITHIN = 4
WAITED = re.compile(r"\(gave up after ([\d.]+) s; bound (\d+) s\)$")


def test_the_docs_state_the_cli_bound_the_defaults_give() -> None:
    """The reliability page's figure is the bound ``submit`` computes with the defaults."""
    defaults = Settings()
    client = ReviewClient(defaults)
    try:
        bound_s = check_bound_s(defaults) + client.submit_bound_s
    finally:
        client.close()
    page = (ROOT / "docs" / "explanation" / "reliability.md").read_text()
    assert f"within {bound_s:.0f} s with the defaults" in " ".join(page.split())


@pytest.fixture(scope="module")
def hung() -> Iterator[tuple[PrivateRedis, LocalFleet, dict[str, str]]]:
    require_redis_server()
    env = {
        **SHORT_LIMITS,
        **TIMEOUTS,
        "WINDAGS_KEY_PREFIX": f"hung-{uuid.uuid4().hex[:6]}",
        "WINDAGS_JUDGE_BACKEND": "builtin",
    }
    with common.private_redis() as server, common.running_fleet(server.url, env) as fleet:
        yield server, fleet, env


def _body(dag: str, node: str) -> dict[str, Any]:
    return {**GOOD, "dag_id": dag, "node_id": node}


def _submit_into(client: ReviewClient, dag: str, raised: list[BaseException]) -> None:
    """Submit while Redis is paused; what it raised goes into ``raised``."""
    try:
        client.submit(_body(dag, "during"))
    except BaseException as exc:  # the test asserts what it was
        raised.append(exc)


@pytest.mark.timeout(180)
def test_submit_fails_within_its_bound_and_everything_recovers_after_sigcont(
    hung: tuple[PrivateRedis, LocalFleet, dict[str, str]], tmp_path: Path
) -> None:
    server, fleet, env = hung
    settings = Settings.from_environment(env, redis_url=server.url)
    dag = f"hung-{uuid.uuid4().hex[:6]}"
    client = ReviewClient(settings)
    seen: list[str] = []
    subscription = client.subscription(dag, "runtime", "watcher")
    stop = threading.Event()

    def watch() -> None:
        for delivery in subscription:  # iterating waits out outages; poll() would raise
            seen.append(delivery.review_key)
            delivery.ack()
            if stop.is_set():
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    client.submit(_body(dag, "before"))  # a warm connection, as a running runtime has
    assert wait_until(lambda: f"{dag}:before:1" in seen, timeout_s=30)
    request = tmp_path / "request.json"
    request.write_text(json.dumps(_body(dag, "cli")))
    server.pause()
    try:
        # Redis stays paused until the CLI is done too: a submit that never gave up would
        # keep ``raised`` unset past any deadline; the deadline is generous, not a measure.
        raised: list[BaseException] = []
        started = time.monotonic()
        submit = threading.Thread(target=_submit_into, args=(client, dag, raised), daemon=True)
        submit.start()
        submit.join(timeout=GIVES_UP_WITHIN * client.submit_bound_s)
        took_s = time.monotonic() - started
        cli = subprocess.run(
            [sys.executable, "-m", "workers.local.cli", "submit", str(request)],
            cwd=ROOT,
            env={**os.environ, **env, "WINDAGS_REDIS_URL": server.url},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        time.sleep(settings.redis_socket_timeout_s * 2)  # every idle connection times out
        watcher_alive_in_outage = watcher.is_alive()
    finally:
        server.resume()
    print(
        f"\n[hung redis] submit raised after {took_s:.1f} s (bound {client.submit_bound_s:.1f} s); "
        f"CLI exit {cli.returncode}"
    )
    assert not submit.is_alive(), "submit never gave up on a Redis that does not answer"
    assert len(raised) == 1 and isinstance(raised[0], BrokerUnavailableError), raised
    assert took_s >= settings.redis_socket_timeout_s  # it waited for an answer first
    assert cli.returncode == 1, cli.stderr
    lines = cli.stderr.strip().splitlines()
    assert len(lines) == 1 and "unavailable" in lines[0], cli.stderr
    waited = WAITED.search(lines[0])
    assert waited, lines[0]  # the CLI says how long it waited, and its bound
    cli_bound_s = check_bound_s(settings) + client.submit_bound_s
    assert float(waited.group(2)) == pytest.approx(cli_bound_s, abs=0.5)
    # The CLI gave up by itself (exit 1 above, within ``subprocess.run``'s generous timeout).
    assert watcher_alive_in_outage
    # After SIGCONT: the workers review, the subscriber sees it.
    client.submit(_body(dag, "after"))
    assert wait_until(lambda: f"{dag}:after:1" in seen, timeout_s=60), seen
    stop.set()
    assert seen.count(f"{dag}:before:1") == 1 and seen.count(f"{dag}:after:1") == 1
    # A submission that timed out may still have reached Redis once it woke: at most once.
    assert seen.count(f"{dag}:during:1") <= 1
    assert all(p.poll() is None for p in fleet.workers.values())
    assert fleet.supervisor is not None and sum(fleet.supervisor.restarts.values()) == 0
    fleet.wait_ready(timeout_s=30)
    client.submit(_body(dag, "last"))  # the watcher returns on its next delivery
    watcher.join(timeout=60)
    assert not watcher.is_alive()  # no thread left polling a Redis that goes away
    client.close()


async def _awaits_in_an_outage(
    server: PrivateRedis, settings: Settings, dag: str
) -> dict[str, BaseException | ReviewResult]:
    """A wait already open and a review asked for while Redis does not answer; then one after."""
    async with AsyncReviewClient(settings) as client:
        await client.review(_body(dag, "async-before"), timeout=60)  # warm connections
        waiting = asyncio.create_task(client.wait_for_person(dag, "nobody", 1, timeout=600))
        await asyncio.sleep(0)  # the wait is registered and read before Redis stops
        server.pause()
        try:
            outcomes: dict[str, BaseException | ReviewResult] = {}
            for name, pending in (
                ("open wait", waiting),
                ("new review", client.review(_body(dag, "async-during"), timeout=600)),
            ):
                try:
                    await asyncio.wait_for(pending, GIVES_UP_WITHIN * client.submit_bound_s)
                except BaseException as exc:  # the test asserts what it was
                    outcomes[name] = exc
        finally:
            server.resume()
        outcomes["after"] = await client.review(_body(dag, "async-after"), timeout=120)
        return outcomes


@pytest.mark.timeout(180)
def test_the_asyncio_client_ends_its_waits_in_an_outage_and_carries_on_after_it(
    hung: tuple[PrivateRedis, LocalFleet, dict[str, str]],
) -> None:
    """Nothing hangs: a wait open when Redis stops and a review asked for during the
    outage both raise ``BrokerUnavailableError`` (not the deadline ``wait_for`` would
    raise), and the same client reviews again once Redis answers."""
    server, _, env = hung
    settings = Settings.from_environment(env, redis_url=server.url)
    outcomes = asyncio.run(_awaits_in_an_outage(server, settings, f"hung-{uuid.uuid4().hex[:6]}"))
    assert isinstance(outcomes["open wait"], BrokerUnavailableError), outcomes
    assert isinstance(outcomes["new review"], BrokerUnavailableError), outcomes
    after = outcomes["after"]
    assert isinstance(after, ReviewResult) and after.node_id == "async-after"
