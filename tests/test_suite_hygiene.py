"""The suite's own hygiene: a run's Redis databases are its own, and no process outlives it.

Two runs of the suite on one machine (a second clone, CI beside a developer) each hold
their databases by a lease; the session ends by failing on any process it started that
is still alive (``tests/conftest.py``). These tests show both would catch what they are
for: a second run is handed another database, and an orphaned process is found.
"""

from __future__ import annotations

import os
import subprocess
import sys

import redis

from tests.processes import MARK, Leftover, leftovers, stop
from tests.redis_leases import LEASE_DB, LEASES, Leases, lease_key

ORPHAN = (
    "import subprocess, sys; "
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'], "
    "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
    "print(child.pid)"
)


def test_a_second_run_is_handed_another_database_and_its_lease_lapses_with_it(
    cli_redis_url: str,
) -> None:
    asked = os.environ.get("WINDAGS_TEST_REDIS_URL", "redis://127.0.0.1:6379/12")
    assert LEASES.database(asked) == cli_redis_url
    other = Leases(run_id="another-run-of-the-suite")
    try:
        theirs = other.database(asked)
        assert theirs != cli_redis_url
        assert other.database(asked) == theirs  # held, not claimed again
    finally:
        other.release()
    server, database = theirs.rsplit("/", 1)
    with redis.Redis.from_url(f"{server}/{LEASE_DB}") as leases:
        assert leases.get(lease_key(int(database))) is None
        assert leases.get(lease_key(int(cli_redis_url.rsplit("/", 1)[1]))) is not None


def test_an_orphan_the_run_started_is_found_even_without_the_mark() -> None:
    bare = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}  # no mark: found by descent
    done = subprocess.run(
        [sys.executable, "-c", ORPHAN], env=bare, capture_output=True, text=True, timeout=60
    )
    orphan = int(done.stdout)
    try:
        assert orphan in {p.pid for p in leftovers()}
    finally:
        stop([Leftover(orphan, "sleep")])
    assert orphan not in {p.pid for p in leftovers()}


def test_a_marked_process_in_a_session_of_its_own_is_found() -> None:
    assert os.environ[MARK]
    detached = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True
    )
    try:
        assert detached.pid in {p.pid for p in leftovers()}
    finally:
        detached.kill()
        detached.wait(timeout=10)
