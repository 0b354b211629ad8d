"""Each Procfile line starts a real process: workers answer Celery's own ping, the review
page answers HTTP."""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.console_script import stop
from tests.infrastructure import leased_database
from workers.fleet.app import create_app
from workers.fleet.lifeline import LAUNCHER_PID_ENV
from workers.fleet.queues import Queue
from workers.local.redis_server import free_port
from workers.settings import Settings

pytestmark = pytest.mark.integration
PROCFILE = Path(__file__).resolve().parents[2] / "Procfile"


def procfile_lines() -> dict[str, list[str]]:
    lines = [ln for ln in PROCFILE.read_text().splitlines() if ln.strip()]
    return {name.strip(): shlex.split(cmd) for name, _, cmd in (ln.partition(":") for ln in lines)}


def procfile_commands() -> dict[str, list[str]]:
    """The worker lines."""
    return {name: argv for name, argv in procfile_lines().items() if name != "review-ui"}


def test_the_procfile_has_one_line_per_worker_kind_and_the_review_page() -> None:
    assert sorted(procfile_commands()) == sorted(q.value for q in Queue)
    assert procfile_lines()["review-ui"][:2] == ["windags-eval", "review-ui"]


def test_the_review_page_line_serves_the_page(redis_url: str, tmp_path: Path) -> None:
    import urllib.request

    argv = procfile_lines()["review-ui"]
    at = argv.index("--port") + 1
    port = str(free_port())  # the Procfile's own port may be another test run's right now
    argv = [*argv[:at], port, *argv[at + 1 :]]
    env = {
        **os.environ,
        "WINDAGS_REDIS_URL": redis_url,
        "WINDAGS_KEY_PREFIX": "procfile-test",
        "WINDAGS_REVIEW_UI_TOKEN": "procfile-test-reviewer-token",
    }
    command = [sys.executable, "-m", "workers.local.cli", *argv[1:]]
    with (tmp_path / "review-ui.log").open("wb") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline, status = time.monotonic() + 30, 0
        while time.monotonic() < deadline and status != 200:
            assert process.poll() is None, (tmp_path / "review-ui.log").read_text()
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/login", timeout=2) as page:
                    status = page.status
            except OSError:
                time.sleep(0.2)
        assert status == 200
    finally:
        stop(process)


def test_every_procfile_line_starts_a_worker_that_answers_ping(
    redis_url: str, tmp_path: Path
) -> None:
    url = leased_database(redis_url.rsplit("/", 1)[0] + "/13")  # the Procfile's fixed names
    env = {**os.environ, "WINDAGS_REDIS_URL": url, "WINDAGS_KEY_PREFIX": "procfile-test"}
    env[LAUNCHER_PID_ENV] = str(os.getpid())  # a killed test run leaves no worker behind
    processes = {}
    for name, argv in procfile_commands().items():
        assert argv[0] == "celery"
        with (tmp_path / f"{name}.log").open("wb") as log:
            processes[name] = subprocess.Popen(
                [sys.executable, "-m", *argv],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
    # Broadcasts carry the key prefix too: only an app of the same deployment reaches them.
    app = create_app(Settings(redis_url=url, key_prefix="procfile-test"))
    wanted = {f"{name}@{socket.gethostname()}" for name in processes}
    answered: set[str] = set()
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not wanted <= answered:
            exited = {n: p.returncode for n, p in processes.items() if p.poll() is not None}
            assert not exited, f"workers exited: {exited}"
            replies = app.control.ping(destination=sorted(wanted), timeout=1.0)
            answered |= {name for reply in replies for name in reply}
    finally:
        for process in processes.values():
            os.killpg(process.pid, signal.SIGTERM)
        for process in processes.values():
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:  # never outlive the test
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        app.close()
    assert answered == wanted
