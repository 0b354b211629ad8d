"""A worker's watch on its launcher (``workers/fleet/lifeline.py``), without Celery."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.infrastructure import wait_until
from workers.fleet.lifeline import LAUNCHER_PID_ENV, launcher_pid, stop_with_launcher

#: A deadline for an event, not a measure: generous, as a loaded machine needs.
ACTED_WITHIN_S = 60.0


def test_the_launcher_pid_is_read_only_when_it_is_a_pid() -> None:
    assert launcher_pid({LAUNCHER_PID_ENV: "4242"}) == 4242
    for raw in ("", "x", "-5", "1", "0"):
        assert launcher_pid({LAUNCHER_PID_ENV: raw}) is None
    assert launcher_pid({}) is None


def test_no_launcher_no_watch() -> None:
    assert stop_with_launcher({}) is None


def test_the_watch_acts_once_its_launcher_is_gone() -> None:
    launcher = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    gone = threading.Event()
    try:
        watch = stop_with_launcher(
            {LAUNCHER_PID_ENV: str(launcher.pid)}, on_gone=gone.set, every_s=0.05
        )
        assert watch is not None
        assert not gone.wait(0.3), "acted while the launcher ran"
    finally:
        launcher.kill()
        launcher.wait(timeout=10)
    assert gone.wait(ACTED_WITHIN_S)
    watch.join(timeout=ACTED_WITHIN_S)
    assert not watch.is_alive()


def test_a_launcher_gone_before_the_watch_starts_is_acted_on_at_once() -> None:
    launcher = subprocess.Popen([sys.executable, "-c", "pass"])
    launcher.wait(timeout=10)
    gone = threading.Event()
    stop_with_launcher({LAUNCHER_PID_ENV: str(launcher.pid)}, on_gone=gone.set, every_s=0.05)
    assert gone.wait(ACTED_WITHIN_S)


#: A worker stand-in: watches its launcher, writes the file named in argv[1] when it is gone.
_CHILD = """
import pathlib, sys, threading
from workers.fleet.lifeline import stop_with_launcher
done = threading.Event()
stop_with_launcher(on_gone=done.set, every_s=0.05)
if done.wait(90):  # longer than the test waits for it
    pathlib.Path(sys.argv[1]).write_text("gone")
"""

#: A launcher stand-in: starts the child with its own pid in the environment, then waits.
_LAUNCHER = """
import os, subprocess, sys, time
env = {**os.environ, "WINDAGS_LAUNCHER_PID": str(os.getpid())}
subprocess.Popen([sys.executable, "-c", sys.argv[1], sys.argv[2]], env=env, start_new_session=True)
print("started", flush=True)
time.sleep(60)
"""


def test_a_worker_notices_when_its_launcher_is_sigkilled(tmp_path: Path) -> None:
    """The direct-child case: its parent pid changes the moment the launcher dies."""
    mark = tmp_path / "gone"
    launcher = subprocess.Popen(
        [sys.executable, "-c", _LAUNCHER, _CHILD, str(mark)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert launcher.stdout is not None and launcher.stdout.readline() == "started\n"
        launcher.stdout.close()
        time.sleep(0.3)
        assert not mark.exists(), "acted while the launcher ran"
    finally:
        launcher.send_signal(signal.SIGKILL)
        launcher.wait(timeout=10)
    # The file exists a moment before its text is in it: wait for the text, not the file.
    assert wait_until(lambda: mark.exists() and mark.read_text() == "gone", ACTED_WITHIN_S, 0.05)
