"""A launcher killed with SIGKILL takes what it started with it, and no review is lost.

The launcher (``LocalFleet`` in a process of its own, as ``windags-eval fleet`` runs it)
is killed mid-run. Its workers, in sessions of their own, must be gone within 10 s, and
a new fleet on the same Redis must finish every review exactly once: what the dead
fleet's workers held went back to the queues (late acks, a warm shutdown). A launcher
that started its own redis-server leaves no process at all 10 s after its SIGKILL, and
the folders it made are gone once the next one starts.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis

from bench import common
from tests.faults.support import (
    count_stream,
    fleet_env,
    fresh_dag,
    mixed,
    private_redis,
    record,
    running_fleet,
    wait_quiet,
)
from tests.infrastructure import wait_until
from tests.processes import Leftover, alive, carrying, stop
from workers.client import ReviewClient
from workers.local.launcher import LocalFleet
from workers.local.redis_server import free_port
from workers.local.tether import tethered

pytestmark = [pytest.mark.integration, pytest.mark.slow]

REVIEWS = 300
GONE_WITHIN_S = 10.0


def _stat(pid: int) -> list[str] | None:
    """``/proc/<pid>/stat`` after the command name; None when there is no such process."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def _running_in(sessions: set[int]) -> list[int]:
    """Processes (zombies aside) of these sessions: a worker and what it started (beat).

    The launcher starts each worker in a session of its own, led by the worker.
    """
    found = []
    for entry in Path("/proc").iterdir():
        stat = _stat(int(entry.name)) if entry.name.isdigit() else None
        if stat is not None and stat[0] != "Z" and int(stat[3]) in sessions:
            found.append(int(entry.name))
    return found


def _launch(
    url: str, env: dict[str, str], log_dir: Path | None
) -> tuple[subprocess.Popen[bytes], dict[str, Any]]:
    """The launcher process and what it started (``launcher_process``), once ready.

    With no ``log_dir`` the launcher makes its own folders and, when nothing answers at
    ``url``, starts its own redis-server. It dies with the test run if that is killed.
    """
    folder = [] if log_dir is None else [str(log_dir)]
    launcher = tethered(
        [sys.executable, "-m", "tests.faults.launcher_process", url, *folder],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
    )
    assert launcher.stdout is not None
    line = launcher.stdout.readline()
    launcher.stdout.close()
    return launcher, json.loads(line) if line else {}


@pytest.mark.timeout(300)
def test_workers_stop_with_a_sigkilled_launcher_and_a_new_fleet_finishes_every_review(
    tmp_path: Path,
) -> None:
    env = fleet_env("ld")
    with private_redis() as server:
        settings = common.settings_for(server.url, env)
        db, client = redis.Redis.from_url(server.url), ReviewClient(settings)
        launcher, started = _launch(server.url, env, tmp_path)
        pids: dict[str, int] = started.get("workers", {})
        try:
            assert pids, "the launcher's fleet did not start"
            dag = fresh_dag("ld")
            keys = client.submit_many(mixed(dag, [f"n{i:04d}" for i in range(REVIEWS)]))
            # Mid-run: some reviews done, the rest queued or held by the workers.
            wait_until(lambda: count_stream(db, settings, dag).total >= REVIEWS // 10, 60, 0.05)
            done_at_kill = count_stream(db, settings, dag).total
            launcher.send_signal(signal.SIGKILL)
            launcher.wait(timeout=10)
            killed_at = time.monotonic()
            sessions = set(pids.values())
            gone = wait_until(lambda: not _running_in(sessions), GONE_WITHIN_S, 0.1)
            gone_s = time.monotonic() - killed_at
            survivors = _running_in(sessions)
        finally:
            if launcher.poll() is None:
                launcher.kill()
                launcher.wait(timeout=10)
            for pid in _running_in(set(pids.values())):  # the defect tested: leave none
                os.kill(pid, signal.SIGKILL)
        same_prefix = {"WINDAGS_KEY_PREFIX": env["WINDAGS_KEY_PREFIX"]}
        with running_fleet(server.url, "ld", extra=same_prefix):
            finished = wait_until(lambda: not count_stream(db, settings, dag).lost(keys), 120, 0.5)
            wait_quiet(db, settings)  # a stray redelivery would land before this
            counted = count_stream(db, settings, dag)
        client.close()
        db.close()
    record(
        "launcher_death",
        {
            "reviews": REVIEWS,
            "done_at_kill": done_at_kill,
            "workers_gone_s": round(gone_s, 1),
            "survivors": len(survivors),
            "lost": len(counted.lost(keys)),
            "duplicated": len(counted.duplicated()),
        },
    )
    assert gone, f"workers still running {GONE_WITHIN_S:.0f} s after the launcher died: {survivors}"
    assert finished, counted.lost(keys)[:5]
    assert counted.duplicated() == {}
    assert counted.total == REVIEWS


#: Names every process one launcher started: its environment carries the variable, and
#: whatever it starts inherits it.
LAUNCH_MARK = "EVALUATOR_LAUNCH_MARK"


@pytest.mark.timeout(180)
def test_a_sigkilled_launcher_with_its_own_redis_leaves_no_process_and_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``windags-eval fleet`` with no Redis to find: it starts its own, then is SIGKILLed.

    Its workers watch it (the lifeline), its redis-server gets the kernel's parent-death
    signal (``workers/local/tether.py``), and its two folders, which no dead process can
    remove, go when the next fleet starts (``workers/local/scratch.py``).
    """
    mark = uuid.uuid4().hex
    env = {**fleet_env("lr"), "TMPDIR": str(tmp_path), LAUNCH_MARK: mark}
    nobody = f"redis://127.0.0.1:{free_port()}/0"
    launcher, started = _launch(nobody, env, None)
    redis_pid = started.get("redis")

    def theirs() -> list[Leftover]:
        """What the launcher started, alive: by its mark, and its Redis by pid."""
        found = carrying(LAUNCH_MARK, mark)
        return found + (
            [Leftover(redis_pid, "redis-server")] if redis_pid and alive(redis_pid) else []
        )

    try:
        assert redis_pid, f"the launcher did not start its own Redis: {started}"
        running = theirs()
        folders = sorted(p.name for p in tmp_path.glob("windags-*"))
    finally:
        launcher.send_signal(signal.SIGKILL)
        launcher.wait(timeout=10)
    gone = wait_until(lambda: not theirs(), GONE_WITHIN_S, 0.1)
    left = theirs()
    stop(left)  # the defect tested: leave none
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    after = LocalFleet(nobody).log_dir  # the next start's first step makes its folder
    remaining = sorted(p.name for p in tmp_path.glob("windags-*") if p != after)
    shutil.rmtree(after)
    # The launcher, its three workers (and what they started), and its Redis.
    assert len(running) >= 5 and running[-1].pid == redis_pid, running
    assert [name.split("-")[1] for name in folders] == ["fleet", "redis"], folders
    assert gone, f"still running {GONE_WITHIN_S:.0f} s after the launcher's SIGKILL: {left}"
    assert remaining == [], f"the dead run's folders were not swept: {remaining}"
