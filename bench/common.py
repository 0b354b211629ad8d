"""Shared pieces of the benchmarks: tables, result files, requests, fleets and streams."""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import redis

from schemas.request import ReviewRequest
from workers.fleet.queues import Queue
from workers.intake import request_from_obj
from workers.local.launcher import LocalFleet
from workers.local.redis_server import PrivateRedis
from workers.settings import Settings

RESULTS_DIR = Path(__file__).parent / "results"
REPO_ROOT = Path(__file__).resolve().parent.parent
CORPUS_PATH = Path(__file__).parent / "corpus" / "corpus.jsonl"
MAX_REQUEST_BYTES = 1_000_000
MAX_OUTPUT_CHARS = 200_000

#: A small, clean, non-escalating review: what most nodes of a DAG look like.
SAMPLE_TEXT = (
    "The nightly export streams rows from the orders table in batches of five hundred. "
    "Each batch is written to object storage before the next one is read, so memory use "
    "stays flat however large the table grows. Failed batches are retried twice and then "
    "reported to the on-call channel with the batch offset."
)


def machine() -> dict[str, Any]:
    """Where a figure was measured."""
    return {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
    }


def write_results(name: str, figures: dict[str, Any], out_dir: Path | None = None) -> Path:
    """Write ``figures`` (plus the machine) to ``<out_dir>/<name>.json``."""
    directory = out_dir or RESULTS_DIR
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.json"
    path.write_text(json.dumps({**figures, **machine()}, indent=2) + "\n")
    return path


def publish(name: str, figures: dict[str, Any], out_dir: Path | None = None) -> dict[str, Any]:
    """Write ``figures`` as ``write_results`` does, say where, and return them."""
    path = write_results(name, figures, out_dir)
    print(f"wrote {path}")
    return figures


def command_line(doc: str | None) -> argparse.ArgumentParser:
    """A benchmark's command line, described by the first line of its module docstring."""
    return argparse.ArgumentParser(description=doc.splitlines()[0] if doc else None)


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain right-aligned text table."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    lines = [" ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))]
    lines.append(" ".join("-" * w for w in widths))
    lines += [" ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(lines)


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"
    return str(value)


def percentile(values: Sequence[float], pct: float) -> float:
    """The ``pct`` percentile by linear interpolation (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = (len(ordered) - 1) * pct / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def build_request(obj: dict[str, Any]) -> ReviewRequest:
    """A request through the same strict decoder the fleet uses."""
    return request_from_obj(
        obj, max_request_bytes=MAX_REQUEST_BYTES, max_output_chars=MAX_OUTPUT_CHARS
    )


def review_obj(
    dag_id: str,
    node_id: str,
    *,
    content: str = SAMPLE_TEXT,
    kind: str = "text",
    task: str | None = None,
    final_deliverable: bool = False,
) -> dict[str, Any]:
    """A review request as JSON: an expert skill, cheap downstream, no escalation."""
    obj: dict[str, Any] = {
        "dag_id": dag_id,
        "node_id": node_id,
        "skill": {"id": "bench-skill", "success_rate": 0.95, "stage": "expert"},
        "output": {"kind": kind, "content": content},
        "node_cost_usd": 0.02,
        "downstream": [{"node_id": f"{node_id}-next", "cost_usd": 0.03}],
        "flags": {"final_deliverable": final_deliverable},
    }
    if task is not None:
        obj["task"] = task
    return obj


def fleet_env(prefix: str, **extra: str) -> dict[str, str]:
    """Environment of bench fleets: their own key prefix, the built-in judge, quiet logs."""
    return {
        "WINDAGS_KEY_PREFIX": prefix,
        "WINDAGS_JUDGE_BACKEND": "builtin",
        "WINDAGS_OTEL_ENABLED": "false",
        **extra,
    }


def settings_for(url: str, env: dict[str, str]) -> Settings:
    """The client-side settings matching a fleet's environment."""
    return Settings.from_environment(env, redis_url=url)


@contextmanager
def private_redis(*, appendonly: bool = False) -> Iterator[PrivateRedis]:
    """A throwaway redis-server on its own port (``appendonly``: AOF, as production runs)."""
    server = PrivateRedis(appendonly=appendonly).start()
    try:
        yield server
    finally:
        server.close()


@contextmanager
def running_fleet(
    url: str,
    env: dict[str, str],
    concurrency: dict[Queue, int] | None = None,
    pool: str | None = None,
) -> Iterator[LocalFleet]:
    """The three workers against ``url``, ready to serve (pools as the launcher picks)."""
    fleet = LocalFleet(
        url,
        concurrency=dict(concurrency or {}),
        extra_env=env,
        start_private_redis=False,
        pool=pool,
    )
    with fleet:
        fleet.wait_ready(timeout_s=90)
        yield fleet


@contextmanager
def messages_api_process(latency_s: float) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """The Messages API double in a process of its own, and its base URL.

    Its own process, so that the server shares no GIL with the callers it serves; stopped
    with SIGTERM (a SIGINT would be ignored by a server started with it ignored, as
    ``nohup`` and some CI runners start commands), and killed if it does not stop in 10 s;
    the process's exit code tells whether the stop was clean.
    """
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "workers.testing.messages_api.server",
            "--port",
            "0",
            "--latency-ms",
            str(latency_s * 1000),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("listening on "):
            raise RuntimeError(f"server did not start: {line!r}")
        yield proc, line.split()[-1]
    finally:
        stop_process(proc, grace_s=10)
        if proc.stdout is not None:
            proc.stdout.close()


def stop_process(proc: subprocess.Popen[Any], *, grace_s: float) -> None:
    """SIGTERM, up to ``grace_s`` to exit, then SIGKILL: a process never outlives its caller.

    A process started with ``start_new_session`` is signalled with its whole group.
    """
    if proc.poll() is not None:
        return
    group = os.getpgid(proc.pid) == proc.pid
    (os.killpg if group else os.kill)(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        (os.killpg if group else os.kill)(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def export_commit(ref: str, into: Path) -> str:
    """The files git tracks at ``ref``, written into the folder ``into``; the commit's hash.

    For benches that run another commit beside this checkout: an export (``git archive``)
    leaves the repository as it was, with no worktree to register or remove.
    """
    commit = subprocess.run(
        ["git", "rev-parse", "--verify", f"{ref}^{{commit}}"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    archive = subprocess.run(
        ["git", "archive", commit], cwd=REPO_ROOT, capture_output=True, check=True
    )
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return commit


def unique(prefix: str) -> str:
    """A short unique name."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def entry_ms(entry_id: bytes | str) -> int:
    """The publish time (Redis clock, ms since the epoch) of a stream entry id."""
    text = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    return int(text.split("-", 1)[0])


def wait_for_entries(
    client: redis.Redis, stream: str, count: int, timeout_s: float, poll_s: float = 0.01
) -> int:
    """Block until ``stream`` holds ``count`` entries or the timeout passes; the length."""
    deadline = time.monotonic() + timeout_s
    length = 0
    while time.monotonic() < deadline:
        length = int(client.xlen(stream))
        if length >= count:
            return length
        time.sleep(poll_s)
    return length


def entries(client: redis.Redis, stream: str) -> list[tuple[str, dict[str, str]]]:
    """Every entry of ``stream`` as (id, fields) in text, oldest first."""
    raw = cast(list[tuple[bytes, dict[bytes, bytes]]], client.xrange(stream))
    return [(i.decode(), {k.decode(): v.decode() for k, v in f.items()}) for i, f in raw]
